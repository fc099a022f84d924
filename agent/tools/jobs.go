package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Background jobs.
//
// bash run_in_background starts a job in the session's job table and
// returns "started background job bash-N" (ids count from 1 per session
// and kind). The job's stdout and stderr are captured apart; job_output
// reads what arrived since the previous read and ends with a status line
// ("[status: running]", "[status: completed, exit code: 0]", "[status:
// killed, signal: SIGTERM]", …); job_kill asks the job's process tree to
// end; job_list lists the jobs. When a job ends and nobody has taken
// notice of its end yet (no job_kill asked for it, no job_output was
// waiting for it), the table's done hook is called once: the agent turns
// it into a message for the model's next step. All of it follows the
// reference agent's tool-jobs and jobs-local packages, whose words the
// recorded sessions hold.

// Limits of background jobs.
const (
	// DefaultJobLimit is how many jobs of one session may be running (or
	// stopping) at once, the reference agent's default; a further start
	// is refused with an error naming the limit.
	DefaultJobLimit = 10
	// DefaultJobWaitMS is how long job_output waits without a timeout_ms
	// argument, in milliseconds.
	DefaultJobWaitMS = 30000
	// MaxJobWaitMS caps a job_output wait, in milliseconds.
	MaxJobWaitMS = 600000
	// JobWindowBytes is how much of each output stream of a job is kept in
	// memory (its tail, the reference agent's 64000). Output a read comes
	// too late for is in the stream's spill file, capped like every spill
	// file (MaxSpillBytes, the session's SpillBudget).
	JobWindowBytes = 64000
	// maxJobRecords bounds the jobs a table remembers; beyond it the
	// oldest ended jobs are forgotten (their ids become unknown).
	maxJobRecords = 64
)

// ErrJobLimit reports a job start refused because the session runs
// DefaultJobLimit (or its table's limit) jobs already.
var ErrJobLimit = errors.New("background job limit reached")

// JobStatus is where a job is in its life: running, possibly stopping,
// then one of the three ends.
type JobStatus string

// The job statuses.
const (
	JobRunning   JobStatus = "running"
	JobStopping  JobStatus = "stopping"
	JobCompleted JobStatus = "completed"
	JobKilled    JobStatus = "killed"
	JobFailed    JobStatus = "failed"
)

// Ended reports whether s is one of the three ends.
func (s JobStatus) Ended() bool { return s == JobCompleted || s == JobKilled || s == JobFailed }

// JobInfo is a snapshot of one job.
type JobInfo struct {
	// ID is the job's id, KIND-N.
	ID string
	// Kind is what started it ("bash").
	Kind string
	// Label is its one-line description (bash: the command).
	Label string
	// Status is its state; Detail says more once it ended ("exit code:
	// 3", "signal: SIGTERM", "killed before exit").
	Status JobStatus
	Detail string
	// Started and Finished are when it was registered and when it ended
	// (zero while it runs).
	Started, Finished time.Time
	// SpawnFailed says the job's process could not be spawned: it ended
	// before the call that started it returned.
	SpawnFailed bool
}

// StatusLine is the job's status as job_output ends with it: "[status:
// running]", "[status: completed, exit code: 0]".
func (i JobInfo) StatusLine() string {
	if i.Detail != "" {
		return fmt.Sprintf("[status: %s, %s]", i.Status, i.Detail)
	}
	return fmt.Sprintf("[status: %s]", i.Status)
}

// JobOwner is an Env.Owner that keeps the session's job table: bash
// registers its background jobs there and the job tools find them there.
// Without one, run_in_background is refused.
type JobOwner interface {
	ProcessOwner
	// Jobs returns the session's table, the same one for every call.
	Jobs() *Jobs
	// JobSandbox judges, for the sandbox of the calls this owner serves,
	// how a job ended: exitCode is its exit status (-1 after a signal or
	// when it never started), stderr the tail of its stderr, startErr why
	// it could not be spawned. It returns the line job_output adds to
	// every read of the ended job ("" when the sandbox had no part in it):
	// the runner failed, or it denied an access.
	JobSandbox(exitCode int, stderr string, startErr error) string
}

// jobWork is what a job table controls of one job's work.
type jobWork interface {
	// cancel asks the work to end; it returns at once and may be called
	// more than once.
	cancel()
	// readOutput returns the output since the previous call; settled
	// tells that the job has ended (the work's output is complete).
	readOutput(settled bool) string
}

