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
		// A non-zero exit or a signal is reported in the text, not as an
		// error result: the command ran (the reference agent's rule).
		{name: "exit code", args: map[string]any{"command": "echo partial; exit 3"}, want: "partial\n[exit code 3]"},
		{name: "exit code without newline", args: map[string]any{"command": "printf x; exit 1"}, want: "x\n[exit code 1]"},
		{name: "exit code no output", args: map[string]any{"command": "false"}, want: "[exit code 1]"},
		{name: "killed by signal", args: map[string]any{"command": "kill -TERM $$"}, want: "[killed by signal 15 (terminated)]"},
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
	// A timeout is reported, not an error result (the reference's rule).
	if res.IsError || res.Text != "before\n[timed out after 200 ms]" {
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

func TestBashBackground(t *testing.T) {
	env, _ := jobEnv(t, 0)
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "echo BG_OUT; exit 4", "run_in_background": true}))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Text != "started background job bash-1" || res.SpillPath != "" {
		t.Fatalf("result %+v", res)
	}
	// A non-zero exit completes the job: the status says it, the model judges.
	if got := jobOutput(t, env, map[string]any{"job_id": "bash-1", "wait": true}); got.Text != "BG_OUT\n[status: completed, exit code: 4]" {
		t.Fatalf("job_output %q", got.Text)
	}
}

func TestBashBackgroundOutlivesContext(t *testing.T) {
	env, _ := jobEnv(t, 0)
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
	jobKill(t, env, "bash-1")
	waitGone(t, pid)
}

// plainOwner is a ProcessOwner that keeps no job table.
type plainOwner struct{}

func (plainOwner) Own(func()) func() { return func() {} }

// TestBashBackgroundWithoutJobTable: without a JobOwner there is nobody
// to read or stop a job, so none is started.
func TestBashBackgroundWithoutJobTable(t *testing.T) {
	env := newEnv(t)
	for _, owner := range []ProcessOwner{nil, plainOwner{}, &fakeOwner{}} {
		env.Owner = owner
		res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "touch ran", "run_in_background": true}))
		if err != nil || !res.IsError || !strings.Contains(res.Text, "background jobs unavailable") {
			t.Fatalf("owner %T: %+v %v", owner, res, err)
		}
	}
	if _, err := os.Stat(filepath.Join(env.Cwd, "ran")); err == nil {
		t.Fatal("a background command ran without a job table")
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
	// A long one keeps its head and tail and says why it was not saved.
	env.MaxInlineBytes = 1000
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "head -c 40000 /dev/zero | tr '\\0' y"}))
	if err != nil {
		t.Fatal(err)
	}
	preview, omitted, notice := spilledParts(t, res.Text)
	wantNotice := "The full formatted result (40000 bytes in total) was not stored: tools: creating spill directory " + env.SpillDir + ": "
	if !strings.HasPrefix(notice, wantNotice) || res.SpillPath != "" || preview != strings.Repeat("y", 40000-omitted) || len(res.Text) > 1000 {
		t.Fatalf("result %q (spill %q), want a notice starting %q", res.Text, res.SpillPath, wantNotice)
	}
	// A background job runs without one; a read that comes too late for
	// its output says why the whole of it was not kept.
	env.Owner = NewJobs(0, nil)
	if res, err := (Bash{}).Run(context.Background(), env, mustJSON(t, map[string]any{"command": "head -c 100000 /dev/zero | tr '\\0' y", "run_in_background": true})); err != nil || res.IsError {
		t.Fatalf("background bash with an unusable spill dir: %+v %v", res, err)
	}
	got := jobOutput(t, env, map[string]any{"job_id": "bash-1", "wait": true}).Text
	if want := "\n[some output was dropped from memory; full output: (unavailable: tools: creating spill directory " + env.SpillDir + ": "; !strings.Contains(got, want) ||
		!strings.HasSuffix(got, "]\n[status: completed, exit code: 0]") || !strings.HasPrefix(got, strings.Repeat("y", JobWindowBytes)+"\n") {
		t.Fatalf("job_output ends %q, want the window and a note containing %q", got[max(0, len(got)-300):], want)
	}
	for i := range MaxListEntries + 1 {
		writeFile(t, env.Cwd, fmt.Sprintf("d/%04d", i), "")
	}
	res, err = Glob{}.Run(context.Background(), env, mustJSON(t, map[string]any{"pattern": "d/*"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.SpillPath != "" || !strings.Contains(res.Text, "The complete result could not be saved") {
		t.Fatalf("note %q, spill %q", res.Text[strings.LastIndex(res.Text, "\n"):], res.SpillPath)
	}
}

func TestSpillDirDefaults(t *testing.T) {
	env := newEnv(t)
	env.SpillDir = "rel/spill"
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "head -c 60000 /dev/zero"}))
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

// TestBashBackgroundCap: a background job's output beyond its window is
// in a spill file capped like every spill file, and a read that lost
// output says what of it the file holds.
func TestBashBackgroundCap(t *testing.T) {
	env, _ := jobEnv(t, 0)
	const n = MaxSpillBytes + 12345
	startJob(t, env, bigOutput(n))
	got := jobOutput(t, env, map[string]any{"job_id": "bash-1", "wait": true}).Text
	spill := filepath.Join(env.SpillDir, "bash-1-stdout-1.log")
	want := joinLine(wantBig(n)[n-JobWindowBytes:], "") + fmt.Sprintf("[some output was dropped from memory; full output: %s (only its first %d bytes: the spill file cap of %d bytes was reached)]\n[status: completed, exit code: 0]", spill, MaxSpillBytes, MaxSpillBytes)
	if got != want {
		t.Errorf("job_output of %d bytes ends %q; want %d bytes ending %q", len(got), got[max(0, len(got)-300):], len(want), want[len(want)-300:])
	}
	if file := readFile(t, spill); file != wantBig(n)[:MaxSpillBytes] {
		t.Errorf("spill file of %d bytes, want the first %d of the output", len(file), MaxSpillBytes)
	}
}

// fakeOwner records the jobs bash hands it; it keeps a job table.
type fakeOwner struct {
	jobs     *Jobs
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

func (o *fakeOwner) Jobs() *Jobs                          { return o.jobs }
func (o *fakeOwner) JobSandbox(int, string, error) string { return "" }

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
	owner.jobs = NewJobs(0, nil)
	env.Owner = owner

	startJob(t, env, "(trap '' TERM; exec sleep 1000) & echo $! > pid; echo up; wait")
	<-owner.ownedCh
	pid := readPid(t, filepath.Join(env.Cwd, "pid"), nil)
	owner.stop(0)
	// stop returned: the job has ended, its output is complete, and the
	// rest of its process group was sent SIGKILL (without the supervisor,
	// which waits for the whole tree, bash cannot wait for its
	// grandchildren).
	waitGone(t, pid)
	if got := jobOutput(t, env, map[string]any{"job_id": "bash-1"}).Text; got != "up\n[status: killed, signal: SIGTERM]" {
		t.Errorf("job_output %q", got)
	}
	owner.stop(0) // again: nothing to do
	if owner.releases() != 0 {
		t.Errorf("a stopped job was released")
	}

	startJob(t, env, "echo quick")
	<-owner.ownedCh
	waitFor(t, "the quick job's release", func() bool { return owner.releases() == 1 })
	if got := jobOutput(t, env, map[string]any{"job_id": "bash-2"}).Text; got != "quick\n[status: completed, exit code: 0]" {
		t.Errorf("job_output %q", got)
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
	if res.IsError || res.Text != "before\n[timed out after 100 ms]" {
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
