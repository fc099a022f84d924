package sandbox

import (
	"os"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/tools"
)

// warmExec runs script through the fixture's Sandbox in mode as the
// hooks do (tools.Exec: files on every stream, so a warm supervisor may
// take it) and returns its result. The script sees ROOT, OUT and
// helperEnv like f.command's.
func (f *fixture) warmExec(t *testing.T, mode Mode, script string) tools.ExecResult {
	t.Helper()
	_, build := f.sb.Hooks(mode, f.root)
	res, err := tools.Exec(t.Context(), build, tools.ExecSpec{Script: script, Workdir: f.root,
		Env: []string{helperEnv + "=1", "ROOT=" + f.root, "OUT=" + f.out}})
	if err != nil {
		t.Fatalf("Exec %q: %v", script, err)
	}
	return res
}

// supervisorLine is a script that prints its supervisor's command line
// and its own working directory and environment entry WARMTEST.
const supervisorLine = `tr '\0' ' ' < /proc/$PPID/cmdline; echo; pwd; echo "w=$WARMTEST"; echo "t=$TMPDIR"`

// TestWarmSupervisorTakesCommands: after a session's first command, the
// next ones run under a warm supervisor (its command line has
// --warm-fd) with the call's own directory, environment and streams, the
// mode's confinement, and the same exit statuses as a cold one.
func TestWarmSupervisorTakesCommands(t *testing.T) {
	needLandlockT(t)
	for _, mode := range allModes() {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			warmSeen := 0
			for i := range 6 {
				_, build := f.sb.Hooks(mode, f.root)
				res, err := tools.Exec(t.Context(), build, tools.ExecSpec{Script: supervisorLine, Workdir: f.out,
					Env: []string{helperEnv + "=1", "WARMTEST=" + string(rune('a'+i))}, Stdin: []byte("in")})
				if err != nil || !res.Exited || res.ExitCode != 0 {
					t.Fatalf("call %d: %+v, %v", i, res, err)
				}
				lines := strings.Split(res.Stdout, "\n")
				if len(lines) < 4 || lines[1] != f.out || lines[2] != "w="+string(rune('a'+i)) {
					t.Fatalf("call %d: stdout %q, want the supervisor line, %s, w=%c", i, res.Stdout, f.out, 'a'+i)
				}
				if mode == WorkspaceWrite && lines[3] != "t="+f.tmp() {
					t.Errorf("call %d: %s, want TMPDIR %s", i, lines[3], f.tmp())
				}
				if strings.Contains(lines[0], "--warm-fd") {
					warmSeen++
					if !strings.Contains(lines[0], "--mode "+string(mode)+" ") {
						t.Errorf("call %d in %s ran under %q", i, mode, lines[0])
					}
				}
			}
			if warmSeen == 0 {
				t.Errorf("no call of 6 ran under a warm supervisor")
			}
			// Statuses and confinement as a cold supervisor's.
			if res := f.warmExec(t, mode, "exit 7"); !res.Exited || res.ExitCode != 7 {
				t.Errorf("exit 7: %+v", res)
			}
			if res := f.warmExec(t, mode, "kill -TERM $$"); res.Exited {
				t.Errorf("kill -TERM $$: %+v, want killed by a signal", res)
			}
			res := f.warmExec(t, mode, `echo pwn > "$OUT/victim"`)
			got, _ := os.ReadFile(f.victim())
			if (mode == DangerFullAccess) != (string(got) == "pwn\n") {
				t.Errorf("%s: write outside the root: %+v, victim %q", mode, res, got)
			}
		})
	}
}

// TestWarmSupervisorStaleWorkspace: a protected path that appears after
// a workspace-write warm supervisor made the others read-only (say, an
// approved git init) must not be writable by the next command: the warm
// supervisor finds the workspace changed and the call starts cold.
func TestWarmSupervisorStaleWorkspace(t *testing.T) {
	needLandlockT(t)
	f := newFixture(t)
	for range 2 {
		if res := f.warmExec(t, WorkspaceWrite, "true"); res.ExitCode != 0 {
			t.Fatalf("%+v", res)
		}
	}
	// As an approved escalation would, outside the sandbox.
	if err := os.Mkdir(f.root+"/.git", 0o755); err != nil {
		t.Fatal(err)
	}
	res := f.warmExec(t, WorkspaceWrite, `echo x > "$ROOT/.git/config"; tr '\0' ' ' < /proc/$PPID/cmdline`)
	if _, err := os.Stat(f.root + "/.git/config"); err == nil {
		t.Fatalf("ESCAPE: .git/config written under %q: %+v", res.Stdout, res)
	}
	if strings.Contains(res.Stdout, "--warm-fd") {
		t.Errorf("a stale warm supervisor ran the command: %q", res.Stdout)
	}
}

// needLandlockT fails (under CI) or skips without Landlock.
func needLandlockT(t *testing.T) {
	t.Helper()
	if abi, err := Probe(); abi < 1 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Landlock unavailable under CI: %v", err)
		}
		t.Skipf("Landlock unavailable: %v", err)
	}
}