// Jobs is one session's table of background jobs. It is safe for
// concurrent use. A *Jobs is itself a JobOwner for compositions that need
// no more: it owns no process beyond its table and judges no sandbox.
type Jobs struct {
	limit  int
	onDone func(JobInfo)

	mu      sync.Mutex
	counter map[string]int
	order   []*jobRecord // registration order
	closed  bool
}

var _ JobOwner = (*Jobs)(nil)

// jobRecord is one job in the table. Its fields after done are guarded by
// the table's mutex.
type jobRecord struct {
	id, kind, label string
	work            jobWork
	started         time.Time
	done            chan struct{} // closed when the job has ended

	status   JobStatus
	detail   string
	finished time.Time
	// reported is set once something told the model of the job's end, or
	// committed to: a kill, a read of the ended job, a wait the end
	// released. An ended job that is not reported gets the done hook.
	reported bool
	waiters  int
	// spawnFailed: the process could not be spawned (JobInfo.SpawnFailed).
	spawnFailed bool
}

// NewJobs returns an empty table that lets limit jobs run at once
// (DefaultJobLimit when limit < 1). onDone, when non-nil, is called once
// for each job that ends unreported, after the end is recorded and
// outside the table's lock, on the goroutine that saw the job end.
func NewJobs(limit int, onDone func(JobInfo)) *Jobs {
	if limit < 1 {
		limit = DefaultJobLimit
	}
	return &Jobs{limit: limit, onDone: onDone, counter: map[string]int{}}
}

// Own implements ProcessOwner: the table keeps no process apart from its
// jobs, so this does nothing.
func (t *Jobs) Own(func()) func() { return func() {} }

// Jobs implements JobOwner: t itself.
func (t *Jobs) Jobs() *Jobs { return t }

// JobSandbox implements JobOwner: no sandbox.
func (t *Jobs) JobSandbox(int, string, error) string { return "" }

// Close stops the done hook: jobs that end from now on are not reported
// (the session that would read the report is going away). It stops no
// job; the owner does that.
func (t *Jobs) Close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

// List returns every job the table remembers, in the order they started.
func (t *Jobs) List() []JobInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]JobInfo, len(t.order))
	for i, r := range t.order {
		out[i] = r.info()
	}
	return out
}

// info is r's snapshot; the table's lock is held.
func (r *jobRecord) info() JobInfo {
	return JobInfo{ID: r.id, Kind: r.kind, Label: r.label, Status: r.status, Detail: r.detail, Started: r.started, Finished: r.finished, SpawnFailed: r.spawnFailed}
}

// register admits and starts a job of kind: refused with ErrJobLimit when
// the limit is reached, else run is called (under the table's lock, so
// admission is atomic) with the id the job gets. An error from run
// registers nothing and uses up no id.
func (t *Jobs) register(kind, label string, run func(id string) (jobWork, error)) (*jobRecord, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	active := 0
	for _, r := range t.order {
		if !r.status.Ended() {
			active++
		}
	}
	if active >= t.limit {
		return nil, fmt.Errorf("%w for this owner (limit: %d); use job_kill to stop an unneeded job, wait for it to finish, then retry", ErrJobLimit, t.limit)
	}
	id := fmt.Sprintf("%s-%d", kind, t.counter[kind]+1)
	w, err := run(id)
	if err != nil {
		return nil, err
	}
	t.counter[kind]++
	r := &jobRecord{id: id, kind: kind, label: label, work: w, started: time.Now(), done: make(chan struct{}), status: JobRunning}
	t.forget()
	t.order = append(t.order, r)
	return r, nil
}

// forget drops the oldest ended jobs while the table holds
// maxJobRecords; the table's lock is held.
func (t *Jobs) forget() {
	for n := len(t.order); n >= maxJobRecords; n-- {
		i := slices.IndexFunc(t.order, func(r *jobRecord) bool { return r.status.Ended() })
		if i < 0 {
			return
		}
		t.order = slices.Delete(t.order, i, i+1)
	}
}

// settle records how r ended (the first end wins), releases its waiters
// and, when nothing reported the end, calls the done hook.
func (t *Jobs) settle(r *jobRecord, status JobStatus, detail string) {
	t.settleAs(r, status, detail, false)
}

