package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Limits of the bash tool.
const (
	// DefaultBashTimeout is how long a command may run without a timeout
	// argument, in milliseconds.
	DefaultBashTimeout = 120000
	// MaxBashTimeout caps the timeout argument, in milliseconds.
	MaxBashTimeout = 600000
	// MaxOutputBytes is the most a glob or grep listing shows; a longer
	// listing is cut to its head and spilled whole.
	MaxOutputBytes = 30000
	// DefaultMaxInlineBytes is the most of a bash result (output and
	// status lines) the model is shown, the reference agent's default: a
	// longer result is saved whole to a spill file and shown as its head
	// and tail around a notice naming the file (Env.MaxInlineBytes
	// overrides it).
	DefaultMaxInlineBytes = 50000
)

// BashArgs are the arguments of the bash tool.
type BashArgs struct {
	// Command is the bash script to run.
	Command string `json:"command"`
	// Description says in a few words what the command does.
	Description string `json:"description,omitempty"`
	// Workdir is the directory to run in, relative to the cwd; empty means
	// the cwd.
	Workdir string `json:"workdir,omitempty"`
	// Timeout is in milliseconds; 0 or less means DefaultBashTimeout, and
	// it is capped at MaxBashTimeout.
	Timeout int `json:"timeout,omitempty"`
	// RunInBackground starts the command as a background job of the
	// session and returns at once with the job's id; job_output reads it,
	// job_kill stops it. No timeout applies.
	RunInBackground bool `json:"run_in_background,omitempty"`
	// SandboxPermissions asks for a wider sandbox mode for this call; the
	// agent layer handles it.
	SandboxPermissions string `json:"sandbox_permissions,omitempty"`
	// Justification explains SandboxPermissions to the user.
	Justification string `json:"justification,omitempty"`
}

// ParseBashArgs decodes the bash tool's arguments.
func ParseBashArgs(raw json.RawMessage) (BashArgs, error) {
	var a BashArgs
	o, err := decodeArgs("bash", raw)
	if err != nil {
		return a, err
	}
	if a.Command, err = o.str("command", true); err != nil {
		return a, err
	}
	if a.Description, err = o.str("description", false); err != nil {
		return a, err
	}
	if a.Workdir, err = o.str("workdir", false); err != nil {
		return a, err
	}
	if a.Timeout, err = o.integer("timeout"); err != nil {
		return a, err
	}
	if a.RunInBackground, err = o.boolean("run_in_background"); err != nil {
		return a, err
	}
	if a.SandboxPermissions, err = o.str("sandbox_permissions", false); err != nil {
		return a, err
	}
	if a.Justification, err = o.str("justification", false); err != nil {
		return a, err
	}
	return a, nil
}

// TimeoutMS returns the effective timeout in milliseconds.
func (a BashArgs) TimeoutMS() int {
	switch {
	case a.Timeout <= 0:
		return DefaultBashTimeout
	case a.Timeout > MaxBashTimeout:
		return MaxBashTimeout
	}
	return a.Timeout
}

// Bash is the bash tool: it runs a script with bash -c (or through
// Env.Exec) in its own process group.
type Bash struct {
	// Escalation adds sandbox_permissions and justification to the schema;
	// set it when a confining sandbox is active.
	Escalation bool
}

var _ Tool = Bash{}

// Name returns "bash".
func (Bash) Name() string { return "bash" }

// Schema returns the bash tool's schema.
func (b Bash) Schema() Schema {
	params := `{
		"type": "object",
		"properties": {
			"command": {"type": "string", "description": "The bash script to run."},
			"description": {"type": "string", "description": "What the command does, in 5-10 words."},
			"workdir": {"type": "string", "description": "Directory to run in, relative to the working directory (default: the working directory)."},
			"timeout": {"type": "integer", "description": "Timeout in milliseconds (default 120000, max 600000).", "minimum": 1, "maximum": 600000},
			"run_in_background": {"type": "boolean", "description": "Start the command as a background job and return its job id at once; read its output with job_output, stop it with job_kill. No timeout applies."}` +
		escalationProperties(b.Escalation) + `
		},
		"required": ["command"]
	}`
	return Schema{
		Name: "bash",
		Description: "Run a bash script and return its combined stdout and stderr. " +
			"A non-zero exit status is reported as [exit code N]. Output longer than 50000 bytes is shown as its beginning and end, and the whole of it is saved to a file whose path is given. " +
			"Commands are killed after the timeout. Use run_in_background for servers and other long-running processes: the call returns a job id, job_output reads the job's output and job_kill stops it.",
		Parameters: compactJSON(params),
	}
}

