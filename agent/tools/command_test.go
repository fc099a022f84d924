package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// execBound is the generous limit on how long an Exec that must not hang
// may take: far above killGrace and drainGrace, far below a hang.
const execBound = 20 * time.Second

// runExec runs spec with build, failing the test on an error or when it
// has not returned after execBound.
func runExec(t *testing.T, ctx context.Context, build CommandFunc, spec ExecSpec) ExecResult {
	t.Helper()
	type outcome struct {
		res ExecResult
		err error
	}
	out := make(chan outcome, 1)
	go func() {
		res, err := Exec(ctx, build, spec)
		out <- outcome{res, err}
	}()
	select {
	case got := <-out:
		if got.err != nil {
			t.Fatalf("Exec(%q): %v", spec.Script, got.err)
		}
		return got.res
	case <-time.After(execBound):
		t.Fatalf("Exec(%q) has not returned after %v", spec.Script, execBound)
		return ExecResult{}
	}
}

// ended returns a closed channel: for readPid after the command ended.
func ended() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func TestExec(t *testing.T) {
	t.Parallel()
	dir := realTempDir(t)
	writeFile(t, dir, "sub/marker.txt", "")
	path := os.Getenv("PATH")
	mib := []byte(strings.Repeat("a", 1<<20))
	tests := []struct {
		name           string
		spec           ExecSpec
		stdout, stderr string
		exited         bool
		code           int
	}{
		{name: "stdin reaches the command", spec: ExecSpec{Script: "cat", Stdin: []byte("line 1\nline 2")}, stdout: "line 1\nline 2", exited: true},
		{name: "no stdin is empty", spec: ExecSpec{Script: "cat; echo done"}, stdout: "done\n", exited: true},
		{name: "stdout and stderr apart", spec: ExecSpec{Script: "echo out; echo err >&2; echo out2; echo err2 >&2"}, stdout: "out\nout2\n", stderr: "err\nerr2\n", exited: true},
		{name: "exit 0", spec: ExecSpec{Script: "true"}, exited: true, code: 0},
		{name: "exit 1", spec: ExecSpec{Script: "false"}, exited: true, code: 1},
		{name: "exit 2", spec: ExecSpec{Script: "echo bad >&2; exit 2"}, stderr: "bad\n", exited: true, code: 2},
		{name: "exit 7", spec: ExecSpec{Script: "printf partial; exit 7"}, stdout: "partial", exited: true, code: 7},
		{name: "killed by a signal", spec: ExecSpec{Script: "echo before; kill -KILL $$"}, stdout: "before\n", exited: false, code: -1},
		{name: "workdir", spec: ExecSpec{Script: "pwd; ls", Workdir: filepath.Join(dir, "sub")}, stdout: filepath.Join(dir, "sub") + "\nmarker.txt\n", exited: true},
		{
			name: "env overrides and adds",
			spec: ExecSpec{
				Script: `printf '%s|%s' "$PATH" "$REEL_EXEC_ADDED"`,
				Env:    []string{"PATH=" + path + ":/reel-exec-marker", "REEL_EXEC_ADDED=yes"},
			},
			stdout: path + ":/reel-exec-marker|yes", exited: true,
		},
		{name: "invalid utf-8 kept", spec: ExecSpec{Script: `printf 'a\377b'`}, stdout: "a\xffb", exited: true},
		// Stdin the command does not read (all of it, or any) is no error.
		{name: "large stdin ignored", spec: ExecSpec{Script: "true", Stdin: mib}, exited: true},
		{name: "large stdin ignored, exit 3", spec: ExecSpec{Script: "exit 3", Stdin: mib}, exited: true, code: 3},
		{name: "large stdin partly read", spec: ExecSpec{Script: "head -c 5", Stdin: mib}, stdout: "aaaaa", exited: true},
		{name: "large stdin read whole", spec: ExecSpec{Script: "wc -c", Stdin: mib}, stdout: "1048576\n", exited: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := tc.spec
			if spec.Workdir == "" {
				spec.Workdir = dir
			}
			res := runExec(t, context.Background(), nil, spec)
			want := ExecResult{Exited: tc.exited, ExitCode: tc.code, Stdout: tc.stdout, Stderr: tc.stderr}
			if res != want {
				t.Fatalf("got %+v\nwant %+v", res, want)
			}
		})
	}
}

