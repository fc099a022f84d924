package sandbox

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/reel-agent/reel/internal/ptytest"
)

// TestTerminalCommandTakesOnlyAFreeTerminal: sandbox-exec --tty makes the
// command's stdin its controlling terminal when that terminal is free (a
// persistent terminal's own PTY), in every mode; given a terminal another
// session holds as its controlling terminal — a user's, were reel's own
// stdin passed on — it refuses to start, in every mode (as root in
// danger-full-access, TIOCSCTTY would steal it).
func TestTerminalCommandTakesOnlyAFreeTerminal(t *testing.T) {
	requireLandlock(t)
	for _, mode := range allModes() {
		t.Run(string(mode)+"/free", func(t *testing.T) {
			_, slave, _ := ptytest.Open(t)
			f := newFixture(t)
			cmd, err := f.sb.TerminalCommand(mode, f.root)(t.Context(), `cut -d' ' -f7 /proc/self/stat`, f.root)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdin = slave
			cmd.Env = append(os.Environ(), helperEnv+"=1")
			res := run(t, cmd)
			if res.code != 0 || strings.TrimSpace(res.stdout) == "0" || strings.TrimSpace(res.stdout) == "" {
				t.Errorf("exit %d, tty_nr %q, stderr %q: want the PTY as the controlling terminal", res.code, res.stdout, res.stderr)
			}
		})
		t.Run(string(mode)+"/owned", func(t *testing.T) {
			_, slave, _ := ptytest.Open(t)
			holder := exec.Command("sleep", "1000")
			withTerminal(holder, slave)
			if err := holder.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
			f := newFixture(t)
			cmd, err := f.sb.TerminalCommand(mode, f.root)(t.Context(), `echo took it`, f.root)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdin = slave
			cmd.Env = append(os.Environ(), helperEnv+"=1")
			res := run(t, cmd)
			if res.code == 0 || strings.Contains(res.stdout, "took it") || !strings.Contains(res.stderr, "--tty: stdin is the controlling terminal of process") {
				t.Errorf("ESCAPE: exit %d, stdout %q, stderr %q: a terminal another session holds was taken", res.code, res.stdout, res.stderr)
			}
		})
	}
}