// describeBash returns the title of a bash call.
func describeBash(a BashArgs) string {
	if a.Description != "" {
		return a.Description
	}
	first, _, _ := strings.Cut(strings.TrimSpace(a.Command), "\n")
	if len(first) > 100 {
		first = truncateRunes(first, 100) + "…"
	}
	if first == "" {
		return "bash"
	}
	return first
}

// How bash ends a command.
const (
	// killGrace is how long a command has, once asked to end (SIGTERM to
	// its process group: under the sandbox supervisor that ends its whole
	// tree), before its process group is killed with SIGKILL.
	killGrace = 2 * time.Second
	// drainGrace bounds reading a command's output after it exited: only
	// a process that escaped its tree can still hold the pipe open then.
	drainGrace = time.Second
)

// Run runs the command.
func (Bash) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	a, err := ParseBashArgs(raw)
	if err != nil {
		return Result{}, err
	}
	if err := env.check(); err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("tools: bash: not started: %w", err)
	}
	title := describeBash(a)
	fail := func(text string) (Result, error) { return errorResult(title, KindExecute, nil, text), nil }

	workdir := env.Cwd
	if a.Workdir != "" {
		workdir = env.abs(a.Workdir)
		if msg := dirFailure(workdir); msg != "" {
			return fail("workdir: " + msg)
		}
	}
	if a.RunInBackground {
		return runBackground(ctx, env, a, title, workdir)
	}

	timeout := a.TimeoutMS()
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Millisecond)
	defer cancel()
	j, err := env.start(runCtx, a.Command, workdir)
	if err != nil {
		var spawn *spawnError
		if errors.As(err, &spawn) && env.Exec != nil {
			return fail(RunnerFailurePrefix + spawn.Err.Error())
		}
		return fail(err.Error())
	}
	out := &collector{env: env, limit: env.maxInline()}
	var sink io.Writer = out
	var live *liveTail
	if env.Progress != nil {
		live = &liveTail{}
		sink = io.MultiWriter(out, live)
		stop := live.report(runCtx, env.Progress)
		defer stop()
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		j.copyTo(sink)
	}()
	exited := make(chan struct{})
	killed := make(chan bool, 1)
	go func() {
		select {
		case <-runCtx.Done():
			j.terminate()
			killed <- true
		case <-exited:
			killed <- false
		}
	}()
	state, waitErr := j.wait()
	close(exited)
	wasKilled := <-killed
	j.drain()
	<-copied
	if state == nil {
		out.discard()
		return Result{}, fmt.Errorf("tools: bash: waiting for %q: %w", title, waitErr)
	}

	status, failed := exitStatus(state)
	var cancelled error
	if wasKilled && failed {
		switch {
		case ctx.Err() != nil:
			status, cancelled = "[cancelled]", ctx.Err()
		default:
			status = fmt.Sprintf("[timed out after %d ms]", timeout)
		}
	}
	text, spillPath := out.finish(status)
	// As in the reference agent, a command that ran to its end is not an
	// error whatever its exit status, signal or timeout: they are in the
	// text and the model decides. Only a run that did not happen (it could
	// not start; the sandbox refused it, see the agent's Sandbox.Annotate)
	// or was cancelled is an error result.
	res := Result{Text: text, IsError: cancelled != nil, Kind: KindExecute, Title: title, SpillPath: spillPath,
		Value: foregroundValue(state, out, text, spillPath, timeout, wasKilled && failed && cancelled == nil, cancelled != nil)}
	if cancelled != nil {
		return res, fmt.Errorf("tools: bash: %q cancelled: %w", title, cancelled)
	}
	return res, nil
}

