package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
	awaitWarmWaiting(t, f.sb, warmKey{mode: WorkspaceWrite, root: f.root, tmp: f.tmp(), network: true})
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

// TestWorkdirInsideProtected: a command whose working directory is the
// workspace's .git (bash's workdir argument) cannot write there, cold or
// warm: the supervisor enters it through the read-only mounts.
func TestWorkdirInsideProtected(t *testing.T) {
	needLandlockT(t)
	for _, warm := range []bool{false, true} {
		t.Run(fmt.Sprintf("warm=%v", warm), func(t *testing.T) {
			f := newFixture(t)
			f.sb.warmOn = warm
			if err := os.Mkdir(filepath.Join(f.root, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			config := writeFile(t, filepath.Join(f.root, ".git"), "config", "orig\n")
			_, build := f.sb.Hooks(WorkspaceWrite, f.root)
			for i := range 3 {
				res, err := tools.Exec(t.Context(), build, tools.ExecSpec{Script: "echo pwn >> config",
					Workdir: filepath.Join(f.root, ".git"), Env: []string{helperEnv + "=1"}})
				if b, _ := os.ReadFile(config); string(b) != "orig\n" {
					t.Fatalf("ESCAPE: call %d wrote .git/config from inside .git: %q (%+v, %v)", i, b, res, err)
				}
			}
		})
	}
}

// awaitWarmWaiting waits (boundedly: this detects a warm supervisor that
// never comes, it times nothing) until sb holds a warm supervisor of key
// that is confined and waiting for its command (in ppoll on its socket).
func awaitWarmWaiting(t *testing.T, sb *Sandbox, key warmKey) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		sb.mu.Lock()
		w := sb.warms[key]
		sb.mu.Unlock()
		if w != nil {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(w.cmd.Process.Pid) + "/syscall")
			if strings.HasPrefix(string(b), strconv.Itoa(unix.SYS_PPOLL)+" ") {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no warm supervisor of %+v came to wait for its command", key)
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

// benchGap is the pause before each call of BenchmarkBashCall.
const benchGap = 30 * time.Millisecond

// BenchmarkBashCall times one `true` through the bash tool under the
// read-only sandbox with warm supervisors ("warm") and without ("cold"),
// against a bare exec.Command("bash", "-c", "true") ("bare"), alternating
// the three in every iteration so that load hits them alike. It reports
// each one's median wall time and children's CPU (user+system, from
// RUSAGE_CHILDREN: what the processes the call reaped used, a warm
// supervisor's start included) per call, and the warm/bare and cold/bare
// wall ratios. Calls are benchGap apart (not timed), as a model's turn
// separates them. The supervisor is REEL_BENCH_EXE (a built reel) when set,
// else this test binary.
func BenchmarkBashCall(b *testing.B) {
	exe := os.Getenv("REEL_BENCH_EXE")
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.Setenv(helperEnv, "1"); err != nil {
		b.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	warmSB := New(exe, TempRoot(b.TempDir()))
	warmSB.warmKeep = append(warmSB.warmKeep, helperEnv)
	coldSB := New(exe, TempRoot(b.TempDir()), WarmSupervisors(false))
	b.Cleanup(func() { _, _ = warmSB.Close(), coldSB.Close() })
	bashCall := func(sb *Sandbox) func() {
		_, build := sb.Hooks(ReadOnly, root)
		env := &tools.Env{Cwd: root, SpillDir: b.TempDir(), Exec: build}
		raw := []byte(`{"command":"true"}`)
		return func() {
			res, err := tools.Bash{}.Run(b.Context(), env, raw)
			if err != nil || res.IsError || res.Text != "(no output)" {
				b.Fatalf("bash: %+v, %v", res, err)
			}
		}
	}
	bare := func() {
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	kinds := []struct {
		name  string
		run   func()
		walls []time.Duration
		cpu   time.Duration
	}{{name: "bare", run: bare}, {name: "warm", run: bashCall(warmSB)}, {name: "cold", run: bashCall(coldSB)}}
	for i := range kinds {
		kinds[i].run() // the first call of a session pays the cold start
	}
	childCPU := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	n := 0
	// ns/op includes the gaps and means nothing here; see the metrics.
	for b.Loop() {
		for i := range kinds {
			// A model's turn lies between two calls: steady state, the
			// next warm supervisor has started.
			time.Sleep(benchGap)
			c0, t0 := childCPU(), time.Now()
			kinds[i].run()
			kinds[i].walls = append(kinds[i].walls, time.Since(t0))
			kinds[i].cpu += childCPU() - c0
		}
		n++
	}
	median := make([]float64, len(kinds))
	for i, k := range kinds {
		slices.Sort(k.walls)
		median[i] = float64(k.walls[len(k.walls)/2].Microseconds())
		b.ReportMetric(median[i], k.name+"-median-µs")
		b.ReportMetric(float64(k.cpu.Microseconds())/float64(n), k.name+"-cpu-µs/call")
	}
	b.ReportMetric(median[1]/median[0], "warm/bare")
	b.ReportMetric(median[2]/median[0], "cold/bare")
}
