package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/internal/ptytest"
)

// escapeCase is an attempt by a command to change something outside the
// writable roots. Each is first run unconfined, where it must change
// something (so the attack is real), then under each confining mode, where
// it must change nothing.
type escapeCase struct {
	name   string
	script string
	// setup plants things in the fixture before the command runs.
	setup func(t *testing.T, f *fixture)
	// minABI is the Landlock ABI that confines the case (0: any).
	minABI int
}

// escapes returns the escape cases.
func escapes() []escapeCase {
	return []escapeCase{
		{name: "write", script: `echo pwn > "$OUT/victim"`},
		{name: "append", script: `echo pwn >> "$OUT/victim"`},
		{name: "create", script: `echo pwn > "$OUT/new"`},
		{name: "truncate", script: `truncate -s 0 "$OUT/victim"`, minABI: 3},
		{name: "dotdot", script: `echo pwn > "$REL/victim"`},
		{name: "planted symlink to file", script: `echo pwn > link`, setup: func(t *testing.T, f *fixture) {
			symlink(t, f.victim(), filepath.Join(f.root, "link"))
		}},
		{name: "planted symlink to dir", script: `echo pwn > linkdir/victim; echo pwn > linkdir/new`, setup: func(t *testing.T, f *fixture) {
			symlink(t, f.out, filepath.Join(f.root, "linkdir"))
		}},
		{name: "dangling symlink", script: `echo pwn > dangling`, setup: func(t *testing.T, f *fixture) {
			symlink(t, filepath.Join(f.out, "new"), filepath.Join(f.root, "dangling"))
		}},
		{name: "symlink made by the command", script: `ln -s "$OUT/victim" made; echo pwn > made`},
		{name: "hardlink into the workspace", script: `ln "$OUT/victim" hl; echo pwn >> hl`},
		{name: "hardlink into the temp dir", script: `ln "$OUT/victim" "$TMPDIR/hl"; echo pwn >> "$TMPDIR/hl"`},
		{name: "rename outside file into the workspace", script: `mv "$OUT/victim" moved; echo pwn >> moved`},
		{name: "rename workspace file over outside file", script: `echo pwn > f; mv f "$OUT/victim"`},
		{name: "rename workspace file out", script: `echo pwn > f; mv f "$OUT/new"`},
		{name: "rename within outside", script: `mv "$OUT/victim" "$OUT/renamed"`},
		{name: "delete", script: `rm -f "$OUT/victim"`},
		{name: "mkdir", script: `mkdir "$OUT/d"`},
		{name: "copy over", script: `echo pwn > f; cp f "$OUT/victim"`},
		{name: "tee", script: `echo pwn | tee "$OUT/victim"`},
		{name: "proc self root", script: `echo pwn > "/proc/self/root$OUT/victim"`},
		{name: "proc fd reopen", script: `exec 3<"$OUT/victim"; echo pwn > /proc/self/fd/3`},
		{name: "child process", script: `sh -c 'echo pwn > "$OUT/victim"'`},
		{name: "new session grandchild", script: `setsid -w sh -c 'sh -c "echo pwn > \"\$OUT/victim\""'`},
		{name: "perl", script: `perl -e 'open(my $f, ">", "$ENV{OUT}/victim") or die "open: $!\n"; print $f "pwn\n"; close($f) or die "close: $!\n"'`},
		{name: "temp dirs' parent", script: `echo pwn > "$TPARENT/escaped"`},
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestEscapesAreRealUnconfined(t *testing.T) {
	for _, tc := range escapes() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			// Make the sandbox temp dir exist, as it does in confined runs.
			if err := prepareTempDir(f.tmp()); err != nil {
				t.Fatal(err)
			}
			cmd := f.command(t, DangerFullAccess, tc.script)
			cmd.Env = append(cmd.Env, "TMPDIR="+f.tmp())
			before := f.outside(t, DangerFullAccess)
			res := run(t, cmd)
			if d := diffSnapshots(before, f.outside(t, DangerFullAccess)); len(d) == 0 {
				t.Errorf("unconfined, the escape changed nothing outside (exit %d, stderr %q): the case tests nothing", res.code, res.stderr)
			}
		})
	}
}

