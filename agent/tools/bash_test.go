package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestBash(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "sub/marker.txt", "")
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		isError bool
	}{
		{name: "stdout", args: map[string]any{"command": "echo HELLO", "description": "Echo HELLO"}, want: "HELLO\n"},
		{name: "combined stderr", args: map[string]any{"command": "echo out; echo err >&2; echo out2"}, want: "out\nerr\nout2\n"},
		{name: "no output", args: map[string]any{"command": "true"}, want: "(no output)"},
		{name: "exit code", args: map[string]any{"command": "echo partial; exit 3"}, want: "partial\n[exit code 3]", isError: true},
		{name: "exit code without newline", args: map[string]any{"command": "printf x; exit 1"}, want: "x\n[exit code 1]", isError: true},
		{name: "exit code no output", args: map[string]any{"command": "false"}, want: "[exit code 1]", isError: true},
		{name: "killed by signal", args: map[string]any{"command": "kill -TERM $$"}, want: "[killed by signal 15 (terminated)]", isError: true},
		{name: "cwd", args: map[string]any{"command": "pwd"}, want: env.Cwd + "\n"},
		{name: "workdir", args: map[string]any{"command": "pwd; ls", "workdir": "sub"}, want: filepath.Join(env.Cwd, "sub") + "\nmarker.txt\n"},
		{name: "missing workdir", args: map[string]any{"command": "pwd", "workdir": "nope"}, want: "workdir: path not found: " + filepath.Join(env.Cwd, "nope"), isError: true},
		{name: "stdin is empty", args: map[string]any{"command": "cat; echo done"}, want: "done\n"},
		{name: "escalation args accepted", args: map[string]any{"command": "echo ok", "sandbox_permissions": "danger-full-access", "justification": "asked"}, want: "ok\n"},
		{name: "invalid utf-8 replaced", args: map[string]any{"command": `printf 'a\377b'`}, want: "a\uFFFDb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Bash{}.Run(context.Background(), env, mustJSON(t, tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tc.want || res.IsError != tc.isError {
				t.Fatalf("got %q (error %v), want %q (error %v)", res.Text, res.IsError, tc.want, tc.isError)
			}
			if res.Kind != KindExecute || res.SpillPath != "" {
				t.Fatalf("kind %q spill %q", res.Kind, res.SpillPath)
			}
		})
	}
	// Short outputs leave no file behind (nor a spill dir).
	if entries, err := os.ReadDir(env.SpillDir); (err != nil && !errors.Is(err, os.ErrNotExist)) || len(entries) != 0 {
		t.Fatalf("spill dir holds %v (%v)", entries, err)
	}
}