// settleAs is settle, with spawnFailed saying the job's process could not
// be spawned.
func (t *Jobs) settleAs(r *jobRecord, status JobStatus, detail string, spawnFailed bool) {
	t.mu.Lock()
	if r.status.Ended() {
		t.mu.Unlock()
		return
	}
	r.spawnFailed = spawnFailed
	r.status, r.detail, r.finished = status, detail, time.Now()
	if r.waiters > 0 {
		r.reported = true
	}
	notify := !r.reported && !t.closed && t.onDone != nil
	info := r.info()
	close(r.done)
	t.mu.Unlock()
	if notify {
		t.onDone(info)
	}
}

// halt asks r's work to end unless it has: the owner's stop (session
// close, mode narrowing). It does not mark the end reported.
func (t *Jobs) halt(r *jobRecord) {
	t.mu.Lock()
	if r.status.Ended() {
		t.mu.Unlock()
		return
	}
	r.status = JobStopping
	t.mu.Unlock()
	r.work.cancel()
}

// lookup returns the job called id; the table's lock is held.
func (t *Jobs) lookup(id string) (*jobRecord, error) {
	for _, r := range t.order {
		if r.id == id {
			return r, nil
		}
	}
	return nil, fmt.Errorf("unknown job %s", id)
}

// read returns the output of job id since the previous read and its
// snapshot taken before the output was (so an ended status comes with all
// of the output). A read of an ended job reports its end.
func (t *Jobs) read(id string) (string, JobInfo, error) {
	t.mu.Lock()
	r, err := t.lookup(id)
	if err != nil {
		t.mu.Unlock()
		return "", JobInfo{}, err
	}
	info := r.info()
	if info.Status.Ended() {
		r.reported = true
	}
	t.mu.Unlock()
	return r.work.readOutput(info.Status.Ended()), info, nil
}

// kill asks job id to end and reports its end; already says it had ended.
func (t *Jobs) kill(id string) (already bool, info JobInfo, err error) {
	t.mu.Lock()
	r, err := t.lookup(id)
	if err != nil {
		t.mu.Unlock()
		return false, JobInfo{}, err
	}
	r.reported = true
	if r.status.Ended() {
		info := r.info()
		t.mu.Unlock()
		return true, info, nil
	}
	r.status = JobStopping
	info = r.info()
	t.mu.Unlock()
	r.work.cancel()
	return false, info, nil
}

// wait waits until job id ends, d passes or ctx is done, whichever comes
// first. Only ctx is an error, and only while the job runs: an end that
// came first wins, so its report is not lost.
func (t *Jobs) wait(ctx context.Context, id string, d time.Duration) error {
	t.mu.Lock()
	r, err := t.lookup(id)
	if err != nil {
		t.mu.Unlock()
		return err
	}
	if d <= 0 {
		t.mu.Unlock()
		return fmt.Errorf("invalid wait timeout: expected a positive number of milliseconds, got %s", formatMS(d))
	}
	if r.status.Ended() {
		r.reported = true
		t.mu.Unlock()
		return nil
	}
	r.waiters++
	t.mu.Unlock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	var cancelled error
	select {
	case <-r.done:
	case <-timer.C:
	case <-ctx.Done():
		cancelled = ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	r.waiters--
	if r.status.Ended() {
		r.reported = true
		return nil
	}
	if cancelled != nil {
		return fmt.Errorf("wait aborted: %w", cancelled)
	}
	return nil
}

// formatMS renders a duration in milliseconds as the model gave it.
func formatMS(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}

// jobs returns the session's job table, nil without a JobOwner.
func (e *Env) jobs() *Jobs {
	if o, ok := e.Owner.(JobOwner); ok {
		return o.Jobs()
	}
	return nil
}

// errNoJobs is the text of a job tool's call in a session without a job
// table.
const errNoJobs = "Error: background jobs unavailable: this session keeps no job table"

// jobStream captures one output stream of a background job: its last
// JobWindowBytes in memory, for the reads, and, from the moment it
// outgrows them, all of it in a spill file capped like every spill file.
// Its Write never fails.
type jobStream struct {
	env  *Env
	name string // the spill file's prefix

	mu     sync.Mutex
	buf    []byte // the stream's last bytes: its window is the last JobWindowBytes
	total  int64  // bytes written
	cursor int64  // the next byte a read returns
	ended  bool
	// spilled is set once the spill file was asked for; spill is nil when
	// it could not be created (spillErr says why).
	spilled  bool
	spill    *spillFile
	file     *os.File
	spillErr error
}

func newJobStream(env *Env, name string) *jobStream { return &jobStream{env: env, name: name} }

// Write takes the next bytes of the stream.
func (s *jobStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += int64(len(p))
	if !s.spilled && len(s.buf)+len(p) > JobWindowBytes {
		s.spilled = true
		s.spill, s.file, s.spillErr = s.env.createSpill(s.name, ".log")
		if s.spill != nil {
			_, _ = s.spill.Write(s.buf)
		}
	}
	if s.spill != nil {
		_, _ = s.spill.Write(p)
	}
	s.buf = append(s.buf, p...)
	if len(s.buf) > 2*JobWindowBytes {
		s.buf = append(s.buf[:0], s.buf[len(s.buf)-JobWindowBytes:]...)
	}
	return len(p), nil
}

// end marks the stream complete: the spill file is closed (removed when
// it holds nothing) and the window kept in a buffer of its own size.
func (s *jobStream) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	if s.file != nil {
		if err := s.file.Close(); err != nil && s.spill.why == spillWhole {
			s.spill.why, s.spill.err = spillFailed, err
		}
		s.file = nil
		if s.spill.kept == 0 {
			_ = os.Remove(s.spill.name)
		}
	}
	s.buf = append([]byte(nil), s.buf[max(0, len(s.buf)-JobWindowBytes):]...)
}