func TestEscapeSuite(t *testing.T) {
	abi := requireLandlock(t)
	t.Logf("Landlock ABI %d", abi)
	for _, mode := range []Mode{WorkspaceWrite, ReadOnly} {
		t.Run(string(mode), func(t *testing.T) {
			for _, tc := range escapes() {
				t.Run(tc.name, func(t *testing.T) {
					if abi < tc.minABI {
						t.Skipf("!!! PARTIAL ENFORCEMENT: Landlock ABI %d cannot confine this case (needs ABI %d); Describe reports it", abi, tc.minABI)
					}
					f := newFixture(t)
					if tc.setup != nil {
						tc.setup(t, f)
					}
					before := f.outside(t, mode)
					res := run(t, f.command(t, mode, tc.script))
					if d := diffSnapshots(before, f.outside(t, mode)); len(d) > 0 {
						t.Errorf("ESCAPE (exit %d, stderr %q):\n%s", res.code, res.stderr, strings.Join(d, "\n"))
					}
					checkVictim(t, f)
					if strings.Contains(res.stderr, UnavailableMarker) {
						t.Errorf("the sandbox was unavailable, not confining: %s", res.stderr)
					}
				})
			}
		})
	}
}

func TestReadOnlyWorkspaceIsNotWritable(t *testing.T) {
	requireLandlock(t)
	scripts := []string{
		`echo pwn > inside`,
		`echo pwn >> existing`,
		`truncate -s 0 existing`,
		`rm -f existing`,
		`mv existing renamed`,
		`mkdir sub`,
		`ln -s existing sl`,
		`echo pwn > "$TMPDIR/x"; echo pwn > "$TPARENT/x"`,
	}
	for _, script := range scripts {
		t.Run(script, func(t *testing.T) {
			f := newFixture(t)
			writeFile(t, f.root, "existing", "keep\n")
			before := f.outside(t, ReadOnly)
			res := run(t, f.command(t, ReadOnly, script))
			if d := diffSnapshots(before, f.outside(t, ReadOnly)); len(d) > 0 {
				t.Errorf("read-only wrote (exit %d, stderr %q):\n%s", res.code, res.stderr, strings.Join(d, "\n"))
			}
			if res.code == 0 {
				t.Errorf("exit 0; want the denial to fail the command (stderr %q)", res.stderr)
			}
			if got := Classify(res.code, res.stderr, ReadOnly); got != Denied {
				t.Errorf("Classify = %v, want denied (exit %d, stderr %q)", got, res.code, res.stderr)
			}
		})
	}
}

func TestWorkspaceWriteAllowsRootAndTemp(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	script := `set -e
test "$TMPDIR" = "` + f.tmp() + `"
echo one > inside
mkdir -p sub/deep
echo two > sub/deep/f
mv sub/deep/f sub/moved
ln sub/moved hard
ln -s sub/moved soft
echo three >> soft
truncate -s 3 inside
rm hard
echo four > "$TMPDIR/t"
mv "$TMPDIR/t" fromtmp
t=$(mktemp)
case "$t" in "$TMPDIR"/*) ;; *) echo "mktemp outside TMPDIR: $t" >&2; exit 1 ;; esac
echo five > "$t"
echo discard > /dev/null
head -c 4 /dev/zero > zeros
head -c 4 /dev/urandom > random
cat "$OUT/victim"
`
	res := run(t, f.command(t, WorkspaceWrite, script))
	if res.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.code, res.stderr)
	}
	if res.stdout != victimContent {
		t.Errorf("stdout %q, want the victim's content %q", res.stdout, victimContent)
	}
	want := map[string]string{
		"inside":    "one",
		"sub/moved": "two\nthree\n",
		"fromtmp":   "four\n",
		"zeros":     "\x00\x00\x00\x00",
	}
	for name, content := range want {
		b, err := os.ReadFile(filepath.Join(f.root, name))
		if err != nil || string(b) != content {
			t.Errorf("%s: %q, %v; want %q", name, b, err, content)
		}
	}
	if fi, err := os.Lstat(filepath.Join(f.root, "hard")); err == nil {
		t.Errorf("hard still exists: %v", fi.Mode())
	}
	checkVictim(t, f)
}

func TestReadOnlyCanReadAndExecute(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	writeFile(t, f.root, "readme", "hello\n")
	res := run(t, f.command(t, ReadOnly, `set -e; cat readme "$OUT/victim"; ls "$ROOT" >/dev/null; bash -c 'echo child'; echo x > /dev/null`))
	if res.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.code, res.stderr)
	}
	if want := "hello\n" + victimContent + "child\n"; res.stdout != want {
		t.Errorf("stdout %q, want %q", res.stdout, want)
	}
}