// command builds the command through Env.Exec or as bash -c, wired to
// write its combined output to out, in its own process group.
func (e *Env) command(ctx context.Context, script, workdir string, out *os.File) (*exec.Cmd, error) {
	var cmd *exec.Cmd
	if e.Exec != nil {
		c, err := e.Exec(ctx, script, workdir)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, errors.New("tools: bash: the command hook returned no command")
		}
		cmd = c
	} else {
		cmd = exec.Command("bash", "-c", script)
	}
	if cmd.Dir == "" {
		cmd.Dir = workdir
	}
	cmd.Stdin = nil
	cmd.Stdout = out
	cmd.Stderr = out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	return cmd, nil
}

// job is a started command: its own process group, and the read end of
// the pipe that carries its combined output.
type job struct {
	cmd *exec.Cmd
	out *os.File

	mu     sync.Mutex
	reaped bool          // the group leader was reaped: its id may be reused
	ended  chan struct{} // closed once it was reaped
}

// start builds and starts the command with its output on a pipe.
func (e *Env) start(ctx context.Context, script, workdir string) (*job, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("tools: bash: making the output pipe: %w", err)
	}
	cmd, err := e.command(ctx, script, workdir, w)
	if err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, err
	}
	j := &job{cmd: cmd, out: r, ended: make(chan struct{})}
	if cmd.Cancel != nil {
		// Made with exec.CommandContext: end it the way bash does, never
		// with a bare SIGKILL of the leader that would leave its tree.
		cmd.Cancel = func() error {
			j.signal(syscall.SIGTERM)
			return nil
		}
	}
	err = StartCommand(cmd)
	_ = w.Close()
	if err != nil {
		_ = r.Close()
		return nil, &spawnError{Err: err}
	}
	return j, nil
}

// RunnerFailurePrefix starts the error result of a foreground bash call
// whose runner (the Exec hook's program, the sandbox supervisor) could not
// be spawned; the sandbox adapter rewrites such a result with its mode.
const RunnerFailurePrefix = "Error: the command's runner could not start; the command did not run. Runner failure: "

// spawnError is a process that could not be spawned.
type spawnError struct{ Err error }

func (e *spawnError) Error() string { return "tools: bash: spawning the command: " + e.Err.Error() }
func (e *spawnError) Unwrap() error { return e.Err }

// signal sends sig to the job's process group unless it was reaped.
func (j *job) signal(sig syscall.Signal) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.reaped {
		_ = syscall.Kill(-j.cmd.Process.Pid, sig)
	}
}

// terminate asks the job's process group to end (SIGTERM; the sandbox
// supervisor then kills its whole tree) and kills the group with SIGKILL
// if it has not ended after killGrace.
func (j *job) terminate() {
	j.signal(syscall.SIGTERM)
	go func() {
		t := time.NewTimer(killGrace)
		defer t.Stop()
		select {
		case <-j.ended:
		case <-t.C:
			j.signal(syscall.SIGKILL)
		}
	}()
}

// wait waits for the job's leader to exit, kills what is left of its
// process group (a command not under the supervisor leaves its background
// children there), then reaps the leader.
func (j *job) wait() (*os.ProcessState, error) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, j.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	j.signal(syscall.SIGKILL)
	j.mu.Lock()
	j.reaped = true
	j.mu.Unlock()
	err := j.cmd.Wait()
	close(j.ended)
	return j.cmd.ProcessState, err
}

// copyTo copies the job's output to w until EOF or the drain deadline,
// then closes the pipe.
func (j *job) copyTo(w io.Writer) {
	buf := make([]byte, 64<<10)
	_, _ = io.CopyBuffer(w, j.out, buf)
	_ = j.out.Close()
}

// drain bounds the rest of copyTo once the job has exited.
func (j *job) drain() { _ = j.out.SetReadDeadline(time.Now().Add(drainGrace)) }

