package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// jobSession is a bare session whose message ids are "id".
func jobSession(t *testing.T) *Session {
	t.Helper()
	e := &Engine{cfg: Config{NewID: func() string { return "id" }}}
	s := &Session{eng: e, id: "s1", cwd: t.TempDir()}
	t.Cleanup(func() { s.jobs.stopAll() })
	return s
}

// jobEnvFor is the tool environment of s's calls under mode.
func jobEnvFor(s *Session, mode sandbox.Mode) *tools.Env {
	return &tools.Env{Cwd: s.cwd, Owner: s.jobs.owner(s, mode, false)}
}

// runTool runs a tool call, failing on a Go error or an error result.
func runTool(t *testing.T, env *tools.Env, tool tools.Tool, args map[string]any) string {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := tool.Run(context.Background(), env, raw)
	if err != nil || res.IsError {
		t.Fatalf("%s %v: %+v %v", tool.Name(), args, res, err)
	}
	return res.Text
}

// awaitNotices waits (boundedly) for n queued notices and returns them
// encoded. With n == 0 it looks for a while: a notice comes right after
// the end a read saw.
func awaitNotices(t *testing.T, s *Session, n int) []string {
	t.Helper()
	var got []string
	within := 10 * time.Second
	if n == 0 {
		n, within = 1, 300*time.Millisecond
	}
	deadline := time.Now().Add(within)
	for len(got) < n && time.Now().Before(deadline) {
		for _, m := range s.takeNotices() {
			b, _ := json.Marshal(m)
			got = append(got, string(b))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return got
}

// TestJobNotice: a job that ends unreported queues one notice for the next
// step, in the reference's words and source; a later read of the job
// does not take it back nor queue another, and a killed job queues none.
func TestJobNotice(t *testing.T) {
	s := jobSession(t)
	env := jobEnvFor(s, sandbox.WorkspaceWrite)
	if got := runTool(t, env, tools.Bash{}, map[string]any{"command": "true", "run_in_background": true}); got != "started background job bash-1" {
		t.Fatalf("start: %q", got)
	}
	want := `{"content":[{"type":"text","text":"background job bash-1 (bash: true) finished [status: completed, exit code: 0]. Read its output with job_output."}],` +
		`"source":{"kind":"plugin","plugin":"tool-jobs","form":"notice","summary":"bash true [status: completed, exit code: 0]"},"role":"user","id":"id"}`
	if got := awaitNotices(t, s, 1); len(got) != 1 || got[0] != want {
		t.Fatalf("notices %q, want [%s]", got, want)
	}
	if got := runTool(t, env, tools.JobOutput{}, map[string]any{"job_id": "bash-1", "wait": true}); got != "(no new output)\n[status: completed, exit code: 0]" {
		t.Errorf("job_output %q", got)
	}
	runTool(t, env, tools.Bash{}, map[string]any{"command": "sleep 1000", "run_in_background": true})
	if got := runTool(t, env, tools.JobKill{}, map[string]any{"job_id": "bash-2"}); got != "requested cancellation of job bash-2" {
		t.Errorf("job_kill %q", got)
	}
	runTool(t, env, tools.JobOutput{}, map[string]any{"job_id": "bash-2", "wait": true})
	if got := awaitNotices(t, s, 0); len(got) != 0 {
		t.Errorf("notices after the read and the kill: %q", got)
	}
}

// TestJobNoticeOnStop: narrowing the mode stops the jobs started under a
// wider one and, the session going on, their ends are notified; closing
// the session stops the rest and notifies nothing.
func TestJobNoticeOnStop(t *testing.T) {
	s := jobSession(t)
	wide, narrow := jobEnvFor(s, sandbox.DangerFullAccess), jobEnvFor(s, sandbox.ReadOnly)
	runTool(t, wide, tools.Bash{}, map[string]any{"command": "sleep 1000", "run_in_background": true})
	runTool(t, narrow, tools.Bash{}, map[string]any{"command": "sleep 1000", "run_in_background": true})
	if n := s.jobs.stopWiderThan(sandbox.WorkspaceWrite); n != 1 {
		t.Fatalf("stopped %d jobs, want the danger-full-access one", n)
	}
	got := awaitNotices(t, s, 1)
	if len(got) != 1 || !strings.Contains(got[0], "background job bash-1 (bash: sleep 1000) finished [status: killed, signal: SIGTERM].") {
		t.Fatalf("notices after narrowing %q", got)
	}
	if st := runTool(t, narrow, tools.JobOutput{}, map[string]any{"job_id": "bash-2"}); st != "(no new output)\n[status: running]" {
		t.Fatalf("the read-only job: %q", st)
	}
	if n := s.jobs.stopAll(); n != 1 {
		t.Fatalf("close stopped %d jobs, want 1", n)
	}
	if st := runTool(t, narrow, tools.JobOutput{}, map[string]any{"job_id": "bash-2"}); st != "(no new output)\n[status: killed, signal: SIGTERM]" {
		t.Errorf("after close: %q", st)
	}
	if got := awaitNotices(t, s, 0); len(got) != 0 {
		t.Errorf("notices after close %q", got)
	}
}

// TestJobSandbox: the sandbox's verdict on an ended job, the job_output
// equivalent of Annotate on a bash result.
func TestJobSandbox(t *testing.T) {
	runner := "[sandbox: the sandbox runner itself failed under read-only mode — the command did not run; this is a sandbox problem, not a command failure]"
	denied := sandbox.Marker(sandbox.ReadOnly) + " the sandbox blocked a write outside the writable roots; the command's other effects stand."
	for _, tc := range []struct {
		name     string
		mode     sandbox.Mode
		confined bool
		code     int
		stderr   string
		startErr error
		want     string
	}{
		{"spawn failed", sandbox.ReadOnly, true, -1, "", errors.New("fork/exec /x: no such file or directory"), runner},
		{"runner unavailable", sandbox.ReadOnly, true, sandbox.ExitUnavailable, sandbox.UnavailableMarker + ": Landlock is not available", nil, runner},
		{"denied", sandbox.ReadOnly, true, 1, "touch: cannot touch 'x': Permission denied", nil, denied},
		{"killed by a signal", sandbox.ReadOnly, true, -1, "Permission denied", nil, ""},
		{"succeeded", sandbox.ReadOnly, true, 0, "Permission denied", nil, ""},
		{"failed otherwise", sandbox.ReadOnly, true, 2, "no such file", nil, ""},
		{"unconfined spawn failure", sandbox.DangerFullAccess, false, -1, "", errors.New("bash: not found"), ""},
		{"unconfined exit 126", sandbox.DangerFullAccess, false, sandbox.ExitUnavailable, sandbox.UnavailableMarker, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := jobOwner{j: &jobs{}, mode: tc.mode, confined: tc.confined}
			if got := o.JobSandbox(tc.code, tc.stderr, tc.startErr); got != tc.want {
				t.Errorf("verdict %q, want %q", got, tc.want)
			}
		})
	}
}

// TestJobNoticeSummary: a long summary is cut as the reference cuts it,
// to 119 UTF-16 code units and an ellipsis.
func TestJobNoticeSummary(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"bash true [status: completed, exit code: 0]", "bash true [status: completed, exit code: 0]"},
		{strings.Repeat("a", 120), strings.Repeat("a", 120)},
		{strings.Repeat("a", 121), strings.Repeat("a", 119) + "…"},
		{strings.Repeat("😀", 70), strings.Repeat("😀", 59) + "…"},
	} {
		if got := boundSummary(tc.in); got != tc.want {
			t.Errorf("boundSummary(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