func TestDangerFullAccessIsNotConfined(t *testing.T) {
	f := newFixture(t)
	g, cmdFunc := f.sb.Hooks(DangerFullAccess, f.root)
	if cmdFunc == nil {
		t.Fatal("Hooks(danger-full-access) returned no CommandFunc; want bash under the supervisor")
	}
	if roots, err := g.WriteRoots(f.victim()); err != nil || roots != nil {
		t.Errorf("guard: %v, %v; want no confinement", roots, err)
	}
	// sandbox-exec itself applies no ruleset in this mode, even when
	// Landlock is (forced) unavailable.
	cmd := f.command(t, DangerFullAccess, `echo pwn > "$OUT/victim"`)
	cmd.Env = append(cmd.Env, ForceUnavailableEnv+"=1")
	if res := run(t, cmd); res.code != 0 {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
	if b, _ := os.ReadFile(f.victim()); string(b) != "pwn\n" {
		t.Errorf("victim %q, want the unconfined write", b)
	}
}

func TestFailsClosedWithoutLandlock(t *testing.T) {
	for _, mode := range []Mode{WorkspaceWrite, ReadOnly} {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			cmd := f.command(t, mode, `echo ran > "$ROOT/ran"; echo pwn > "$OUT/victim"`)
			cmd.Env = append(cmd.Env, ForceUnavailableEnv+"=1")
			res := run(t, cmd)
			if res.code != ExitUnavailable {
				t.Errorf("exit %d, want %d", res.code, ExitUnavailable)
			}
			line := "SANDBOX_UNAVAILABLE: Landlock is not available on this kernel; refusing to run unconfined in mode " + string(mode) + "\n"
			if res.stderr != line {
				t.Errorf("stderr %q, want %q", res.stderr, line)
			}
			if got := Classify(res.code, res.stderr, mode); got != Unavailable {
				t.Errorf("Classify = %v, want unavailable", got)
			}
			if _, err := os.Stat(filepath.Join(f.root, "ran")); err == nil {
				t.Error("the command ran")
			}
			checkVictim(t, f)
		})
	}
}

func TestDeniedWriteClassifiesAsDenied(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	res := run(t, f.command(t, WorkspaceWrite, `echo pwn > "$OUT/victim"`))
	if got := Classify(res.code, res.stderr, WorkspaceWrite); got != Denied {
		t.Errorf("Classify(%d, %q) = %v, want denied", res.code, res.stderr, got)
	}
	res = run(t, f.command(t, WorkspaceWrite, `echo fine > inside; exit 3`))
	if got := Classify(res.code, res.stderr, WorkspaceWrite); got != Failed {
		t.Errorf("Classify(%d, %q) = %v, want failed", res.code, res.stderr, got)
	}
}

// TestThroughBashTool runs the CommandFunc the way the agent does, through
// the bash tool (own process group, combined output, exit status text).
func TestThroughBashTool(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	_, run := f.sb.Hooks(WorkspaceWrite, f.root)
	env := &tools.Env{
		Cwd:      f.root,
		SpillDir: filepath.Join(f.tempRoot, "spill"),
		Exec: func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
			cmd, err := run(ctx, script, workdir)
			if err == nil {
				cmd.Env = append(os.Environ(), helperEnv+"=1", "OUT="+f.out)
			}
			return cmd, err
		},
	}
	res, err := tools.Bash{}.Run(t.Context(), env, json.RawMessage(`{"command": "echo ok > inside; echo pwn > \"$OUT/victim\""}`))
	if err != nil {
		t.Fatal(err)
	}
	// The command ran (and was denied a write): a result, not an error.
	if res.IsError || !strings.Contains(res.Text, "Permission denied") || !strings.Contains(res.Text, "[exit code 1]") {
		t.Errorf("result %q; want the denial and exit code 1", res.Text)
	}
	if got := Classify(1, res.Text, WorkspaceWrite); got != Denied {
		t.Errorf("Classify = %v, want denied", got)
	}
	if b, err := os.ReadFile(filepath.Join(f.root, "inside")); err != nil || string(b) != "ok\n" {
		t.Errorf("inside: %q, %v", b, err)
	}
	checkVictim(t, f)
}