// take returns the stream's bytes since the previous take, and whether
// some of them are no longer in memory (then it returns the whole window).
// While the stream runs, a character cut at the end waits for the next
// take.
func (s *jobStream) take() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.buf[max(0, len(s.buf)-JobWindowBytes):]
	start := s.total - int64(len(w))
	lost := s.cursor < start
	b := w
	if lost {
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	} else {
		b = w[s.cursor-start:]
	}
	held := 0
	if !s.ended {
		held = len(b) - len(trimPartialRune(b))
	}
	s.cursor = s.total - int64(held)
	return strings.ToValidUTF8(string(b[:len(b)-held]), "\uFFFD"), lost
}

// tailText is the stream's window, for the sandbox's verdict.
func (s *jobStream) tailText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.buf[max(0, len(s.buf)-JobWindowBytes):])
}

// where says where the whole stream is, for a read that lost part of it:
// "" when it never outgrew its window, else its spill file and what of the
// stream it holds.
func (s *jobStream) where() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.spilled:
		return ""
	case s.spill == nil:
		return fmt.Sprintf("(unavailable: %v)", s.spillErr)
	case s.spill.kept == 0:
		return "(unavailable: " + s.spill.reason() + ")"
	case s.spill.cut():
		return fmt.Sprintf("%s (only its first %d bytes: %s)", s.spill.name, s.spill.kept, s.spill.reason())
	}
	return s.spill.name
}

// JobArgs are the arguments of job_output and job_kill.
type JobArgs struct {
	// JobID names the job (bash-1, …).
	JobID string `json:"job_id"`
	// Wait makes job_output wait for the job to end, at most TimeoutMS.
	Wait bool `json:"wait,omitempty"`
	// TimeoutMS bounds the wait, in milliseconds; nil means
	// DefaultJobWaitMS, and it is capped at MaxJobWaitMS.
	TimeoutMS *float64 `json:"timeout_ms,omitempty"`
	// Reason says why job_kill stops the job.
	Reason string `json:"reason,omitempty"`
}

// jobArgNames are the arguments each job tool accepts.
var jobArgNames = map[string][]string{
	"job_output": {"job_id", "wait", "timeout_ms"},
	"job_kill":   {"job_id", "reason"},
	"job_list":   {},
}