func TestBashTitle(t *testing.T) {
	tests := []struct {
		args BashArgs
		want string
	}{
		{BashArgs{Command: "ls", Description: "List files"}, "List files"},
		{BashArgs{Command: "  go test ./...\necho done"}, "go test ./..."},
		{BashArgs{Command: strings.Repeat("x", 150)}, strings.Repeat("x", 100) + "…"},
	}
	for _, tc := range tests {
		if got := describeBash(tc.args); got != tc.want {
			t.Errorf("describeBash(%+v) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// processGone reports whether pid no longer runs (it is gone or a zombie).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X")
}

// waitFor polls cond until it holds, failing only when the test binary's
// own deadline approaches. It asserts no duration.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline, ok := t.Deadline()
	for !cond() {
		if ok && time.Until(deadline) < 5*time.Second {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitGone waits until pid is gone: the kill happened.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("process %d to end", pid), func() bool { return processGone(pid) })
}

// readPid waits for the pid file a test script writes.
func readPid(t *testing.T, p string, done <-chan struct{}) int {
	t.Helper()
	for {
		b, err := os.ReadFile(p)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			return pid
		}
		select {
		case <-done:
			t.Fatalf("command ended before writing %s", p)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestBashTimeout(t *testing.T) {
	env := newEnv(t)
	// The grandchild sleeps far longer than any test run; only a kill of
	// the whole process group ends it.
	script := "echo before; sleep 1000 & echo $! > pid; wait"
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": script, "timeout": 200}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Text != "before\n[timed out after 200 ms]" {
		t.Fatalf("got %+v", res)
	}
	pid := readPid(t, filepath.Join(env.Cwd, "pid"), nil)
	waitGone(t, pid)
}

func TestBashCancel(t *testing.T) {
	env := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res Result
		err error
	}
	done := make(chan struct{})
	var got outcome
	go func() {
		defer close(done)
		got.res, got.err = Bash{}.Run(ctx, env, mustJSON(t, map[string]any{"command": "echo started; sleep 1000 & echo $! > pid; wait"}))
	}()
	pid := readPid(t, filepath.Join(env.Cwd, "pid"), done)
	cancel()
	<-done
	if !errors.Is(got.err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", got.err)
	}
	if !got.res.IsError || got.res.Text != "started\n[cancelled]" {
		t.Fatalf("result %+v", got.res)
	}
	waitGone(t, pid)

	if _, err := (Bash{}).Run(ctx, env, mustJSON(t, map[string]any{"command": "touch should-not-exist"})); !errors.Is(err, context.Canceled) {
		t.Fatalf("run with a done context: %v", err)
	}
	if _, err := os.Stat(filepath.Join(env.Cwd, "should-not-exist")); err == nil {
		t.Fatal("a command ran with a done context")
	}
}

func TestBashSpill(t *testing.T) {
	env := newEnv(t)
	const n = 20000
	var want strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	full := want.String()
	if len(full) <= MaxOutputBytes {
		t.Fatal("test output is too short to spill")
	}
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": fmt.Sprintf("seq 1 %d", n)}))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.SpillPath == "" || filepath.Dir(res.SpillPath) != env.SpillDir {
		t.Fatalf("result %+v", res)
	}
	if got := readFile(t, res.SpillPath); got != full {
		t.Fatalf("spill file holds %d bytes, want the whole %d", len(got), len(full))
	}
	note, tail, ok := strings.Cut(res.Text, "]\n")
	if !ok {
		t.Fatalf("no note in %q", res.Text[:100])
	}
	wantNote := fmt.Sprintf("[output cut: %d bytes in total, showing the last %d; the full output is saved to %s", len(full), MaxOutputBytes, res.SpillPath)
	if note != wantNote {
		t.Fatalf("note %q, want %q", note, wantNote)
	}
	if tail != full[len(full)-MaxOutputBytes:] {
		t.Fatal("text is not the tail of the output")
	}
}

func TestBashSpillFailingCommand(t *testing.T) {
	env := newEnv(t)
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "head -c 40000 /dev/zero | tr '\\0' 'y'; exit 2"}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.HasSuffix(res.Text, strings.Repeat("y", 100)+"\n[exit code 2]") {
		t.Fatalf("text ends %q", res.Text[len(res.Text)-40:])
	}
	if got := readFile(t, res.SpillPath); got != strings.Repeat("y", 40000) {
		t.Fatalf("spill file holds %d bytes", len(got))
	}
}

func TestBashTailRuneBoundary(t *testing.T) {
	env := newEnv(t)
	// 3-byte runes whose count puts a rune across the cut.
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "for i in $(seq 1 10001); do printf '€'; done"}))
	if err != nil {
		t.Fatal(err)
	}
	_, tail, _ := strings.Cut(res.Text, "]\n")
	if tail != strings.Repeat("€", MaxOutputBytes/3) {
		t.Fatalf("tail has %d bytes and is not whole runes", len(tail))
	}
}