// Process lifetime: every process a command starts ends with its call, its
// job, or the process holding the Sandbox.

// tokenEnv marks every process of one test's tree: the supervisor and all
// its descendants inherit it, so a scan of /proc finds the survivors.
const tokenEnv = "REEL_TREE_TOKEN"

// allModes returns the modes whose commands must all end with their call.
func allModes() []Mode { return []Mode{WorkspaceWrite, ReadOnly, DangerFullAccess} }

// treeToken returns a token unique to the test.
func treeToken(t *testing.T) string {
	return fmt.Sprintf("%d-%s", os.Getpid(), strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
}

// treeProcs lists the live processes (zombies excluded) whose environment
// holds tokenEnv=token.
func treeProcs(t *testing.T, token string) []string {
	t.Helper()
	want := []byte(tokenEnv + "=" + token)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Errorf("scanning /proc: %v", err) // may run off the test goroutine
		return nil
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(append([]byte{0}, env...), 0), append(append([]byte{0}, want...), 0)) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		st := string(stat)
		if fields := strings.Fields(st[strings.LastIndexByte(st, ')')+1:]); len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X") {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, e.Name()+": "+strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "))
	}
	return out
}

// noSurvivors fails the test when a process of the tree is alive.
func noSurvivors(t *testing.T, token, when string) {
	t.Helper()
	if procs := treeProcs(t, token); len(procs) > 0 {
		t.Errorf("SURVIVORS %s:\n%s", when, strings.Join(procs, "\n"))
		for _, p := range procs {
			pid, _ := strconv.Atoi(p[:strings.IndexByte(p, ':')])
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// waitNoSurvivors polls until the tree is gone, failing after a generous
// hang-detecting timeout.
func waitNoSurvivors(t *testing.T, token, when string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(treeProcs(t, token)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	noSurvivors(t, token, when)
}

// bashEnv is a tool environment running bash through the fixture's
// Sandbox in mode, every process marked with token.
func (f *fixture) bashEnv(t *testing.T, mode Mode, token string) *tools.Env {
	t.Helper()
	_, run := f.sb.Hooks(mode, f.root)
	return &tools.Env{
		Cwd:      f.root,
		SpillDir: t.TempDir(),
		Exec: func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
			var cmd *exec.Cmd
			if run != nil {
				c, err := run(ctx, script, workdir)
				if err != nil {
					return nil, err
				}
				cmd = c
			} else {
				cmd = exec.CommandContext(ctx, "bash", "-c", script)
			}
			cmd.Env = append(os.Environ(), helperEnv+"=1", tokenEnv+"="+token)
			return cmd, nil
		},
	}
}

// starter is a way a command leaves a process behind.
type starter struct{ name, script string }

// starters returns the ways a command leaves processes behind. Each prints
// "ready" on the pipe of a process substitution once its process is up
// (and then sleeps holding that pipe), so `read` returns only then.
func starters() []starter {
	return []starter{
		{"background child", `sh -c 'echo ready; exec sleep 1000' &`},
		{"setsid child", `setsid sh -c 'echo ready; exec sleep 1000' &`},
		{"double-forked daemon", `sh -c 'setsid sh -c "echo ready; exec sleep 1000" & exit 0' &`},
		{"child ignoring SIGTERM", `trap '' TERM; exec sh -c 'echo ready; exec sleep 1000'`},
	}
}

// startAll is a script starting every starter and waiting for each.
func startAll() string {
	var b strings.Builder
	for _, s := range starters() {
		fmt.Fprintf(&b, "read -r _ < <(%s)\n", s.script)
	}
	return b.String()
}

func runBash(t *testing.T, ctx context.Context, env *tools.Env, args map[string]any) (tools.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tools.Bash{}.Run(ctx, env, raw)
}

// TestLifetimeForeground: what a foreground call leaves running is dead
// when the call returns, in every mode.
func TestLifetimeForeground(t *testing.T) {
	requireLandlock(t)
	for _, mode := range allModes() {
		t.Run(string(mode), func(t *testing.T) {
			for _, s := range starters() {
				t.Run(s.name, func(t *testing.T) {
					f := newFixture(t)
					token := treeToken(t)
					res, err := runBash(t, t.Context(), f.bashEnv(t, mode, token), map[string]any{
						"command": "read -r _ < <(" + s.script + ")\necho started"})
					if err != nil || res.Text != "started\n" {
						t.Fatalf("result %+v, %v", res, err)
					}
					noSurvivors(t, token, "after the call returned")
				})
			}
		})
	}
}

// TestLifetimeInterrupted: cancel and timeout end the whole tree,
// including children in other sessions and children ignoring SIGTERM.
// The cases run in parallel (each with its own fixture and token): the
// three timeouts wait 3 s each.
func TestLifetimeInterrupted(t *testing.T) {
	requireLandlock(t)
	for _, mode := range allModes() {
		for _, how := range []string{"cancel", "timeout"} {
			t.Run(string(mode)+"/"+how, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t)
				token := treeToken(t)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				args := map[string]any{"command": startAll() + "echo up\nsleep 1000"}
				if how == "timeout" {
					args["timeout"] = 3000
				} else {
					go func() {
						// Cancel once every starter and the last sleep run.
						for ctx.Err() == nil {
							n := 0
							for _, p := range treeProcs(t, token) {
								if strings.Contains(p, ": sleep 1000") {
									n++
								}
							}
							if n == len(starters())+1 {
								cancel()
								return
							}
							time.Sleep(10 * time.Millisecond)
						}
					}()
				}
				res, err := runBash(t, ctx, f.bashEnv(t, mode, token), args)
				want := "up\n[cancelled]"
				if how == "timeout" {
					want = "up\n[timed out after 3000 ms]"
					if err != nil {
						t.Fatal(err)
					}
				} else if !errors.Is(err, context.Canceled) {
					t.Fatalf("error %v, want context.Canceled", err)
				}
				// A cancelled run is an error result; a timed-out one
				// is reported in the text (the command ran).
				if res.Text != want || res.IsError != (how == "cancel") {
					t.Errorf("result %+v, want %q", res, want)
				}
				noSurvivors(t, token, "after the "+how)
			})
		}
	}
}

// lifetimeOwner is a tools.ProcessOwner for the tests.
type lifetimeOwner struct {
	mu    sync.Mutex
	stops []func()
	jobs  *tools.Jobs
}

// Jobs implements tools.JobOwner.
func (o *lifetimeOwner) Jobs() *tools.Jobs { return o.jobs }

// JobSandbox implements tools.JobOwner: the tests judge no runner.
func (o *lifetimeOwner) JobSandbox(int, string, error) string { return "" }

func (o *lifetimeOwner) Own(stop func()) func() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stops = append(o.stops, stop)
	return func() {}
}

