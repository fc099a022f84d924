package acpcmd_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/internal/ptytest"
)

// tiocsti is a perl one-liner that opens path and pushes a byte into it as
// terminal input, printing PUSHED-<label> when the kernel took it.
func tiocsti(path, label string) string {
	return fmt.Sprintf(`perl -e 'open(my $t, "+<", "%s") or die "open: $!\n"; my $c = "x"; ioctl($t, 0x5412, $c) or die "ioctl: $!\n"; print "PUSHED-%s\n"' 2>&1; echo "(%s tried)"`, path, label, label)
}

// TestAttackNoTerminalInjection is finding 5 of the hardening issue: when
// reel has a controlling terminal (a user ran it from a shell), a confined
// bash call pushes keystrokes into that terminal with TIOCSTI and so runs
// commands in the user's shell. Through the real binary, with a real pty as
// reel's controlling terminal: the same push from this test process works
// (the attack is real), but from the model's bash — through /dev/tty or the
// terminal's /dev/pts path — it fails in both confining modes.
func TestAttackNoTerminalInjection(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	_, slave, ptsPath := ptytest.Open(t)
	control, err := exec.Command("bash", "-c", tiocsti(ptsPath, "control")).CombinedOutput()
	if err != nil || !strings.Contains(string(control), "PUSHED-control") {
		t.Fatalf("control: pushing into %s from the test failed (%v): %s — the attack is not real here", ptsPath, err, control)
	}
	for _, mode := range []string{"read-only", "workspace-write"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
				{ToolCalls: []standin.ToolCall{{ID: "tty", Name: "bash", Arguments: jsonArgs(t, map[string]any{
					"command": tiocsti("/dev/tty", "devtty") + "\n" + tiocsti(ptsPath, "pts")})}}},
				{Text: "done"},
			}})
			p := startProcWith(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-tty-test"), func(c *exec.Cmd) {
				c.ExtraFiles = []*os.File{slave}
				c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
			}, "acp", "--state-dir", filepath.Join(dir, "state"), "--mode", mode,
				"--provider", "deepseek", "--base-url", url, "--model", "standin")
			p.initialize()
			sid := p.newSession(ws)
			stop, frames := p.prompt(sid, "type into the terminal")
			if stop != "end_turn" {
				t.Fatalf("stopReason %q", stop)
			}
			got := toolResults(frames)["tty"]
			if !strings.Contains(got, "(devtty tried)") || !strings.Contains(got, "(pts tried)") {
				t.Fatalf("the attack did not run: %q", got)
			}
			if strings.Contains(got, "PUSHED-") {
				t.Errorf("ESCAPE: a confined command pushed input into reel's terminal:\n%s", got)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
		})
	}
}