func TestBashBackground(t *testing.T) {
	env := newEnv(t)
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "echo BG_OUT; exit 4", "run_in_background": true}))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.SpillPath == "" || !strings.Contains(res.Text, "pid ") || !strings.Contains(res.Text, res.SpillPath) {
		t.Fatalf("result %+v", res)
	}
	// The reaper appends the exit status when the command ends.
	waitFor(t, "the background command's exit status", func() bool {
		return strings.Contains(readFile(t, res.SpillPath), "[exit code")
	})
	if out := readFile(t, res.SpillPath); out != "BG_OUT\n\n[exit code 4]\n" {
		t.Fatalf("background output %q", out)
	}
}

func TestBashBackgroundOutlivesContext(t *testing.T) {
	env := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	res, err := Bash{}.Run(ctx, env, mustJSON(t, map[string]any{"command": "sleep 1000 & echo $! > pid; wait", "run_in_background": true}))
	if err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	pid := readPid(t, filepath.Join(env.Cwd, "pid"), nil)
	cancel()
	if processGone(pid) {
		t.Fatal("cancelling the turn's context killed a background command")
	}
}

func TestBashExecHook(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "w/f", "")
	var gotScript, gotDir string
	env.Exec = func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
		gotScript, gotDir = script, workdir
		return exec.CommandContext(ctx, "bash", "-c", "echo WRAPPED; "+script), nil
	}
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "pwd", "workdir": "w"}))
	if err != nil {
		t.Fatal(err)
	}
	wantDir := filepath.Join(env.Cwd, "w")
	if res.Text != "WRAPPED\n"+wantDir+"\n" || gotScript != "pwd" || gotDir != wantDir {
		t.Fatalf("text %q script %q dir %q", res.Text, gotScript, gotDir)
	}

	denial := "sandbox: mode read-only cannot run this [reel-sandbox-denied]"
	env.Exec = func(context.Context, string, string) (*exec.Cmd, error) { return nil, errors.New(denial) }
	res, err = Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "echo hi"}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Text != denial {
		t.Fatalf("got %+v, want the hook's error verbatim", res)
	}
	env.Exec = func(context.Context, string, string) (*exec.Cmd, error) { return nil, nil }
	if res, err := (Bash{}).Run(context.Background(), env, mustJSON(t, map[string]any{"command": "echo hi"})); err != nil || !res.IsError {
		t.Fatalf("nil command: %+v %v", res, err)
	}
}

func TestBashBadArgs(t *testing.T) {
	env := newEnv(t)
	for _, raw := range []string{`{}`, `{"command":""}`, `{"command":"ls","timeout":"x"}`, `[`} {
		if _, err := (Bash{}).Run(context.Background(), env, []byte(raw)); !errors.Is(err, ErrInvalidArgs) {
			t.Errorf("Run(%s) = %v, want ErrInvalidArgs", raw, err)
		}
	}
	if _, err := (Bash{}).Run(context.Background(), &Env{}, []byte(`{"command":"ls"}`)); !errors.Is(err, ErrEnv) {
		t.Errorf("Run with an empty Env = %v, want ErrEnv", err)
	}
}

