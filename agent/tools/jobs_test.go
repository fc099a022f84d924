package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// doneLog records the done hook's calls.
type doneLog struct {
	mu   sync.Mutex
	ends []JobInfo
}

func (d *doneLog) add(i JobInfo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ends = append(d.ends, i)
}

func (d *doneLog) ids() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ids []string
	for _, i := range d.ends {
		ids = append(ids, i.ID)
	}
	return ids
}

// jobEnv is an Env whose Owner is a job table letting limit jobs run.
func jobEnv(t *testing.T, limit int) (*Env, *doneLog) {
	t.Helper()
	env := newEnv(t)
	d := &doneLog{}
	jobs := NewJobs(limit, d.add)
	env.Owner = jobs
	t.Cleanup(func() { killAll(jobs) })
	return env, d
}

// killAll stops a test's leftover jobs and waits for them.
func killAll(t *Jobs) {
	t.mu.Lock()
	recs := append([]*jobRecord(nil), t.order...)
	t.mu.Unlock()
	for _, r := range recs {
		t.halt(r)
		<-r.done
	}
}

// startJob starts command in the background and returns its job id.
func startJob(t *testing.T, env *Env, command string) string {
	t.Helper()
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": command, "run_in_background": true}))
	if err != nil || res.IsError || !strings.HasPrefix(res.Text, "started background job bash-") {
		t.Fatalf("starting %q: %+v %v", command, res, err)
	}
	return strings.TrimPrefix(res.Text, "started background job ")
}

// jobOutput calls job_output, failing on a Go error.
func jobOutput(t *testing.T, env *Env, args map[string]any) Result {
	t.Helper()
	res, err := JobOutput{}.Run(context.Background(), env, mustJSON(t, args))
	if err != nil {
		t.Fatalf("job_output %v: %v", args, err)
	}
	return res
}

// jobKill calls job_kill, failing on a Go error.
func jobKill(t *testing.T, env *Env, id string) Result {
	t.Helper()
	res, err := JobKill{}.Run(context.Background(), env, mustJSON(t, map[string]any{"job_id": id}))
	if err != nil {
		t.Fatalf("job_kill %s: %v", id, err)
	}
	return res
}

// readUntil reads job id without waiting until the reads put together
// contain want, and returns them put together.
func readUntil(t *testing.T, env *Env, id, want string) string {
	t.Helper()
	var all strings.Builder
	waitFor(t, fmt.Sprintf("%q from %s", want, id), func() bool {
		text := jobOutput(t, env, map[string]any{"job_id": id}).Text
		body, _ := cutStatus(text)
		if body != "(no new output)" {
			all.WriteString(body)
		}
		return strings.Contains(all.String(), want)
	})
	return all.String()
}

// cutStatus splits a job_output text into its body and status line. (A
// body's final newline cannot be told from the one job_output adds.)
func cutStatus(text string) (body, status string) {
	i := strings.LastIndex(text, "\n[status: ")
	if i < 0 {
		return text, ""
	}
	return text[:i], text[i+1:]
}

// TestJobLifecycle: a job's reads are incremental, stdout first and
// stderr under [stderr], each with the status at the time; a read with
// nothing new says so.
func TestJobLifecycle(t *testing.T) {
	env, done := jobEnv(t, 0)
	id := startJob(t, env, "echo one; while [ ! -e go ]; do sleep 0.01; done; echo two >&2; echo three")
	if id != "bash-1" {
		t.Fatalf("first job id %q", id)
	}
	if got := readUntil(t, env, id, "one"); got != "one" {
		t.Fatalf("first reads %q", got)
	}
	steps := []struct {
		name string
		do   func()
		args map[string]any
		want string
	}{
		{"nothing new while it runs", nil, map[string]any{"job_id": id}, "(no new output)\n[status: running]"},
		{"released, waited for", func() { writeFile(t, env.Cwd, "go", "") }, map[string]any{"job_id": id, "wait": true},
			"three\n[stderr]\ntwo\n[status: completed, exit code: 0]"},
		{"read again after the end", nil, map[string]any{"job_id": id}, "(no new output)\n[status: completed, exit code: 0]"},
		{"waited for after the end", nil, map[string]any{"job_id": id, "wait": true, "timeout_ms": 1}, "(no new output)\n[status: completed, exit code: 0]"},
	}
	for _, st := range steps {
		if st.do != nil {
			st.do()
		}
		res := jobOutput(t, env, st.args)
		if res.IsError || res.Text != st.want || res.Kind != KindRead || res.Title != "Read output from background job bash-1" {
			t.Errorf("%s: %+v, want text %q", st.name, res, st.want)
		}
	}
	if ids := done.ids(); len(ids) != 0 {
		t.Errorf("a job whose end a wait saw was reported again: %v", ids)
	}
	list, err := JobList{}.Run(context.Background(), env, nil)
	if err != nil || list.Text != "bash-1 [bash] completed — "+"echo one; while [ ! -e go ]; do sleep 0.01; done; echo two >&2; echo three" {
		t.Errorf("job_list %+v %v", list, err)
	}
}