// TestLifetimeBackgroundStopped: a background job stopped by its owner is
// gone, tree and all, when stop returns.
func TestLifetimeBackgroundStopped(t *testing.T) {
	requireLandlock(t)
	for _, mode := range allModes() {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			token := treeToken(t)
			env := f.bashEnv(t, mode, token)
			owner := &lifetimeOwner{jobs: tools.NewJobs(0, nil)}
			env.Owner = owner
			res, err := runBash(t, t.Context(), env, map[string]any{"command": startAll() + "echo up\nsleep 1000", "run_in_background": true})
			if err != nil || res.IsError || !strings.Contains(res.Text, "started background job bash-1") {
				t.Fatalf("result %+v, %v", res, err)
			}
			read := func() string {
				out, err := tools.JobOutput{}.Run(t.Context(), env, json.RawMessage(`{"job_id":"bash-1"}`))
				if err != nil {
					t.Fatal(err)
				}
				return out.Text
			}
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(read(), "up") {
				if time.Now().After(deadline) {
					t.Fatal("the job did not come up")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if len(owner.stops) != 1 {
				t.Fatalf("the owner got %d jobs, want 1", len(owner.stops))
			}
			owner.stops[0]()
			noSurvivors(t, token, "after stop returned")
			if got := read(); got != "(no new output)\n[status: killed, signal: SIGTERM]" {
				t.Errorf("job_output after the stop: %q", got)
			}
		})
	}
}