// runBackground starts the command as a job of the session's job table
// (Env.Owner, a [JobOwner]), detached from ctx's cancellation, and returns
// at once with the job's id, as the reference agent words it: "started
// background job bash-N". The job's stdout and stderr are captured apart
// (see bashJob); a goroutine reaps it and settles it in the table.
//
// What cannot start is told apart the way the reference does: a command
// the Exec hook refuses to build (the sandbox cannot confine the session)
// is an error result and no job; a process that cannot be spawned (the
// sandbox runner is missing) is a job that ended at once, killed before
// exit, whose output says why.
func runBackground(ctx context.Context, env *Env, a BashArgs, title, workdir string) (Result, error) {
	owner, _ := env.Owner.(JobOwner)
	t := env.jobs()
	if t == nil {
		return errorResult(title, KindExecute, nil, errNoJobs), nil
	}
	var b *bashJob
	rec, err := t.register("bash", a.Command, func(id string) (jobWork, error) {
		var err error
		b, err = env.startBackground(context.WithoutCancel(ctx), id, a.Command, workdir)
		return b, err
	})
	if err != nil {
		text := err.Error()
		if errors.Is(err, ErrJobLimit) {
			text = "Error: " + text
		}
		return errorResult(title, KindExecute, nil, text), nil
	}
	started := Result{Text: "started background job " + rec.id, Kind: KindExecute, Title: title, Value: backgroundValue(rec.id)}
	if b.j == nil {
		// Nothing runs and nothing is owned: the job ends now, so its
		// notice is queued before the call returns (deterministically
		// for the next step).
		b.run(owner, t, rec)
		return started, nil
	}
	var stopped atomic.Bool
	owned := make(chan struct{})
	var release func()
	go func() {
		b.run(owner, t, rec)
		<-owned
		if release != nil && !stopped.Load() {
			release()
		}
	}()
	release = env.Owner.Own(func() {
		stopped.Store(true)
		t.halt(rec)
		<-rec.done
	})
	close(owned)
	return started, nil
}

// bashJob is the work of one background bash job: its process (nil when
// it could not be spawned) and its two output streams.
type bashJob struct {
	j        *job
	errPipe  *os.File // the read end of the stderr pipe
	startErr error    // why the process could not be spawned
	out      *jobStream
	errs     *jobStream

	mu        sync.Mutex
	killed    bool   // cancel was asked before the job ended
	spawnNote string // "spawn failed: …", delivered by one read
	verdict   string // the sandbox's line, once settled
}

var _ jobWork = (*bashJob)(nil)

// startBackground starts script with stdout and stderr on pipes of their
// own. An error is the Exec hook's (or a pipe's): no job. A process that
// could not be spawned gives a bashJob with startErr set.
func (e *Env) startBackground(ctx context.Context, id, script, workdir string) (*bashJob, error) {
	b := &bashJob{out: newJobStream(e, id+"-stdout"), errs: newJobStream(e, id+"-stderr")}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("tools: bash: making the stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_, _ = outR.Close(), outW.Close()
		return nil, fmt.Errorf("tools: bash: making the stderr pipe: %w", err)
	}
	cmd, err := e.command(ctx, script, workdir, outW)
	if err != nil {
		_, _, _, _ = outR.Close(), outW.Close(), errR.Close(), errW.Close()
		return nil, err
	}
	cmd.Stderr = errW
	j := &job{cmd: cmd, out: outR, ended: make(chan struct{})}
	err = StartCommand(cmd)
	_, _ = outW.Close(), errW.Close()
	if err != nil {
		_, _ = outR.Close(), errR.Close()
		b.startErr = err
		b.spawnNote = "spawn failed: " + err.Error()
		return b, nil
	}
	b.j, b.errPipe = j, errR
	return b, nil
}