// TestJobWait: a wait ends with the job, at its timeout (the job lives
// on), or when the call is cancelled (an error, the job lives on).
func TestJobWait(t *testing.T) {
	env, _ := jobEnv(t, 0)
	id := startJob(t, env, "sleep 1000")
	start := time.Now()
	if res := jobOutput(t, env, map[string]any{"job_id": id, "wait": true, "timeout_ms": 200}); res.Text != "(no new output)\n[status: running]" {
		t.Fatalf("timed-out wait %+v", res)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("the wait returned after %v, before its timeout", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := JobOutput{}.Run(ctx, env, mustJSON(t, map[string]any{"job_id": id, "wait": true, "timeout_ms": 60000}))
	if !errors.Is(err, context.Canceled) || !res.IsError || res.Text != "Error: wait aborted" {
		t.Fatalf("cancelled wait: %+v %v", res, err)
	}
	for _, bad := range []any{0, -5} {
		if res := jobOutput(t, env, map[string]any{"job_id": id, "wait": true, "timeout_ms": bad}); !res.IsError ||
			res.Text != fmt.Sprintf("Error: invalid wait timeout: expected a positive number of milliseconds, got %v", bad) {
			t.Errorf("timeout_ms %v: %+v", bad, res)
		}
	}
	if res := jobOutput(t, env, map[string]any{"job_id": id}); res.Text != "(no new output)\n[status: running]" {
		t.Fatalf("after the waits: %+v", res)
	}
}

// TestJobKill: job_kill ends the job's whole process group, a child that
// ignores SIGTERM too (by SIGKILL after the grace period); the job ends
// killed, and a second kill says it had.
func TestJobKill(t *testing.T) {
	for _, tc := range []struct {
		name, command, status string
	}{
		{"tree", "sleep 1000 & echo $! > pid1; sleep 1000 & echo $! > pid2; wait", "[status: killed, signal: SIGTERM]"},
		{"ignores SIGTERM", "trap '' TERM; sleep 1000 & echo $! > pid1; echo $$ > pid2; wait", "[status: killed, signal: SIGKILL]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, done := jobEnv(t, 0)
			id := startJob(t, env, tc.command)
			pids := []int{readPid(t, filepath.Join(env.Cwd, "pid1"), nil), readPid(t, filepath.Join(env.Cwd, "pid2"), nil)}
			if res := jobKill(t, env, id); res.IsError || res.Text != "requested cancellation of job "+id || res.Kind != KindExecute {
				t.Fatalf("job_kill %+v", res)
			}
			res := jobOutput(t, env, map[string]any{"job_id": id, "wait": true})
			if _, status := cutStatus(res.Text); status != tc.status {
				t.Errorf("after the kill: %q, want status %q", res.Text, tc.status)
			}
			for _, pid := range pids {
				// Killed with its group; an orphan is reaped a moment later.
				waitGone(t, pid)
			}
			if res := jobKill(t, env, id); res.IsError || res.Text != "job "+id+" had already finished "+tc.status {
				t.Errorf("second job_kill %+v", res)
			}
			if ids := done.ids(); len(ids) != 0 {
				t.Errorf("a killed job was reported: %v", ids)
			}
		})
	}
}

// TestJobLimit: at the limit a start is refused with the reference's
// words and uses up no id; a job's end frees its slot.
func TestJobLimit(t *testing.T) {
	env, _ := jobEnv(t, 2)
	startJob(t, env, "sleep 1000")
	startJob(t, env, "sleep 1000")
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "touch third", "run_in_background": true}))
	want := "Error: background job limit reached for this owner (limit: 2); use job_kill to stop an unneeded job, wait for it to finish, then retry"
	if err != nil || !res.IsError || res.Text != want {
		t.Fatalf("third start: %+v %v, want %q", res, err, want)
	}
	if _, err := os.Stat(filepath.Join(env.Cwd, "third")); err == nil {
		t.Fatal("the refused command ran")
	}
	jobKill(t, env, "bash-1")
	// Stopping still holds the slot, as in the reference; the end frees it.
	jobOutput(t, env, map[string]any{"job_id": "bash-1", "wait": true})
	if id := startJob(t, env, "true"); id != "bash-3" {
		t.Fatalf("the start after the refusal got %q, want bash-3", id)
	}
	if NewJobs(0, nil).limit != DefaultJobLimit || DefaultJobLimit != 10 {
		t.Errorf("the default limit is not the reference's 10")
	}
}