// ParseJobArgs decodes the arguments of the job tool called tool
// (job_output, job_kill or job_list), refusing the names it does not take.
func ParseJobArgs(tool string, raw json.RawMessage) (JobArgs, error) {
	var a JobArgs
	o, err := decodeArgs(tool, raw)
	if err != nil {
		return a, err
	}
	known := jobArgNames[tool]
	for name := range o.fields {
		if !slices.Contains(known, name) {
			msg := "unknown argument"
			if len(known) > 0 {
				msg += " (want one of " + strings.Join(quoteAll(known), ", ") + ")"
			}
			return a, &ArgError{Tool: tool, Arg: name, Msg: msg}
		}
	}
	if tool == "job_list" {
		return a, nil
	}
	if a.JobID, err = o.str("job_id", true); err != nil {
		return a, err
	}
	if a.Wait, err = o.boolean("wait"); err != nil {
		return a, err
	}
	if v, ok := o.fields["timeout_ms"]; ok {
		var f float64
		if err := json.Unmarshal(v, &f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return a, &ArgError{Tool: tool, Arg: "timeout_ms", Msg: "want a number, got " + jsonKind(v)}
		}
		a.TimeoutMS = &f
	}
	if a.Reason, err = o.str("reason", false); err != nil {
		return a, err
	}
	return a, nil
}

// waitFor is the wait a job_output call asks for.
func (a JobArgs) waitFor() time.Duration {
	ms := float64(DefaultJobWaitMS)
	if a.TimeoutMS != nil {
		ms = *a.TimeoutMS
	}
	return time.Duration(min(ms, MaxJobWaitMS) * float64(time.Millisecond))
}

// JobOutput is the job_output tool: it reads a background job's output
// since the previous read, optionally waiting for the job to end.
type JobOutput struct{}

var (
	_ Tool      = JobOutput{}
	_ Describer = JobOutput{}
	_ Describer = JobKill{}
	_ Describer = JobList{}
)

// Name returns "job_output".
func (JobOutput) Name() string { return "job_output" }

// Schema returns job_output's schema.
func (JobOutput) Schema() Schema {
	return Schema{
		Name: "job_output",
		Description: "Read a background job's output: only what it printed since the previous read (stderr under [stderr]), then its status line, [status: running] or [status: completed, exit code: N], [status: killed, …]. " +
			"Returns at once unless wait is true: then it waits for the job to end, at most timeout_ms.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"job_id": {"type": "string", "description": "The job id the starting tool returned (bash-1, …)."},
				"wait": {"type": "boolean", "description": "Wait until the job ends or timeout_ms passes; a wait that times out returns [status: running] and leaves the job running."},
				"timeout_ms": {"type": "number", "description": "Longest wait in milliseconds, with wait: true (default 30000, max 600000)."}
			},
			"required": ["job_id"]
		}`),
	}
}

// Describe announces a job_output call: its title and kind, as Run
// reports them.
func (JobOutput) Describe(args json.RawMessage) (string, Kind, []Location) {
	a, err := ParseJobArgs("job_output", args)
	if err != nil {
		return "job_output", KindRead, nil
	}
	return "Read output from background job " + a.JobID, KindRead, nil
}

// Run reads the job.
func (JobOutput) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	a, err := ParseJobArgs("job_output", raw)
	if err != nil {
		return Result{}, err
	}
	title := "Read output from background job " + a.JobID
	fail := func(text string) Result { return errorResult(title, KindRead, nil, text) }
	t := env.jobs()
	if t == nil {
		return fail(errNoJobs), nil
	}
	if a.Wait {
		if err := t.wait(ctx, a.JobID, a.waitFor()); err != nil {
			if ctx.Err() != nil {
				return fail("Error: wait aborted"), fmt.Errorf("tools: job_output: waiting for %s: %w", a.JobID, ctx.Err())
			}
			return fail("Error: " + err.Error()), nil
		}
	}
	text, info, err := t.read(a.JobID)
	if err != nil {
		return fail("Error: " + err.Error()), nil
	}
	if text == "" {
		text = "(no new output)"
	}
	return Result{Text: joinLine(text, info.StatusLine()), Kind: KindRead, Title: title}, nil
}

// JobKill is the job_kill tool: it asks a background job's whole process
// tree to end (SIGTERM, then SIGKILL after a grace period) and returns at
// once; the job ends as killed.
type JobKill struct{}

var _ Tool = JobKill{}

// Name returns "job_kill".
func (JobKill) Name() string { return "job_kill" }

// Schema returns job_kill's schema.
func (JobKill) Schema() Schema {
	return Schema{
		Name:        "job_kill",
		Description: "Stop a background job: its whole process tree is asked to end, and killed if it does not. Returns at once; the job then ends as killed.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"job_id": {"type": "string", "description": "The job id the starting tool returned (bash-1, …)."},
				"reason": {"type": "string", "description": "Why the job is stopped, in a few words."}
			},
			"required": ["job_id"]
		}`),
	}
}