// run captures the job's output until it ends, then settles it in t with
// its outcome and the sandbox's verdict on it.
func (b *bashJob) run(owner JobOwner, t *Jobs, rec *jobRecord) {
	if b.j == nil {
		b.out.end()
		b.errs.end()
		b.settle(owner.JobSandbox(-1, "", b.startErr))
		t.settleAs(rec, JobKilled, "killed before exit", true)
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { b.j.copyTo(b.out) })
	wg.Go(func() {
		buf := make([]byte, 64<<10)
		_, _ = io.CopyBuffer(b.errs, b.errPipe, buf)
		_ = b.errPipe.Close()
	})
	state, err := b.j.wait()
	b.j.drain()
	_ = b.errPipe.SetReadDeadline(time.Now().Add(drainGrace))
	wg.Wait()
	b.out.end()
	b.errs.end()
	if state == nil {
		b.settle("")
		t.settle(rec, JobFailed, fmt.Sprintf("waiting for it failed: %v", err))
		return
	}
	status, detail, code := b.outcome(state)
	b.settle(owner.JobSandbox(code, b.errs.tailText(), nil))
	t.settle(rec, status, detail)
}

// outcome maps how the process ended onto the job vocabulary, as the
// reference agent does: a process killed by a signal (sent by anyone) is
// killed with the signal's name; one asked to stop that exited on its own
// is killed "before exit"; anything else completed with its exit code,
// which is the model's to judge. code is the exit status, -1 after a
// signal.
func (b *bashJob) outcome(ps *os.ProcessState) (status JobStatus, detail string, code int) {
	b.mu.Lock()
	killed := b.killed
	b.mu.Unlock()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return JobKilled, "signal: " + unix.SignalName(ws.Signal()), -1
	}
	if killed {
		return JobKilled, "killed before exit", ps.ExitCode()
	}
	return JobCompleted, fmt.Sprintf("exit code: %d", ps.ExitCode()), ps.ExitCode()
}

// settle records the sandbox's verdict; reads show it from then on.
func (b *bashJob) settle(verdict string) {
	b.mu.Lock()
	b.verdict = verdict
	b.mu.Unlock()
}

// cancel implements jobWork: SIGTERM to the job's process group (under the
// sandbox supervisor, its whole tree), SIGKILL after killGrace.
func (b *bashJob) cancel() {
	b.mu.Lock()
	b.killed = true
	b.mu.Unlock()
	if b.j != nil {
		b.j.terminate()
	}
}

// readOutput implements jobWork: the stdout and stderr produced since the
// last read, stderr in a section of its own under "[stderr]", then a
// line for output that no longer is in memory and, once the job settled,
// the sandbox's line. A spawn failure's note stands in for stderr once.
func (b *bashJob) readOutput(settled bool) string {
	out, lostOut := b.out.take()
	errText, lostErr := b.errs.take()
	b.mu.Lock()
	if errText == "" {
		errText, b.spawnNote = b.spawnNote, ""
	}
	verdict := b.verdict
	b.mu.Unlock()
	delta := out
	if errText != "" {
		delta = joinLine(delta, "[stderr]\n"+errText)
	}
	var notes []string
	if lostOut || lostErr {
		var where []string
		for _, s := range []*jobStream{b.out, b.errs} {
			if w := s.where(); w != "" {
				where = append(where, w)
			}
		}
		if len(where) == 0 {
			where = []string{"(unavailable)"}
		}
		notes = append(notes, "[some output was dropped from memory; full output: "+strings.Join(where, ", ")+"]")
	}
	if settled && verdict != "" {
		notes = append(notes, verdict)
	}
	if len(notes) == 0 {
		return delta
	}
	return joinLine(delta, strings.Join(notes, "\n"))
}

// joinLine appends line to text, on a line of its own.
func joinLine(text, line string) string {
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + line
}

// exitStatus renders how the process ended: "" for success, else a status
// line, and whether it is a failure.
func exitStatus(ps *os.ProcessState) (string, bool) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("[killed by signal %d (%s)]", int(ws.Signal()), ws.Signal()), true
	}
	if code := ps.ExitCode(); code != 0 {
		return fmt.Sprintf("[exit code %d]", code), true
	}
	return "", false
}

// maxInline is the cap on a bash result's text: Env.MaxInlineBytes, else
// DefaultMaxInlineBytes.
func (e *Env) maxInline() int {
	if e.MaxInlineBytes > 0 {
		return e.MaxInlineBytes
	}
	return DefaultMaxInlineBytes
}