// TestJobDescribe: the job tools announce their calls as Run titles them.
func TestJobDescribe(t *testing.T) {
	set, err := NewSet(Bash{}, JobKill{}, JobList{}, JobOutput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, args, title string
		kind              Kind
	}{
		{"job_output", `{"job_id":"bash-2","wait":true}`, "Read output from background job bash-2", KindRead},
		{"job_kill", `{"job_id":"bash-2"}`, "Kill background job bash-2", KindExecute},
		{"job_list", `{}`, "List background jobs", KindRead},
		{"job_kill", `{"job":"bash-2"}`, "job_kill", KindExecute},
	} {
		if title, kind, locs := set.DescribeCall(nil, tc.name, []byte(tc.args)); title != tc.title || kind != tc.kind || locs != nil {
			t.Errorf("%s %s: %q %q %v", tc.name, tc.args, title, kind, locs)
		}
	}
}

// TestJobUnknown: every job tool names the unknown id in an error result.
func TestJobUnknown(t *testing.T) {
	env, _ := jobEnv(t, 0)
	for _, tc := range []struct {
		tool Tool
		args map[string]any
	}{
		{JobOutput{}, map[string]any{"job_id": "bash-9"}},
		{JobOutput{}, map[string]any{"job_id": "bash-9", "wait": true}},
		{JobKill{}, map[string]any{"job_id": "bash-9", "reason": "not needed"}},
	} {
		res, err := tc.tool.Run(context.Background(), env, mustJSON(t, tc.args))
		if err != nil || !res.IsError || res.Text != "Error: unknown job bash-9" {
			t.Errorf("%s %v: %+v %v", tc.tool.Name(), tc.args, res, err)
		}
	}
	for _, tc := range []struct {
		tool Tool
		raw  string
	}{
		{JobOutput{}, `{}`},
		{JobOutput{}, `{"job_id":""}`},
		{JobOutput{}, `{"job_id":"bash-1","Wait":true}`},
		{JobOutput{}, `{"job_id":"bash-1","timeout_ms":"soon"}`},
		{JobKill{}, `{"job_id":"bash-1","signal":9}`},
		{JobList{}, `{"all":true}`},
	} {
		if _, err := tc.tool.Run(context.Background(), env, []byte(tc.raw)); !errors.Is(err, ErrInvalidArgs) {
			t.Errorf("%s %s: %v, want ErrInvalidArgs", tc.tool.Name(), tc.raw, err)
		}
	}
	if res, _ := (JobList{}).Run(context.Background(), env, nil); res.Text != "(no background jobs)" {
		t.Errorf("empty job_list %+v", res)
	}
	bare := newEnv(t)
	for _, tc := range []struct {
		tool Tool
		raw  string
	}{{JobOutput{}, `{"job_id":"bash-1"}`}, {JobKill{}, `{"job_id":"bash-1"}`}, {JobList{}, `{}`}} {
		if res, err := tc.tool.Run(context.Background(), bare, []byte(tc.raw)); err != nil || !res.IsError || res.Text != errNoJobs {
			t.Errorf("%s without a job table: %+v %v", tc.tool.Name(), res, err)
		}
	}
}

// TestJobOutputBound: a stream that outgrows its window is spilled; a
// read too late for part of it returns the window and says where the rest
// is, and what of it was kept when the session's budget ran out.
func TestJobOutputBound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget int64
		n      int
		where  func(spill string) string
		kept   int
	}{
		{"spilled whole", -1, 200000, func(p string) string { return p }, 200000},
		{"cut by the budget", 100000, 300000, func(p string) string {
			return p + " (only its first 100000 bytes: the session's spill budget of 100000 bytes is used up)"
		}, 100000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, _ := jobEnv(t, 0)
			if tc.budget >= 0 {
				env.Spill = NewSpillBudget(tc.budget)
			}
			id := startJob(t, env, bigOutput(tc.n)+"; echo err >&2")
			got := jobOutput(t, env, map[string]any{"job_id": id, "wait": true}).Text
			spill := filepath.Join(env.SpillDir, id+"-stdout-1.log")
			want := wantBig(tc.n)[tc.n-JobWindowBytes:] + "\n[stderr]\nerr\n[some output was dropped from memory; full output: " + tc.where(spill) + "]\n[status: completed, exit code: 0]"
			if got != want {
				t.Errorf("read ends %q, want %q", got[max(0, len(got)-300):], want[max(0, len(want)-300):])
			}
			if file := readFile(t, spill); file != wantBig(tc.n)[:tc.kept] {
				t.Errorf("spill file holds %d bytes, want the first %d", len(file), tc.kept)
			}
		})
	}
}