func TestSpillDirUnusable(t *testing.T) {
	env := newEnv(t)
	env.SpillDir = writeFile(t, env.Cwd, "not-a-dir", "")
	// A short output needs no spill dir.
	if res, err := (Bash{}).Run(context.Background(), env, mustJSON(t, map[string]any{"command": "echo x"})); err != nil || res.Text != "x\n" {
		t.Fatalf("bash with an unusable spill dir: %+v %v", res, err)
	}
	// A long one keeps its tail and says why the rest was not saved.
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "head -c 40000 /dev/zero | tr '\\0' y"}))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("[output cut: 40000 bytes in total, showing the last %d; the full output was not saved: tools: creating spill directory %s: ", MaxOutputBytes, env.SpillDir)
	if !strings.HasPrefix(res.Text, want) || res.SpillPath != "" || !strings.HasSuffix(res.Text, "]\n"+strings.Repeat("y", MaxOutputBytes)) {
		t.Fatalf("result %q… (spill %q), want it to start %q", res.Text[:min(len(res.Text), 300)], res.SpillPath, want)
	}
	// A background job needs its file: the call fails.
	if _, err := (Bash{}).Run(context.Background(), env, mustJSON(t, map[string]any{"command": "echo x", "run_in_background": true})); err == nil || !strings.Contains(err.Error(), "spill directory") {
		t.Fatalf("background bash with an unusable spill dir: %v", err)
	}
	for i := range MaxListEntries + 1 {
		writeFile(t, env.Cwd, fmt.Sprintf("d/%04d", i), "")
	}
	res, err = Glob{}.Run(context.Background(), env, mustJSON(t, map[string]any{"pattern": "d/*"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.SpillPath != "" || !strings.Contains(res.Text, "The full list could not be saved") {
		t.Fatalf("note %q, spill %q", res.Text[strings.LastIndex(res.Text, "\n"):], res.SpillPath)
	}
}

func TestSpillDirDefaults(t *testing.T) {
	env := newEnv(t)
	env.SpillDir = "rel/spill"
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "head -c 40000 /dev/zero"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(env.Cwd, "rel", "spill"); filepath.Dir(res.SpillPath) != want {
		t.Fatalf("spill path %q, want it in %q", res.SpillPath, want)
	}
	env.SpillDir = ""
	if res, err := (Bash{}).Run(context.Background(), env, mustJSON(t, map[string]any{"command": "echo tmp"})); err != nil || res.Text != "tmp\n" {
		t.Fatalf("bash with the default spill dir: %+v %v", res, err)
	}
}

// bigOutput is a command printing n bytes: "0123456789\n" repeated.
func bigOutput(n int) string { return fmt.Sprintf("yes 0123456789 | head -c %d", n) }

// wantBig is the first n bytes bigOutput prints.
func wantBig(n int) string {
	return strings.Repeat("0123456789\n", n/11+1)[:n]
}

// TestBashSpillCaps: output beyond MaxOutputBytes is spilled, but a spill
// file keeps at most MaxSpillBytes and the session's budget; beyond that
// the output is counted and discarded, and the note says what was kept.
func TestBashSpillCaps(t *testing.T) {
	const big = 50 << 20
	cases := []struct {
		name     string
		budget   int64 // 0: none
		sizes    []int // outputs of successive calls
		kept     []int // bytes in each call's spill file (0: none)
		notes    []string
		used     int64
		leftover int // files in the spill dir at the end
	}{
		{
			name: "per-call cap", sizes: []int{big}, kept: []int{MaxSpillBytes},
			notes:    []string{fmt.Sprintf("only the first %d bytes are saved to %%s: the spill file cap of %d bytes was reached]", MaxSpillBytes, MaxSpillBytes)},
			leftover: 1,
		},
		{
			name: "session budget", budget: 100000, sizes: []int{80000, 80000, 80000}, kept: []int{80000, 20000, 0},
			notes: []string{
				"the full output is saved to %s]",
				"only the first 20000 bytes are saved to %s: the session's spill budget of 100000 bytes is used up]",
				"the full output was not saved: the session's spill budget of 100000 bytes is used up]",
			},
			used: 100000, leftover: 2,
		},
		{
			name: "budget and cap", budget: MaxSpillBytes + 5, sizes: []int{MaxSpillBytes + 1000, 40000}, kept: []int{MaxSpillBytes, 5},
			notes: []string{
				fmt.Sprintf("only the first %d bytes are saved to %%s: the spill file cap of %d bytes was reached]", MaxSpillBytes, MaxSpillBytes),
				fmt.Sprintf("only the first 5 bytes are saved to %%s: the session's spill budget of %d bytes is used up]", MaxSpillBytes+5),
			},
			used: MaxSpillBytes + 5, leftover: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			if tc.budget > 0 {
				env.Spill = NewSpillBudget(tc.budget)
			}
			for i, n := range tc.sizes {
				res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": bigOutput(n)}))
				if err != nil {
					t.Fatal(err)
				}
				note, tail, ok := strings.Cut(res.Text, "]\n")
				if !ok || res.IsError {
					t.Fatalf("call %d: result %q…", i, res.Text[:min(200, len(res.Text))])
				}
				want := fmt.Sprintf("[output cut: %d bytes in total, showing the last %d; ", n, MaxOutputBytes)
				if strings.Contains(tc.notes[i], "%s") {
					want += fmt.Sprintf(tc.notes[i], res.SpillPath)
				} else {
					want += tc.notes[i]
				}
				if note+"]" != want {
					t.Errorf("call %d: note %q, want %q", i, note+"]", want)
				}
				if full := wantBig(n); tail != full[len(full)-MaxOutputBytes:] {
					t.Errorf("call %d: the text is not the output's tail", i)
				}
				if tc.kept[i] == 0 {
					if res.SpillPath != "" {
						t.Errorf("call %d: spill path %q, want none", i, res.SpillPath)
					}
					continue
				}
				fi, err := os.Stat(res.SpillPath)
				if err != nil || fi.Size() != int64(tc.kept[i]) {
					t.Fatalf("call %d: spill file %v, %v; want %d bytes", i, fi, err, tc.kept[i])
				}
				if got := readFile(t, res.SpillPath); got != wantBig(n)[:tc.kept[i]] {
					t.Errorf("call %d: the spill file is not the output's head", i)
				}
			}
			if tc.budget > 0 && env.Spill.Used() != tc.used {
				t.Errorf("budget used %d, want %d", env.Spill.Used(), tc.used)
			}
			if entries, _ := os.ReadDir(env.SpillDir); len(entries) != tc.leftover {
				t.Errorf("spill dir holds %d files, want %d", len(entries), tc.leftover)
			}
		})
	}
}

// TestBashSpillDiskFull fills a tiny tmpfs: the write error stops spilling
// for that call with a clear note, the call still returns its tail, and
// later calls work.
func TestBashSpillDiskFull(t *testing.T) {
	env := newEnv(t)
	if err := os.MkdirAll(env.SpillDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", env.SpillDir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("!!! SKIPPED LOUDLY: cannot mount a tmpfs to fill (%v); the ENOSPC path is covered by TestSpillFileWriteError only", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(env.SpillDir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting the test tmpfs %s: %v", env.SpillDir, err)
		}
	})
	const n = 4 << 20
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": bigOutput(n) + "; exit 3"}))
	if err != nil {
		t.Fatal(err)
	}
	note, tail, _ := strings.Cut(res.Text, "]\n")
	if !strings.Contains(note, "bytes are saved to "+res.SpillPath+": writing it failed: ") || !strings.Contains(note, "no space left on device") {
		t.Errorf("note %q; want it to say the spill write failed with ENOSPC", note)
	}
	if full := wantBig(n); tail != full[len(full)-MaxOutputBytes:]+"\n[exit code 3]" || !res.IsError {
		t.Errorf("the text is not the output's tail and status: …%q", tail[max(0, len(tail)-40):])
	}
	if fi, err := os.Stat(res.SpillPath); err != nil || fi.Size() >= n {
		t.Errorf("spill file %v, %v", fi, err)
	}
	if err := os.Remove(res.SpillPath); err != nil {
		t.Fatal(err)
	}
	if res, err := (Bash{}).Run(context.Background(), env, mustJSON(t, map[string]any{"command": "echo later"})); err != nil || res.Text != "later\n" {
		t.Errorf("a later call: %+v %v", res, err)
	}
}