// collector takes a foreground command's output within bounded memory: all
// of it while it fits the limit, then its first limit bytes and a window
// of at least its last limit bytes, with the whole output written to a
// spill file (capped: see spillFile) from the moment it outgrows the limit.
type collector struct {
	env   *Env
	limit int
	// prefix names the spill file ("bash" when empty).
	prefix string
	total  int64
	// buf is the whole output while it fits the limit; once spilling,
	// head is its first limit bytes and tail at least its last limit.
	buf, head, tail []byte
	spilling        bool
	spill           *spillFile // nil when the spill file could not be created
	// suffix is the status line (or "(no output)") finish appended.
	suffix   string
	file     *os.File
	spillErr error
}

// Write takes the next bytes of output. It never fails.
func (c *collector) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if !c.spilling {
		c.buf = append(c.buf, p...)
		if len(c.buf) <= c.limit {
			return len(p), nil
		}
		c.startSpill(c.buf)
		c.head = append([]byte(nil), c.buf[:c.limit]...)
		c.tail, c.buf = c.buf, nil
		return len(p), nil
	}
	if c.spill != nil {
		_, _ = c.spill.Write(p)
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*c.limit {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.limit:]...)
	}
	return len(p), nil
}

// startSpill creates the spill file and writes b, the output so far, to it.
func (c *collector) startSpill(b []byte) {
	c.spilling = true
	prefix := c.prefix
	if prefix == "" {
		prefix = "bash"
	}
	c.spill, c.file, c.spillErr = c.env.createSpill(prefix, ".txt")
	if c.spill != nil {
		_, _ = c.spill.Write(b)
	}
}

// discard removes the spill file of a call that returns no result.
func (c *collector) discard() {
	if c.spill != nil {
		_ = c.file.Close()
		_ = os.Remove(c.spill.name)
	}
}

// finish returns the text the model sees, the output followed by the
// status line (or "(no output)"), and the path of the spill file, if one
// holds any of it. A text within the limit is returned whole. A longer one
// is saved whole to the spill file and shown as the reference agent shows
// a spilled result: its head and tail, split evenly over what the limit
// leaves after the notice, then a blank line and the notice, "(Omitted N
// bytes. Full formatted result stored at: PATH. …)". A spill file that
// could not take it all is said so in the notice instead.
func (c *collector) finish(status string) (string, string) {
	out := c.buf
	if c.spilling {
		out = c.tail
	}
	var suffix string
	switch {
	case status != "" && len(out) > 0 && out[len(out)-1] != '\n':
		suffix = "\n" + status
	case status != "":
		suffix = status
	case c.total == 0:
		suffix = "(no output)"
	}
	c.suffix = suffix
	total := c.total + int64(len(suffix))
	if !c.spilling {
		if total <= int64(c.limit) {
			return strings.ToValidUTF8(string(c.buf)+suffix, "\uFFFD"), ""
		}
		c.startSpill(c.buf)
		c.head, c.tail = c.buf, c.buf
	}
	if c.spill != nil {
		_, _ = io.WriteString(c.spill, suffix)
		if err := c.file.Close(); err != nil && c.spill.why == spillWhole {
			c.spill.why, c.spill.err = spillFailed, err
		}
		if c.spill.kept == 0 {
			_ = os.Remove(c.spill.name)
		}
	}
	path := ""
	if c.spill != nil && c.spill.kept > 0 {
		path = c.spill.name
	}
	reserve := len(c.notice(total, total)) + 2
	budget := max(0, c.limit-reserve)
	head := takeHead(c.head, suffix, (budget+1)/2)
	tail := takeTail(c.tail, suffix, budget/2)
	omitted := total - int64(len(head)) - int64(len(tail))
	preview := strings.ToValidUTF8(string(head), "\uFFFD") + strings.ToValidUTF8(string(tail), "\uFFFD")
	if preview == "" {
		return c.notice(omitted, total), path
	}
	return preview + "\n\n" + c.notice(omitted, total), path
}