// TestLifetimeParentKilled: when the process holding the Sandbox dies by
// SIGKILL, its supervisors see EOF on the liveness pipe and kill their
// trees.
func TestLifetimeParentKilled(t *testing.T) {
	requireLandlock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range allModes() {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			token := treeToken(t)
			parent := exec.Command(exe, "sandbox-test-parent", string(mode), f.root, f.tempRoot, startAll()+"echo up\nsleep 1000")
			parent.Env = append(os.Environ(), helperEnv+"=1", tokenEnv+"="+token)
			parent.Stderr = os.Stderr
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || !strings.HasSuffix(line, " up\n") {
				_ = parent.Process.Kill()
				t.Fatalf("parent said %q, %v", line, err)
			}
			if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = parent.Wait()
			waitNoSurvivors(t, token, "after the parent died by SIGKILL")
		})
	}
}

// TestSupervisorExitStatus: the caller sees the program's exit code, or
// the signal it died by, and nothing but 0, 1 and 2 reaches the program
// (the liveness pipe in particular).
func TestSupervisorExitStatus(t *testing.T) {
	requireLandlock(t)
	cases := []struct {
		script string
		code   int
		sig    syscall.Signal
		stdout string
	}{
		{script: `exit 7`, code: 7},
		{script: `echo fine`, code: 0, stdout: "fine\n"},
		{script: `kill -TERM $$`, sig: syscall.SIGTERM},
		{script: `kill -SEGV $$`, sig: syscall.SIGSEGV},
		{script: `kill -ABRT $$`, sig: syscall.SIGABRT},
		{script: `kill -KILL $$`, sig: syscall.SIGKILL},
		{script: `kill -PIPE $$`, sig: syscall.SIGPIPE},
		{script: `kill -USR1 $$`, sig: syscall.SIGUSR1},
		// ls's own directory is fd 3: nothing else was inherited.
		{script: `exec ls /proc/self/fd`, stdout: "0\n1\n2\n3\n"},
	}
	for _, mode := range allModes() {
		for _, tc := range cases {
			t.Run(string(mode)+"/"+tc.script, func(t *testing.T) {
				f := newFixture(t)
				cmd := f.command(t, mode, tc.script)
				cmd.ExtraFiles = append(cmd.ExtraFiles, os.Stdin) // an unrelated inherited fd
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				_ = runCommand(cmd)
				ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
				switch {
				case tc.sig != 0 && (!ws.Signaled() || ws.Signal() != tc.sig):
					t.Errorf("status %v, want killed by %v (stderr %q)", cmd.ProcessState, tc.sig, stderr.String())
				case tc.sig == 0 && (ws.Signaled() || ws.ExitStatus() != tc.code):
					t.Errorf("status %v, want exit %d (stderr %q)", cmd.ProcessState, tc.code, stderr.String())
				}
				if tc.stdout != "" && stdout.String() != tc.stdout {
					t.Errorf("stdout %q, want %q", stdout.String(), tc.stdout)
				}
			})
		}
	}
}

// withTerminal makes slave the controlling terminal of cmd, which starts a
// session of its own.
func withTerminal(cmd *exec.Cmd, slave *os.File) {
	cmd.ExtraFiles = append(cmd.ExtraFiles, slave)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 2 + len(cmd.ExtraFiles)}
}

// tiocsti is a perl script that opens path (mode "+<" or "<") and pushes a
// character into the terminal with TIOCSTI.
func tiocsti(open, path string) string {
	return fmt.Sprintf(`perl -e 'open(my $t, "%s", "%s") or die "open: $!\n"; my $c = "x"; ioctl($t, 0x5412, $c) or die "ioctl: $!\n"; print "pushed\n"'`, open, path)
}