// TestBashBackgroundCap: a background job's output file is capped like a
// spill file, with a note before the exit status.
func TestBashBackgroundCap(t *testing.T) {
	env := newEnv(t)
	const n = MaxSpillBytes + 12345
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": bigOutput(n), "run_in_background": true}))
	if err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	waitFor(t, "the background command's exit status", func() bool {
		return strings.Contains(readFile(t, res.SpillPath), "[exit code")
	})
	got := readFile(t, res.SpillPath)
	want := wantBig(n)[:MaxSpillBytes] + fmt.Sprintf("\n[output cut: %d bytes in total, only the first %d are in this file: the spill file cap of %d bytes was reached]\n[exit code 0]\n", n, MaxSpillBytes, MaxSpillBytes)
	if got != want {
		t.Errorf("background file of %d bytes ends %q; want %d bytes ending %q", len(got), got[max(0, len(got)-200):], len(want), want[len(want)-200:])
	}
}

// fakeOwner records the jobs bash hands it.
type fakeOwner struct {
	mu       sync.Mutex
	stops    []func()
	released int
	ownedCh  chan struct{}
}

func newFakeOwner() *fakeOwner { return &fakeOwner{ownedCh: make(chan struct{}, 10)} }

func (o *fakeOwner) Own(stop func()) func() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stops = append(o.stops, stop)
	o.ownedCh <- struct{}{}
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.released++
	}
}