// Describe announces a job_kill call: its title and kind, as Run reports
// them.
func (JobKill) Describe(args json.RawMessage) (string, Kind, []Location) {
	a, err := ParseJobArgs("job_kill", args)
	if err != nil {
		return "job_kill", KindExecute, nil
	}
	return "Kill background job " + a.JobID, KindExecute, nil
}

// Run stops the job.
func (JobKill) Run(_ context.Context, env *Env, raw json.RawMessage) (Result, error) {
	a, err := ParseJobArgs("job_kill", raw)
	if err != nil {
		return Result{}, err
	}
	title := "Kill background job " + a.JobID
	t := env.jobs()
	if t == nil {
		return errorResult(title, KindExecute, nil, errNoJobs), nil
	}
	already, info, err := t.kill(a.JobID)
	switch {
	case err != nil:
		return errorResult(title, KindExecute, nil, "Error: "+err.Error()), nil
	case already:
		return Result{Text: fmt.Sprintf("job %s had already finished %s", info.ID, info.StatusLine()), Kind: KindExecute, Title: title}, nil
	}
	return Result{Text: "requested cancellation of job " + info.ID, Kind: KindExecute, Title: title}, nil
}

// JobList is the job_list tool: the session's background jobs, one a line.
type JobList struct{}

var _ Tool = JobList{}

// Name returns "job_list".
func (JobList) Name() string { return "job_list" }

// Schema returns job_list's schema.
func (JobList) Schema() Schema {
	return Schema{
		Name:        "job_list",
		Description: "List this session's background jobs, running and ended: id, kind, status and command.",
		Parameters:  compactJSON(`{"type": "object", "properties": {}}`),
	}
}

// Describe announces a job_list call.
func (JobList) Describe(json.RawMessage) (string, Kind, []Location) {
	return "List background jobs", KindRead, nil
}

// Run lists the jobs.
func (JobList) Run(_ context.Context, env *Env, raw json.RawMessage) (Result, error) {
	if _, err := ParseJobArgs("job_list", raw); err != nil {
		return Result{}, err
	}
	const title = "List background jobs"
	t := env.jobs()
	if t == nil {
		return errorResult(title, KindRead, nil, errNoJobs), nil
	}
	list := t.List()
	if len(list) == 0 {
		return Result{Text: "(no background jobs)", Kind: KindRead, Title: title}, nil
	}
	lines := make([]string, len(list))
	for i, j := range list {
		lines[i] = fmt.Sprintf("%s [%s] %s — %s", j.ID, j.Kind, j.Status, j.Label)
	}
	return Result{Text: strings.Join(lines, "\n"), Kind: KindRead, Title: title}, nil
}

// JobWork is the work of a background job a tool outside this package
// starts (a terminal's background send): what job_output and job_kill
// control of it.
type JobWork interface {
	// Cancel asks the work to end; it returns at once and may be called
	// more than once.
	Cancel()
	// ReadOutput returns the output since the previous call; settled
	// tells that the job has ended (the work's output is complete).
	ReadOutput(settled bool) string
}

// workAdapter is a JobWork as the table's jobWork.
type workAdapter struct{ w JobWork }

func (a workAdapter) cancel()                        { a.w.Cancel() }
func (a workAdapter) readOutput(settled bool) string { return a.w.ReadOutput(settled) }

// Start registers a job of kind (its id is KIND-N) labelled label whose
// work is w, admitted like bash's (ErrJobLimit), and returns its id and
// the function that records its end, once: status is one of the three
// ends, detail what job_output shows after it ("wait: stdin_read").
func (t *Jobs) Start(kind, label string, w JobWork) (id string, settle func(status JobStatus, detail string), err error) {
	rec, err := t.register(kind, label, func(string) (jobWork, error) { return workAdapter{w}, nil })
	if err != nil {
		return "", nil, err
	}
	return rec.id, func(status JobStatus, detail string) { t.settle(rec, status, detail) }, nil
}