func TestExecOutputCut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name           string
		script         string
		max            int
		stdout, stderr string
		code           int
	}{
		{
			// The command goes on past the cut (it is not blocked by a
			// full pipe) and its exit code arrives.
			name:   "stdout cut, command not blocked",
			script: `head -c 3000000 /dev/zero | tr '\0' a; echo tail >&2; exit 4`,
			max:    1000,
			stdout: strings.Repeat("a", 1000) + "\n[… 2999000 more bytes of stdout not kept]",
			stderr: "tail\n",
			code:   4,
		},
		{
			name:   "stderr cut",
			script: `echo head; head -c 200000 /dev/zero | tr '\0' b >&2`,
			max:    10,
			stdout: "head\n",
			stderr: strings.Repeat("b", 10) + "\n[… 199990 more bytes of stderr not kept]",
		},
		{
			name:   "both cut",
			script: `printf 0123456789; printf abcdefghij >&2`,
			max:    4,
			stdout: "0123\n[… 6 more bytes of stdout not kept]",
			stderr: "abcd\n[… 6 more bytes of stderr not kept]",
		},
		{name: "exactly the limit", script: "printf abc", max: 3, stdout: "abc"},
		{name: "no rune cut in two", script: "printf 'ééé'", max: 5, stdout: "éé\n[… 2 more bytes of stdout not kept]"},
		{name: "no 3-byte rune cut in two", script: "printf '€€'", max: 4, stdout: "€\n[… 3 more bytes of stdout not kept]"},
		{
			name:   "default limit 1 MiB",
			script: "head -c 1048586 /dev/zero",
			stdout: strings.Repeat("\x00", 1<<20) + "\n[… 10 more bytes of stdout not kept]",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := runExec(t, context.Background(), nil, ExecSpec{Script: tc.script, Workdir: dir, MaxOutput: tc.max})
			want := ExecResult{Exited: true, ExitCode: tc.code, Stdout: tc.stdout, Stderr: tc.stderr}
			if res != want {
				t.Fatalf("got %s\nwant %s", shortResult(res), shortResult(want))
			}
		})
	}
}

// shortResult renders r with long outputs shortened to their ends.
func shortResult(r ExecResult) string {
	short := func(s string) string {
		if len(s) <= 200 {
			return s
		}
		return s[:80] + "…" + s[len(s)-80:]
	}
	r.Stdout, r.Stderr = short(r.Stdout), short(r.Stderr)
	return fmt.Sprintf("{Exited:%v ExitCode:%d Stdout:%q Stderr:%q TimedOut:%v Cancelled:%v}",
		r.Exited, r.ExitCode, r.Stdout, r.Stderr, r.TimedOut, r.Cancelled)
}

func TestKeptOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{name: "nothing", limit: 4, want: ""},
		{name: "fits over writes", limit: 4, writes: []string{"ab", "cd"}, want: "abcd"},
		{name: "cut in the second write", limit: 3, writes: []string{"ab", "cd", "ef"}, want: "abc\n[… 3 more bytes of out not kept]"},
		{name: "cut inside a rune over writes", limit: 4, writes: []string{"a", "€"[:1], "€"[1:], "bc"}, want: "a€\n[… 2 more bytes of out not kept]"},
		{name: "cut inside a rune", limit: 3, writes: []string{"a€b"}, want: "a\n[… 4 more bytes of out not kept]"},
		{name: "invalid bytes kept at the cut", limit: 2, writes: []string{"a\xff\xfe"}, want: "a\xff\n[… 1 more bytes of out not kept]"},
	}
	for _, tc := range tests {
		k := &keptOutput{name: "out", limit: tc.limit}
		total := 0
		for _, w := range tc.writes {
			n, err := k.Write([]byte(w))
			if n != len(w) || err != nil {
				t.Fatalf("%s: Write(%q) = %d, %v", tc.name, w, n, err)
			}
			total += n
		}
		if got := k.String(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		if len(k.buf) > tc.limit || int64(len(k.buf))+k.dropped != int64(total) {
			t.Errorf("%s: kept %d, dropped %d of %d", tc.name, len(k.buf), k.dropped, total)
		}
	}
}

func TestMergeEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		base, extra, wantV []string
	}{
		{name: "nothing extra", base: []string{"A=1"}, wantV: []string{"A=1"}},
		{name: "added", base: []string{"A=1"}, extra: []string{"B=2"}, wantV: []string{"A=1", "B=2"}},
		{name: "replaced in place", base: []string{"A=1", "B=2", "C=3"}, extra: []string{"B=x"}, wantV: []string{"A=1", "B=x", "C=3"}},
		{name: "empty value replaces", base: []string{"A=1"}, extra: []string{"A="}, wantV: []string{"A="}},
		{name: "prefix is another key", base: []string{"AB=1"}, extra: []string{"A=2"}, wantV: []string{"AB=1", "A=2"}},
		{name: "extra repeats a key", base: nil, extra: []string{"A=1", "A=2"}, wantV: []string{"A=2"}},
		{name: "base repeats a key: the last is replaced", base: []string{"A=1", "A=2"}, extra: []string{"A=3"}, wantV: []string{"A=1", "A=3"}},
	}
	for _, tc := range tests {
		base := slices.Clone(tc.base)
		got := mergeEnv(tc.base, tc.extra)
		if !slices.Equal(got, tc.wantV) {
			t.Errorf("%s: mergeEnv(%q, %q) = %q, want %q", tc.name, tc.base, tc.extra, got, tc.wantV)
		}
		if !slices.Equal(base, tc.base) {
			t.Errorf("%s: base changed to %q", tc.name, tc.base)
		}
	}
}

func TestExecBuild(t *testing.T) {
	t.Parallel()
	dir := realTempDir(t)
	t.Run("gets script and absolute workdir", func(t *testing.T) {
		t.Parallel()
		var gotScript, gotDir string
		build := func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
			gotScript, gotDir = script, workdir
			return exec.Command("bash", "-c", "echo wrapped; "+script), nil
		}
		res := runExec(t, context.Background(), build, ExecSpec{Script: "pwd", Workdir: dir})
		if gotScript != "pwd" || gotDir != dir {
			t.Fatalf("build got %q in %q", gotScript, gotDir)
		}
		if want := (ExecResult{Exited: true, Stdout: "wrapped\n" + dir + "\n"}); res != want {
			t.Fatalf("got %+v, want %+v", res, want)
		}
	})
	t.Run("its Env is the base", func(t *testing.T) {
		t.Parallel()
		build := func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
			cmd := exec.Command("bash", "-c", script)
			cmd.Env = []string{"A=1", "B=2"}
			return cmd, nil
		}
		res := runExec(t, context.Background(), build, ExecSpec{
			Script:  `printf '%s|%s|%s|%s' "$A" "$B" "$C" "${HOME-unset}"`,
			Workdir: dir,
			Env:     []string{"B=3", "C=4"},
		})
		if want := (ExecResult{Exited: true, Stdout: "1|3|4|unset"}); res != want {
			t.Fatalf("got %+v, want %+v", res, want)
		}
	})
	errRefused := errors.New("sandbox refused")
	tests := []struct {
		name   string
		build  CommandFunc
		is     error
		substr string
	}{
		{
			name:   "build error",
			build:  func(context.Context, string, string) (*exec.Cmd, error) { return nil, errRefused },
			is:     errRefused,
			substr: "building the command: sandbox refused",
		},
		{
			name:   "no command",
			build:  func(context.Context, string, string) (*exec.Cmd, error) { return nil, nil },
			substr: "returned no command",
		},
		{
			name: "start fails",
			build: func(context.Context, string, string) (*exec.Cmd, error) {
				return exec.Command(filepath.Join(dir, "no-such-binary")), nil
			},
			is:     fs.ErrNotExist,
			substr: "starting: ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Exec(context.Background(), tc.build, ExecSpec{Script: "echo hi", Workdir: dir})
			if err == nil {
				t.Fatalf("no error; result %+v", res)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			for _, s := range []string{tc.substr, `"echo hi"`, dir} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if res != (ExecResult{}) {
				t.Errorf("result %+v with the error", res)
			}
		})
	}
}

func TestExecNotStarted(t *testing.T) {
	t.Parallel()
	dir := realTempDir(t)
	file := writeFile(t, dir, "file", "")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		workdir string
		is      error
		substr  string
	}{
		{name: "missing workdir", ctx: context.Background(), workdir: filepath.Join(dir, "nope"), is: fs.ErrNotExist, substr: filepath.Join(dir, "nope")},
		{name: "workdir is a file", ctx: context.Background(), workdir: file, is: syscall.ENOTDIR, substr: file},
		{name: "ctx already done", ctx: cancelled, workdir: dir, is: context.Canceled, substr: "not started"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(t.TempDir(), "ran")
			res, err := Exec(tc.ctx, nil, ExecSpec{Script: "touch " + marker, Workdir: tc.workdir})
			if err == nil || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.substr) {
				t.Fatalf("error %v, want one that is %v and says %q", err, tc.is, tc.substr)
			}
			if res != (ExecResult{}) {
				t.Errorf("result %+v with the error", res)
			}
			if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the command ran (%v)", err)
			}
		})
	}
}

func TestExecTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name   string
		script string
		build  CommandFunc
	}{
		{name: "sleep", script: "sleep 300 & echo $! > pid; echo started; sleep 30"},
		// SIGTERM is ignored (by the shell and so by its children): the
		// group is killed with SIGKILL after killGrace.
		{name: "TERM ignored", script: "trap '' TERM; sleep 300 & echo $! > pid; echo started; sleep 30"},
		// exec.CommandContext's own cancel is replaced: the group ends,
		// not only the leader.
		{
			name:   "CommandContext build",
			script: "sleep 300 & echo $! > pid; echo started; sleep 30",
			build: func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
				return exec.CommandContext(ctx, "bash", "-c", script), nil
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wd := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if err := os.Mkdir(wd, 0o755); err != nil {
				t.Fatal(err)
			}
			res := runExec(t, context.Background(), tc.build, ExecSpec{Script: tc.script, Workdir: wd, Timeout: 300 * time.Millisecond})
			if want := (ExecResult{ExitCode: -1, Stdout: "started\n", TimedOut: true}); res != want {
				t.Fatalf("got %+v, want %+v", res, want)
			}
			waitGone(t, readPid(t, filepath.Join(wd, "pid"), ended()))
		})
	}
}

func TestExecCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res ExecResult
		err error
	}
	done := make(chan struct{})
	out := make(chan outcome, 1)
	go func() {
		defer close(done)
		// A timeout that does not fire: ctx ends it, and says so.
		res, err := Exec(ctx, nil, ExecSpec{Script: "sleep 300 & echo $! > child; echo $$ > pid; sleep 30", Workdir: dir, Timeout: time.Hour})
		out <- outcome{res, err}
	}()
	leader := readPid(t, filepath.Join(dir, "pid"), done)
	start := time.Now()
	cancel()
	<-done
	got := <-out
	if d := time.Since(start); d > execBound {
		t.Errorf("Exec returned %v after the cancel", d)
	}
	if got.err != nil {
		t.Fatal(got.err)
	}
	if want := (ExecResult{ExitCode: -1, Cancelled: true}); got.res != want {
		t.Fatalf("got %+v, want %+v", got.res, want)
	}
	waitGone(t, leader)
	waitGone(t, readPid(t, filepath.Join(dir, "child"), ended()))
}

func TestExecBackgroundChild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mib := []byte(strings.Repeat("x", 1<<20))
	// escape starts a child in a session of its own, which writes its pid
	// once it is there; waitPid waits for that, so the group kill after
	// the leader's exit cannot reach the child before it escaped.
	const (
		escape  = `setsid bash -c 'echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 300'`
		waitPid = "while [ ! -e pid ]; do sleep 0.01; done"
	)
	tests := []struct {
		name   string
		script string
		stdin  []byte
		// escaped: the child left the process group (setsid), so killing
		// the group does not end it: only drainGrace bounds the wait for
		// the pipe it holds. It is still running after Exec.
		escaped bool
	}{
		{name: "holds stdout", script: "sleep 300 & echo $! > pid; echo hi"},
		{name: "holds stderr", script: "sleep 300 >/dev/null & echo $! > pid; echo hi"},
		{name: "holds unread stdin", script: "exec 3<&0; sleep 300 <&3 >/dev/null 2>&1 & echo $! > pid; echo hi", stdin: mib},
		{name: "escaped, holds stdout and stderr", script: escape + " & " + waitPid + "; echo hi", escaped: true},
		{name: "escaped, holds unread stdin", script: "exec 3<&0; " + escape + " <&3 >/dev/null 2>&1 & " + waitPid + "; echo hi", stdin: mib, escaped: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wd := filepath.Join(dir, strings.NewReplacer(" ", "-", ",", "").Replace(tc.name))
			if err := os.Mkdir(wd, 0o755); err != nil {
				t.Fatal(err)
			}
			res := runExec(t, context.Background(), nil, ExecSpec{Script: tc.script, Workdir: wd, Stdin: tc.stdin})
			if want := (ExecResult{Exited: true, Stdout: "hi\n"}); res != want {
				t.Fatalf("got %+v, want %+v", res, want)
			}
			pid := readPid(t, filepath.Join(wd, "pid"), ended()) // its cleanup kills it
			if !tc.escaped {
				waitGone(t, pid)
			} else if processGone(pid) {
				t.Fatalf("the escaped child %d is gone: the test did not test the drain bound", pid)
			}
		})
	}
}

func BenchmarkExecTrue(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		res, err := Exec(context.Background(), nil, ExecSpec{Script: "true", Workdir: dir})
		if err != nil || !res.Exited || res.ExitCode != 0 {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}