// TestJobReadsInWindow: reads that keep up with a long stream lose
// nothing, and a character cut between two writes is returned whole.
func TestJobReadsInWindow(t *testing.T) {
	s := newJobStream(newEnv(t), "s")
	var all strings.Builder
	chunk := strings.Repeat("é", 20000) // 40000 bytes
	for range 5 {
		_, _ = s.Write([]byte(chunk[:39999]))
		text, lost := s.take()
		_, _ = s.Write([]byte(chunk[39999:]))
		if lost {
			t.Fatal("a read that kept up lost output")
		}
		all.WriteString(text)
	}
	s.end()
	text, _ := s.take()
	all.WriteString(text)
	if all.String() != strings.Repeat(chunk, 5) {
		t.Errorf("reads put together differ from the stream (%d bytes, want %d)", all.Len(), 5*len(chunk))
	}
	if len(s.buf) > JobWindowBytes {
		t.Errorf("an ended stream keeps %d bytes in memory", len(s.buf))
	}
}

// runnerOwner is a job table whose sandbox judges every job that could
// not be spawned a runner failure.
type runnerOwner struct{ jobs *Jobs }

func (o runnerOwner) Own(stop func()) func() { return o.jobs.Own(stop) }
func (o runnerOwner) Jobs() *Jobs            { return o.jobs }

func (runnerOwner) JobSandbox(_ int, _ string, startErr error) string {
	if startErr != nil {
		return "[sandbox: the runner failed]"
	}
	return ""
}

// TestJobRunnerFailure: a process that cannot be spawned is a job that
// ended at once, killed before exit, whose output says why and carries the
// sandbox's line, as in the reference's missing-sandbox-runner recording;
// its end is reported once. A command the Exec hook refuses to build is an
// error result and no job. The end is reported before the call returns.
func TestJobRunnerFailure(t *testing.T) {
	env := newEnv(t)
	d := &doneLog{}
	env.Owner = runnerOwner{NewJobs(0, d.add)}
	t.Cleanup(func() { killAll(env.jobs()) })
	runner := filepath.Join(env.Cwd, ".missing-sandbox-runner")
	env.Exec = func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
		return exec.CommandContext(ctx, runner, "bash", "-c", script), nil
	}
	id := startJob(t, env, "true")
	if ends := d.ids(); len(ends) != 1 || ends[0] != id {
		t.Fatalf("reported ends %v, want %s once", ends, id)
	}
	if info := d.ends[0]; info.StatusLine() != "[status: killed, killed before exit]" || info.Label != "true" || info.Kind != "bash" {
		t.Errorf("reported %+v", info)
	}
	want := "[stderr]\nspawn failed: fork/exec " + runner + ": no such file or directory\n[sandbox: the runner failed]\n[status: killed, killed before exit]"
	if got := jobOutput(t, env, map[string]any{"job_id": id, "wait": true}).Text; got != want {
		t.Errorf("job_output %q, want %q", got, want)
	}
	// The note is delivered once; the sandbox's line with every read.
	if got := jobOutput(t, env, map[string]any{"job_id": id}).Text; got != "[sandbox: the runner failed]\n[status: killed, killed before exit]" {
		t.Errorf("second job_output %q", got)
	}
	if len(d.ids()) != 1 {
		t.Errorf("reported again after the read: %v", d.ids())
	}

	env.Exec = func(context.Context, string, string) (*exec.Cmd, error) {
		return nil, errors.New("the sandbox cannot confine this session")
	}
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": "true", "run_in_background": true}))
	if err != nil || !res.IsError || res.Text != "the sandbox cannot confine this session" {
		t.Fatalf("refused by the hook: %+v %v", res, err)
	}
	env.Exec = nil
	if id := startJob(t, env, "true"); id != "bash-2" {
		t.Errorf("the hook's refusal used up an id: next is %s", id)
	}
}