func (o *fakeOwner) stop(i int) {
	o.mu.Lock()
	stop := o.stops[i]
	o.mu.Unlock()
	stop()
}

func (o *fakeOwner) releases() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.released
}

// TestBashBackgroundOwner: bash hands every background job to Env.Owner;
// stop kills the job's tree (here, without the sandbox supervisor: its
// process group, including a child that ignores SIGTERM) and waits for
// it; a job that ends by itself is released.
func TestBashBackgroundOwner(t *testing.T) {
	env := newEnv(t)
	owner := newFakeOwner()
	env.Owner = owner

	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{
		"command": "(trap '' TERM; exec sleep 1000) & echo $! > pid; echo up; wait", "run_in_background": true}))
	if err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	<-owner.ownedCh
	pid := readPid(t, filepath.Join(env.Cwd, "pid"), nil)
	waitFor(t, "the job to start", func() bool { return strings.Contains(readFile(t, res.SpillPath), "up\n") })
	owner.stop(0)
	// stop returned: the job has ended, the file is complete, and the rest
	// of its process group was sent SIGKILL (without the supervisor, which
	// waits for the whole tree, bash cannot wait for its grandchildren).
	waitGone(t, pid)
	if out := readFile(t, res.SpillPath); out != "up\n\n[killed by signal 15 (terminated)]\n" {
		t.Errorf("output file %q", out)
	}
	owner.stop(0) // again: nothing to do
	if owner.releases() != 0 {
		t.Errorf("a stopped job was released")
	}

	res, err = Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "echo quick", "run_in_background": true}))
	if err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	<-owner.ownedCh
	waitFor(t, "the quick job's release", func() bool { return owner.releases() == 1 })
	if out := readFile(t, res.SpillPath); out != "quick\n\n[exit code 0]\n" {
		t.Errorf("output file %q", out)
	}
	owner.stop(1) // after the end: returns at once
}

// TestBashTimeoutIgnoringTERM: a command that ignores SIGTERM is killed
// after the grace period.
func TestBashTimeoutIgnoringTERM(t *testing.T) {
	env := newEnv(t)
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{
		"command": "trap '' TERM; sleep 1000 & echo $! > pid; echo before; wait", "timeout": 100}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Text != "before\n[timed out after 100 ms]" {
		t.Fatalf("got %+v", res)
	}
	waitGone(t, readPid(t, filepath.Join(env.Cwd, "pid"), nil))
}

// TestBashForegroundLeftovers: what a foreground call leaves running in
// its process group dies when the call ends.
func TestBashForegroundLeftovers(t *testing.T) {
	env := newEnv(t)
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "sleep 1000 & echo $! > pid; echo done"}))
	if err != nil || res.Text != "done\n" {
		t.Fatalf("%+v %v", res, err)
	}
	waitGone(t, readPid(t, filepath.Join(env.Cwd, "pid"), nil))
}
