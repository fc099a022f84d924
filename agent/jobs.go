package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/terminal"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/internal/jsrules"
	"github.com/reel-agent/reel/sessionlog"
)

// jobs holds the background processes of one session (bash
// run_in_background): the session's job table, which the job tools read,
// and each running job's stop with the sandbox mode it was started under,
// so that none outlives its limits: the session's close and the agent's
// exit stop them all, and narrowing the session's mode stops those started
// under a wider one (a once-approved danger-full-access job does not keep
// running after the editor switched to read-only). It is safe for
// concurrent use.
//
// A job that ends unreported (see tools.Jobs) queues a notice for the
// session's next step, as the reference agent's tool-jobs plugin words it;
// a job stopped because the session closes queues none. No job event is
// logged: the reference logs none either.
type jobs struct {
	mu    sync.Mutex
	table *tools.Jobs
	next  int
	live  map[int]job
}

// job is one running background process tree.
type job struct {
	mode sandbox.Mode
	stop func()
}

// Notices of ended jobs.
const (
	// jobsPlugin is the plugin name of the notices' source.
	jobsPlugin = "tool-jobs"
	// noticeSummaryChars bounds a notice's summary, in UTF-16 code units
	// (the reference's CONTEXT_SUMMARY_MAX_CHARS).
	noticeSummaryChars = 120
)

// owner returns the tools.JobOwner of the calls of s under mode: it
// registers their jobs under mode, and judges their ends by the sandbox
// when confined (a confining Sandbox runs them).
func (j *jobs) owner(s *Session, mode sandbox.Mode, confined bool) tools.JobOwner {
	return jobOwner{j: j, s: s, mode: mode, confined: confined}
}

// jobOwner is a session's job set seen from calls under one mode.
type jobOwner struct {
	j        *jobs
	s        *Session
	mode     sandbox.Mode
	confined bool
}

var _ tools.JobOwner = jobOwner{}

// Own implements tools.ProcessOwner.
func (o jobOwner) Own(stop func()) (release func()) {
	j := o.j
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.live == nil {
		j.live = map[int]job{}
	}
	j.next++
	id := j.next
	j.live[id] = job{mode: o.mode, stop: stop}
	return func() {
		j.mu.Lock()
		delete(j.live, id)
		j.mu.Unlock()
	}
}

// Jobs implements tools.JobOwner: the session's table, made on first use.
func (o jobOwner) Jobs() *tools.Jobs {
	j, s := o.j, o.s
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.table == nil {
		j.table = tools.NewJobs(tools.DefaultJobLimit, func(info tools.JobInfo) {
			if info.SpawnFailed {
				s.queueNoticeLate(s.jobNotice(info))
				return
			}
			s.queueNotice(s.jobNotice(info))
		})
	}
	return j.table
}

// terminalSandbox is the optional part of a Sandbox that builds the
// command of a persistent terminal (its PTY the shell's controlling
// terminal).
type terminalSandbox interface {
	TerminalCommand(mode sandbox.Mode, cwd string) tools.CommandFunc
}

// Terminals implements terminal.Host: the session's terminals, opened
// under the calls' mode through the sandbox's terminal command (a
// Sandbox without one opens none in a confining mode), without the model
// keys in their environment.
func (o jobOwner) Terminals() terminal.Scope {
	s := o.s
	sc := terminal.Scope{Manager: &s.terms, Mode: o.mode, Cwd: s.cwd}
	switch sb := s.eng.cfg.Sandbox.(type) {
	case nil:
		sc.Env = withoutSecrets(os.Environ())
	case terminalSandbox:
		sc.Command = scrubbed(sb.TerminalCommand(o.mode, s.cwd))
	default:
		mode := o.mode
		sc.Command = func(context.Context, string, string) (*exec.Cmd, error) {
			return nil, fmt.Errorf("%s this sandbox cannot open terminals", sandbox.Marker(mode))
		}
	}
	return sc
}

// runnerFailedLine is what job_output adds to the reads of a job whose
// sandbox runner failed: the reference agent's marker.
const runnerFailedLine = "[sandbox: the sandbox runner itself failed under %s mode — the command did not run; this is a sandbox problem, not a command failure]"

// JobSandbox implements tools.JobOwner with the judgement bash results
// get from the Sandbox (Annotate): a job that could not be spawned under a
// confining sandbox, or whose runner reported the sandbox unavailable, did
// not run; one that failed on a denied access is marked with the denial
// marker. A job killed by a signal was not denied.
func (o jobOwner) JobSandbox(exitCode int, stderr string, startErr error) string {
	if !o.confined {
		return ""
	}
	if startErr != nil {
		return fmt.Sprintf(runnerFailedLine, o.mode)
	}
	if exitCode < 0 {
		return ""
	}
	switch sandbox.Classify(exitCode, stderr, o.mode) {
	case sandbox.Unavailable:
		return fmt.Sprintf(runnerFailedLine, o.mode)
	case sandbox.Denied:
		return sandbox.DenialNote(o.mode, stderr, o.s != nil && o.s.eng.cfg.NetworkOff)
	}
	return ""
}

// jobNotice is the message that tells the model a job ended: "background
// job bash-1 (bash: CMD) finished [status: …]. Read its output with
// job_output.", from the plugin tool-jobs, form notice, summarized as
// "bash CMD [status: …]" (bounded).
func (s *Session) jobNotice(info tools.JobInfo) sessionlog.UserMessage {
	text := fmt.Sprintf("background job %s (%s: %s) finished %s. Read its output with job_output.", info.ID, info.Kind, info.Label, info.StatusLine())
	return sessionlog.UserMessage{
		Content: []sessionlog.ContentPart{sessionlog.TextPart(text)},
		Source:  pluginSource(jobsPlugin, "notice", boundSummary(info.Kind+" "+info.Label+" "+info.StatusLine())),
		ID:      s.eng.newID(),
	}
}

// boundSummary cuts a notice summary longer than noticeSummaryChars to
// one code unit less and an ellipsis, as the reference does.
func boundSummary(s string) string {
	if jsrules.UTF16Len(s) <= noticeSummaryChars {
		return s
	}
	head, _ := jsrules.UTF16Prefix(s, noticeSummaryChars-1)
	return head + "…"
}

// stopWhere stops (and forgets) every job whose mode matches, waiting for
// each tree to end, and returns how many it stopped.
func (j *jobs) stopWhere(match func(mode sandbox.Mode) bool) int {
	j.mu.Lock()
	var stops []func()
	for id, jb := range j.live {
		if match(jb.mode) {
			stops = append(stops, jb.stop)
			delete(j.live, id)
		}
	}
	j.mu.Unlock()
	var wg sync.WaitGroup
	for _, stop := range stops {
		wg.Go(stop)
	}
	wg.Wait()
	return len(stops)
}

// stopAll stops every job. The session is going away: their ends queue no
// notice (nobody would read it).
func (j *jobs) stopAll() int {
	j.mu.Lock()
	t := j.table
	j.mu.Unlock()
	if t != nil {
		t.Close()
	}
	return j.stopWhere(func(sandbox.Mode) bool { return true })
}

// stopWiderThan stops the jobs started under a mode wider than mode. The
// session goes on, so their ends are notified like any other.
func (j *jobs) stopWiderThan(mode sandbox.Mode) int {
	return j.stopWhere(func(m sandbox.Mode) bool { return m.Wider(mode) })
}