// TestJobNoticeOnce: the done hook is called once for a job that ended
// unreported, and not for one killed, waited for at its end, or ended
// after the table was closed.
func TestJobNoticeOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		command  string
		act      func(t *testing.T, env *Env, id string)
		reported bool
	}{
		{"ended by itself", "echo hi", func(t *testing.T, env *Env, id string) {
			waitFor(t, "the end", func() bool {
				return !strings.HasSuffix(jobOutput(t, env, map[string]any{"job_id": id}).Text, "[status: running]")
			})
		}, true},
		{"killed", "sleep 1000", func(t *testing.T, env *Env, id string) {
			jobKill(t, env, id)
			jobOutput(t, env, map[string]any{"job_id": id, "wait": true})
		}, false},
		{"waited for", "sleep 0.3", func(t *testing.T, env *Env, id string) {
			jobOutput(t, env, map[string]any{"job_id": id, "wait": true})
		}, false},
		{"table closed", "sleep 1000", func(t *testing.T, env *Env, id string) {
			jobs := env.jobs()
			jobs.Close()
			killAll(jobs)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, done := jobEnv(t, 0)
			id := startJob(t, env, tc.command)
			tc.act(t, env, id)
			jobOutput(t, env, map[string]any{"job_id": id})
			jobKill(t, env, id)
			want := 0
			if tc.reported {
				want = 1
			}
			if ids := done.ids(); len(ids) != want {
				t.Errorf("done hook called for %v, want %d call(s)", ids, want)
			}
		})
	}
}

// TestAttackJobFlood: a job that floods both streams keeps its memory to
// its windows and its files on disk within the session's spill budget,
// and dies with its whole group on kill.
func TestAttackJobFlood(t *testing.T) {
	env, _ := jobEnv(t, 0)
	const budget = 1 << 20
	env.Spill = NewSpillBudget(budget)
	id := startJob(t, env, "yes flood-out & yes flood-err >&2 & echo $! > pid; wait")
	pid := readPid(t, filepath.Join(env.Cwd, "pid"), nil)
	waitFor(t, "the budget to be spent", func() bool { return env.Spill.Used() == budget })
	time.Sleep(200 * time.Millisecond) // flooding on past the budget
	rec := env.jobs().order[0]
	b := rec.work.(*bashJob)
	for _, s := range []*jobStream{b.out, b.errs} {
		s.mu.Lock()
		if len(s.buf) > 2*JobWindowBytes || s.total <= budget {
			t.Errorf("stream %s: %d bytes in memory after %d written", s.name, len(s.buf), s.total)
		}
		s.mu.Unlock()
	}
	var onDisk int64
	entries, _ := os.ReadDir(env.SpillDir)
	for _, e := range entries {
		fi, err := e.Info()
		if err == nil {
			onDisk += fi.Size()
		}
	}
	if onDisk > budget {
		t.Errorf("the spill dir holds %d bytes, over the budget of %d", onDisk, budget)
	}
	jobKill(t, env, id)
	res := jobOutput(t, env, map[string]any{"job_id": id, "wait": true})
	if !strings.Contains(res.Text, "the session's spill budget of 1048576 bytes is used up") || len(res.Text) > 2*JobWindowBytes+1000 {
		t.Errorf("read of %d bytes ends %q", len(res.Text), res.Text[max(0, len(res.Text)-400):])
	}
	waitGone(t, pid)
}

// TestJobOnWait: the OnWait hook runs once a wait has registered on a
// running job, so a job that waits for the hook's file ends inside that
// wait (the wait reports it, no done notice); a wait on a job that
// ended before it (its end already noticed) does not call it.
func TestJobOnWait(t *testing.T) {
	for _, tc := range []struct {
		name, command string
		ended         bool // the job has ended before the wait
		want          string
		calls         int
		notices       int // done notices
	}{
		{"running job ends once waited for", "while [ ! -e go ]; do sleep 0.01; done; echo finished", false,
			"finished\n[status: completed, exit code: 0]", 1, 0},
		{"ended job", "echo finished", true, "finished\n[status: completed, exit code: 0]", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, done := jobEnv(t, 0)
			var mu sync.Mutex
			var calls []string
			env.Owner.(*Jobs).OnWait(func(id string) {
				mu.Lock()
				calls = append(calls, id)
				mu.Unlock()
				writeFile(t, env.Cwd, "go", "")
			})
			id := startJob(t, env, tc.command)
			if tc.ended {
				waitFor(t, "the job's done notice", func() bool { return len(done.ids()) == 1 })
			}
			res := jobOutput(t, env, map[string]any{"job_id": id, "wait": true, "timeout_ms": 20000})
			if res.IsError || res.Text != tc.want {
				t.Errorf("wait: %+v, want text %q", res, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(calls) != tc.calls || (tc.calls > 0 && calls[0] != id) {
				t.Errorf("OnWait calls %v, want %d for %s", calls, tc.calls, id)
			}
			if ids := done.ids(); len(ids) != tc.notices {
				t.Errorf("done notices %v, want %d", ids, tc.notices)
			}
		})
	}
}
