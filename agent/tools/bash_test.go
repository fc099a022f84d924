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
	// Short outputs leave no file behind.
	if entries, err := os.ReadDir(env.SpillDir); err != nil || len(entries) != 0 {
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
	if _, err := (Bash{}).Run(context.Background(), env, mustJSON(t, map[string]any{"command": "echo x"})); err == nil || !strings.Contains(err.Error(), "spill directory") {
		t.Fatalf("bash with an unusable spill dir: %v", err)
	}
	for i := range MaxListEntries + 1 {
		writeFile(t, env.Cwd, fmt.Sprintf("d/%04d", i), "")
	}
	res, err := Glob{}.Run(context.Background(), env, mustJSON(t, map[string]any{"pattern": "d/*"}))
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