// TestNoControllingTerminal: even when its caller has a controlling
// terminal, a command under the supervisor has none, so /dev/tty cannot be
// opened; and in the confining modes no ioctl (TIOCSTI) works on a
// terminal it opens by path.
func TestNoControllingTerminal(t *testing.T) {
	abi := requireLandlock(t)
	_, slave, slavePath := ptytest.Open(t)
	devTTY := tiocsti("+<", "/dev/tty")

	// The attack is real: a process of the terminal's session pushes.
	ctl := exec.Command("bash", "-c", devTTY)
	withTerminal(ctl, slave)
	if out, err := ctl.CombinedOutput(); err != nil || string(out) != "pushed\n" {
		t.Fatalf("control run with a controlling terminal: %q, %v; the test tests nothing", out, err)
	}

	for _, mode := range allModes() {
		t.Run(string(mode)+"/dev/tty", func(t *testing.T) {
			f := newFixture(t)
			cmd := f.command(t, mode, devTTY)
			withTerminal(cmd, slave)
			res := run(t, cmd)
			if res.code == 0 || !strings.HasPrefix(res.stderr, "open: ") || strings.Contains(res.stdout, "pushed") {
				t.Errorf("ESCAPE: exit %d, stdout %q, stderr %q; want open(/dev/tty) to fail", res.code, res.stdout, res.stderr)
			}
		})
		if mode == DangerFullAccess {
			continue
		}
		t.Run(string(mode)+"/slave path", func(t *testing.T) {
			if abi < 5 {
				t.Skipf("!!! PARTIAL ENFORCEMENT: Landlock ABI %d cannot deny ioctl on devices (needs ABI 5)", abi)
			}
			f := newFixture(t)
			cmd := f.command(t, mode, tiocsti("<", slavePath))
			withTerminal(cmd, slave)
			res := run(t, cmd)
			if res.code == 0 || !strings.HasPrefix(res.stderr, "ioctl: ") || strings.Contains(res.stdout, "pushed") {
				t.Errorf("ESCAPE: exit %d, stdout %q, stderr %q; want the ioctl refused", res.code, res.stdout, res.stderr)
			}
		})
	}
}

// TestNetwork: with Network(false), the confining modes deny TCP connect
// and bind; with the default, and in danger-full-access, both work.
func TestNetwork(t *testing.T) {
	abi := requireLandlock(t)
	if abi < minNetworkABI {
		t.Skipf("!!! PARTIAL ENFORCEMENT: Landlock ABI %d has no network rules; --network off fails closed (see TestDescribe)", abi)
	}
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	ln, err := lc.Listen(t.Context(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	scripts := map[string]string{
		"connect": fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && echo ok`, port),
		"bind":    `perl -MIO::Socket::INET -e 'IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0, Proto => "tcp") or die "bind: $!\n"; print "ok\n"'`,
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, network := range []bool{true, false} {
		for _, mode := range allModes() {
			for what, script := range scripts {
				t.Run(fmt.Sprintf("network %v/%s/%s", network, mode, what), func(t *testing.T) {
					f := newFixture(t)
					f.sb = New(exe, TempRoot(f.tempRoot), Network(network))
					f.sb.warmKeep = append(f.sb.warmKeep, helperEnv)
					defer f.sb.Close()
					res := run(t, f.command(t, mode, script))
					allowed := network || mode == DangerFullAccess
					switch {
					case allowed && (res.code != 0 || res.stdout != "ok\n"):
						t.Errorf("exit %d, stdout %q, stderr %q; want it to work", res.code, res.stdout, res.stderr)
					case !allowed && (res.code == 0 || !strings.Contains(res.stderr, "Permission denied")):
						t.Errorf("NETWORK ESCAPE: exit %d, stdout %q, stderr %q; want it denied", res.code, res.stdout, res.stderr)
					}
				})
			}
		}
	}
}

// TestConfinedHoldsNoCapability: a confined command holds no capability in
// any set — effective, permitted, inheritable, bounding or ambient — even
// when reel runs as root, so nothing it executes (a setuid or file-capability
// binary included) can gain one. The control is danger-full-access run as
// root, which keeps them: the check can see a capability when there is one.
func TestConfinedHoldsNoCapability(t *testing.T) {
	requireLandlock(t)
	const script = `grep '^Cap' /proc/self/status`
	for _, mode := range allModes() {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			res := run(t, f.command(t, mode, script))
			if res.code != 0 {
				t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
			}
			sets := strings.Split(strings.TrimSpace(res.stdout), "\n")
			if len(sets) != 5 {
				t.Fatalf("capability sets %q; want CapInh, CapPrm, CapEff, CapBnd and CapAmb", res.stdout)
			}
			held := []string{}
			for _, line := range sets {
				name, hex, _ := strings.Cut(line, ":")
				if strings.Trim(strings.TrimSpace(hex), "0") != "" {
					held = append(held, name)
				}
			}
			switch {
			case mode == DangerFullAccess && os.Geteuid() == 0:
				if !slices.Contains(held, "CapBnd") || !slices.Contains(held, "CapEff") {
					t.Fatalf("control: unconfined command run as root holds %v; want CapBnd and CapEff (the test tests nothing)", held)
				}
			case mode != DangerFullAccess && len(held) > 0:
				t.Errorf("ESCAPE: the confined command holds capabilities in %v:\n%s", held, res.stdout)
			}
		})
	}
}