// notice is the line that replaces the omitted middle of a spilled result
// of total bytes.
func (c *collector) notice(omitted, total int64) string {
	const hint = "Use read with offset/limit, or grep this path to search within it."
	switch {
	case c.spill == nil:
		return fmt.Sprintf("(Omitted %d bytes. The full formatted result (%d bytes in total) was not stored: %v.)", omitted, total, c.spillErr)
	case c.spill.kept == 0:
		return fmt.Sprintf("(Omitted %d bytes. The full formatted result (%d bytes in total) was not stored: %s.)", omitted, total, c.spill.reason())
	case c.spill.cut():
		return fmt.Sprintf("(Omitted %d bytes. The full formatted result (%d bytes in total) could not be stored whole: %s; only its first %d bytes are stored at: %s. %s)",
			omitted, total, c.spill.reason(), c.spill.kept, c.spill.name, hint)
	}
	return fmt.Sprintf("(Omitted %d bytes. Full formatted result stored at: %s. %s)", omitted, c.spill.name, hint)
}

// takeHead returns the first n bytes of head+suffix (head holds at least
// n bytes of the text, or all of its output), without a character cut in
// two at its end.
func takeHead(head []byte, suffix string, n int) []byte {
	b := head
	if len(b) < n {
		b = append(append([]byte(nil), head...), suffix...)
	}
	b = b[:min(n, len(b))]
	return trimPartialRune(b)
}

// takeTail returns the last n bytes of tail+suffix (tail holds at least
// the last n bytes of the output), starting on a character boundary.
func takeTail(tail []byte, suffix string, n int) []byte {
	b := append(append([]byte(nil), tail[max(0, len(tail)-n):]...), suffix...)
	b = b[max(0, len(b)-n):]
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return b
}

// trimPartialRune drops an incomplete UTF-8 sequence from the end of b: a
// lead byte followed by fewer continuation bytes than it announces. A
// malformed end is left as it is (it is shown as U+FFFD).
func trimPartialRune(b []byte) []byte {
	i := len(b) - 1
	for i >= 0 && b[i]&0xC0 == 0x80 && len(b)-i <= 3 {
		i--
	}
	if i < 0 {
		return b
	}
	want := 0
	switch lead := b[i]; {
	case lead < 0x80:
		want = 1
	case lead < 0xE0:
		want = 2
	case lead < 0xF0:
		want = 3
	case lead < 0xF8:
		want = 4
	}
	if want > 0 && len(b)-i < want {
		return b[:i]
	}
	return b
}

// How a long-running command's output streams to Env.Progress: the first
// report after ProgressEvery, then one every ProgressEvery while new output
// arrives, each the last ProgressBytes of it (cut at a UTF-8 boundary).
const (
	ProgressEvery = time.Second
	ProgressBytes = 8 << 10
)

// liveTail keeps the last ProgressBytes a command wrote, for its progress
// reports. Writes come from the copying goroutine, reads from the
// reporting one.
type liveTail struct {
	mu    sync.Mutex
	tail  []byte
	total int64
}

// Write implements io.Writer; it never fails.
func (l *liveTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total += int64(len(p))
	if len(p) >= ProgressBytes {
		l.tail = append(l.tail[:0], p[len(p)-ProgressBytes:]...)
	} else {
		keep := max(0, len(l.tail)+len(p)-ProgressBytes)
		l.tail = append(l.tail[keep:], p...)
	}
	return len(p), nil
}

// snapshot returns the tail and how many bytes were written in all.
func (l *liveTail) snapshot() (string, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.tail
	// Start at a rune boundary: the cut may have split one.
	for i := 0; i < len(b) && i < utf8.UTFMax && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), l.total
}

// report calls progress every ProgressEvery with the tail, when output
// arrived since the last call, until ctx ends or stop is called.
func (l *liveTail) report(ctx context.Context, progress func(string)) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(ProgressEvery)
		defer t.Stop()
		var seen int64
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-t.C:
			}
			text, total := l.snapshot()
			if total == seen {
				continue
			}
			seen = total
			if total > int64(len(text)) {
				text = fmt.Sprintf("[… %d earlier bytes]\n", total-int64(len(text))) + text
			}
			progress(text)
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
