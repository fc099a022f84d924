package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/terminal"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// Session is one live session: its write-through log, its model and the
// state of its loop instance. Its methods are safe for concurrent use; one
// prompt runs at a time.
type Session struct {
	eng *Engine
	id  string
	cwd string
	// asks says the session offers ask_user_question (askrun.go); set
	// before the session runs, under mu.
	asks bool
	// transcript is the file holding the log ("" when the store has none
	// of its own).
	transcript string
	// compacted is the last compaction this process made (notice.go).
	compacted Compaction
	// memo keeps the provider's encoding of the history messages from one
	// step to the next (see llm.Memo).
	memo     llm.Memo
	provider llm.Provider
	// keep holds what tools keep for the session's life (the lsp tool's
	// language servers); close closes it.
	keep tools.Keep

	// cpMu serializes the workspace captures (agent/rewind.go); cpTurn is
	// the turn last captured and cpTree its tree ("" when skipped).
	cpMu   sync.Mutex
	cpTurn int
	cpTree string

	mu  sync.Mutex // guards log appends and the fields below
	log *sessionlog.Session
	// busy is set while a prompt runs.
	busy bool
	// firstOfInstance is true until this process's first step of the
	// session has written its header (initial or resume).
	firstOfInstance bool
	// newSeries is set when the next step begins a new message series.
	newSeries bool
	closed    bool
	// curMode and curApproval track the last sandbox/mode and
	// approval/policy events ("" until one is logged).
	curMode     sandbox.Mode
	curApproval string
	// curModel is the last model/selected ("" until one is logged).
	curModel string
	// curEffort is the reasoning effort of the last model/selected.
	curEffort string
	// invariant checks each step's request against the log when the
	// engine runs with Config.Invariant (sessionlog.CheckRequest, made
	// incremental).
	invariant sessionlog.RequestChecker
	// up is, for a subagent's session, the live session it was delegated
	// from (nil: none live); ceiling is, for a child loaded with no live
	// parent, the narrowest mode and policy its stored ancestors hold
	// ("": none). Its effective mode and policy are never wider than
	// either (agent/submode.go).
	up             *Session
	ceilingMode    sandbox.Mode
	ceilingApprove string
	// upID is, for a child loaded with no live parent, its parent's id:
	// should the parent be loaded later, it binds the child from then on
	// (upSession).
	upID string

	// depth is the session's delegation depth (0: a top-level session);
	// child is set for a subagent's session, whose descriptor is written
	// when its first step starts (then nil).
	depth      int
	child      bool
	descriptor *sessionlog.SubagentDescriptorData

	// jobs are the session's background processes, terms its persistent
	// terminals.
	jobs  jobs
	terms terminal.Manager
	// mcp is the session's MCP servers (nil: none); confined and full are
	// then the engine's tool sets plus their tools (nil: the engine's).
	// mcpProblems are the servers that could not be used, for the next
	// prompt's client; always the session-wide answers to MCP tools'
	// permission requests, by alwaysKey of (server, remote tool name),
	// never by reel tool name (approval/decided).
	mcp            MCPConnection
	confined, full *tools.Set
	mcpProblems    []string
	always         map[string]string
	// askedTool is "id\x00key" of the last approval/asked (key: its
	// alwaysKey, "" when it is not about an MCP tool), which the
	// approval/decided after it answers.
	askedTool string
	// spill caps the bytes the session's tool output may spill to disk.
	spill *tools.SpillBudget

	// observed is what the file tools saw of each file in this process
	// (the read-before-edit rule); repeat the run of identical tool calls
	// and the reminders for the next step; instr the instruction files'
	// state. None of them is derived from the log: like the reference's,
	// they start empty when a session is loaded.
	observed fileObservations
	repeat   repeatChain
	notices  notices
	catalog  catalogState
	skillSet skillScan
	instr    instrState

	// started is closed when the SessionStart hooks have run; stopStart
	// cancels them; startContext is their context, for the next prompt;
	// noticed is set once the engine's notices were shown.
	started      chan struct{}
	stopStart    context.CancelFunc
	startContext []*HookContext
	noticed      bool

	// title is the session's title work (agent/title.go).
	title titleState

	// ts is the session's inbox and turn loop (agent/inbox.go), guarded
	// by mu; kids are its background children (agent/continuable.go).
	ts   turnState
	kids kids
	// For a background child: parentSess is the session that started it
	// (report's target), background offers it the report tool and its
	// system prompt section, and afterTurnOf, until its first activation
	// starts, is the parent whose turn it waits for
	// (Config.ChildAfterTurn), until the parent's idled count passes
	// afterIdle. All guarded by mu.
	parentSess  *Session
	background  bool
	afterTurnOf *Session
	afterIdle   uint64
	// spent is what the session's model calls used, per model
	// (agent/spent.go), kept by track with callModel, the model of the
	// last request/context; guarded by mu.
	spent     []ModelTokens
	callModel string
	// usage says where History's last usage is, kept by track (guarded
	// by mu): see usageMark.
	usage usageMark
}

// fileObservations is a session's tools.Observations.
type fileObservations struct {
	mu sync.Mutex
	m  map[string]tools.Observation
}

var _ tools.Observations = (*fileObservations)(nil)

// Observation implements tools.Observations.
func (o *fileObservations) Observation(key string) (tools.Observation, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	v, ok := o.m[key]
	return v, ok
}

// Observe implements tools.Observations.
func (o *fileObservations) Observe(key string, v tools.Observation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]tools.Observation{}
	}
	o.m[key] = v
}

// ID is the session's id.
func (s *Session) ID() string { return s.id }

// Cwd is the session's working directory.
func (s *Session) Cwd() string { return s.cwd }

// emit appends one event of type typ whose data is p's canonical encoding,
// with its surface fields, stamping seq and time. It is the only way the
// engine writes to a log.
func (s *Session) emit(ctx context.Context, now int64, typ string, p sessionlog.Payload, op *sessionlog.SurfaceOp, sources []int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emitLocked(ctx, now, typ, p, op, sources)
}

func (s *Session) emitLocked(ctx context.Context, now int64, typ string, p sessionlog.Payload, op *sessionlog.SurfaceOp, sources []int) (int, error) {
	if s.closed {
		return 0, fmt.Errorf("session %s is closed", s.id)
	}
	seq := s.log.Log().Len()
	e := sessionlog.Event{Type: typ, Seq: seq, Time: now, Data: p.AppendJSON(nil), SurfaceOp: op, SourceEventSeqs: sources}
	if err := s.log.Append(ctx, e); err != nil {
		return 0, fmt.Errorf("session %s: append %s: %w", s.id, typ, err)
	}
	s.track(&e)
	return seq, nil
}

// eventData returns the data of the events with the given seqs (shared
// with the log: do not modify it).
func (s *Session) eventData(seqs []int) []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	lg := s.log.Log()
	out := make([]json.RawMessage, len(seqs))
	for i, seq := range seqs {
		if e := lg.Event(seq); e != nil {
			out[i] = e.Data
		}
	}
	return out
}

// releaseViews lets the pages read from views of the stored log go (see
// sessionlog.DataViews).
func (s *Session) releaseViews() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log.ReleaseViews()
}

// checkpoint makes the log durable.
func (s *Session) checkpoint(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.log.Checkpoint(ctx); err != nil {
		return fmt.Errorf("session %s: checkpoint: %w", s.id, err)
	}
	return nil
}

// track keeps the effective mode and approval policy current as events
// are appended (and, through catchUp, for a loaded log).
func (s *Session) track(e *sessionlog.Event) { s.trackEvent(e, false) }

// trackEvent is track; valid says e's data is known to be valid JSON
// (sessionlog.Log.DataValid).
func (s *Session) trackEvent(e *sessionlog.Event, valid bool) {
	s.usage.see(e)
	switch e.Type {
	case sessionlog.TypeRequestContext:
		decode := sessionlog.DecodeData[sessionlog.RequestContextData]
		if valid {
			decode = sessionlog.DecodeValidData[sessionlog.RequestContextData]
		}
		if d, err := decode(e); err == nil {
			s.callModel = d.Model
		}
	case sessionlog.TypeAssistantMessage:
		s.trackSpent(e)
	case sessionlog.TypeSandboxMode:
		if d, err := sessionlog.DecodeData[sessionlog.SandboxModeData](e); err == nil && d.Mode != "" {
			s.curMode = sandbox.Mode(d.Mode)
		}
	case sessionlog.TypeApprovalPolicy:
		if d, err := sessionlog.DecodeData[sessionlog.ApprovalPolicyData](e); err == nil && d.Policy != "" {
			s.curApproval = d.Policy
		}
	case sessionlog.TypeModelSelected:
		if d, err := sessionlog.DecodeData[sessionlog.ModelSelectedData](e); err == nil && d.Model != "" {
			s.curModel, s.curEffort = d.Model, d.ReasoningEffort
		}
	case sessionlog.TypeApprovalAsked:
		if d, err := sessionlog.DecodeData[sessionlog.ApprovalAskedData](e); err == nil {
			// Only an MCP question's answer can hold for the session; one
			// without its server (an older log's) holds for nothing.
			key := ""
			if d.MCPServer != "" {
				key = alwaysKey(d.MCPServer, d.MCPTool)
			}
			s.askedTool = d.ID + "\x00" + key
		}
	case sessionlog.TypeApprovalDecided:
		// An "always" answer holds for the tool of the question it answers
		// (the approval/asked just before it, same id).
		d, err := sessionlog.DecodeData[sessionlog.ApprovalDecidedData](e)
		id, tool, _ := strings.Cut(s.askedTool, "\x00")
		if err == nil && d.ID == id && tool != "" && (d.Outcome == sessionlog.OutcomeAllowedAlways || d.Outcome == sessionlog.OutcomeRejectedAlways) {
			if s.always == nil {
				s.always = map[string]string{}
			}
			s.always[tool] = d.Outcome
		}
	}
}

// catchUp reads the mode and policy of a loaded log.
func (s *Session) catchUp() {
	lg := s.log.Log()
	evs := lg.Events()
	for i := range evs {
		s.trackEvent(&evs[i], lg.DataValid(evs[i].Seq))
	}
}

// Mode returns the effective sandbox mode: the last sandbox/mode event,
// else the engine's default, narrowed to every ancestor's current mode
// (a subagent never runs wider than the sessions above it).
func (s *Session) Mode() sandbox.Mode { return s.modeAt(0) }

// modeAt is Mode for a session hops generations below the one asked.
func (s *Session) modeAt(hops int) sandbox.Mode {
	s.mu.Lock()
	mode, ceiling := s.ownModeLocked(), s.ceilingMode
	s.mu.Unlock()
	if ceiling != "" {
		mode = narrowerMode(mode, ceiling)
	}
	if up := s.upSession(hops); up != nil {
		mode = narrowerMode(mode, up.modeAt(hops+1))
	}
	return mode
}

// ownModeLocked is the mode the session's own log sets, else the engine's
// default (with s.mu held).
func (s *Session) ownModeLocked() sandbox.Mode {
	if s.curMode != "" {
		return s.curMode
	}
	return s.eng.cfg.Mode
}

// approval returns the effective approval policy: the session's own,
// narrowed (to never) by every ancestor's current one.
func (s *Session) approval() string { return s.approvalAt(0) }

// approvalAt is approval for a session hops generations below the one
// asked.
func (s *Session) approvalAt(hops int) string {
	s.mu.Lock()
	policy, ceiling := s.ownApprovalLocked(), s.ceilingApprove
	s.mu.Unlock()
	if ceiling != "" {
		policy = narrowerPolicy(policy, ceiling)
	}
	if up := s.upSession(hops); up != nil {
		policy = narrowerPolicy(policy, up.approvalAt(hops+1))
	}
	return policy
}

// ownApprovalLocked is the policy the session's own log sets, else the
// engine's default (with s.mu held).
func (s *Session) ownApprovalLocked() string {
	if s.curApproval != "" {
		return s.curApproval
	}
	return s.eng.cfg.Approval
}

// SetMode switches the session's sandbox mode from its next step on (and
// its descendants' next tool calls: none runs wider than it): it logs
// sandbox/mode (source "client"), makes it durable, and stops the
// background jobs, its own and its live descendants', started under a
// mode wider than their sessions' effective one now.
func (s *Session) SetMode(ctx context.Context, mode string) error {
	if !sandbox.ValidMode(mode) {
		return invalid(fmt.Sprintf("unknown mode %q (want %s)", mode, sandbox.ModeNames))
	}
	if _, err := s.emit(ctx, s.eng.now(), sessionlog.TypeSandboxMode, sessionlog.SandboxModeData{Mode: mode, Source: "client"}, nil, nil); err != nil {
		return err
	}
	if err := s.checkpoint(ctx); err != nil {
		return err
	}
	// A job started under a wider mode (an approved escalation) must not
	// keep its rights after the client narrowed the session, nor one a
	// live descendant started: their effective modes follow this one.
	s.eng.stopWiderJobs(s)
	return nil
}

// lastTurn is the highest turn number in the log.
func (s *Session) lastTurn() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	evs := s.log.Log().Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == sessionlog.TypeTurnStart {
			d, _ := sessionlog.DecodeData[sessionlog.TurnData](&evs[i])
			return d.Turn
		}
	}
	return 0
}

// begin marks the session busy with a prompt; end clears it. This is the
// engine's own guard, for every caller; the ACP adapter also refuses a
// second session/prompt at the frame level (with the same words), because
// the SDK would cancel the running prompt before the engine could refuse.
// A turn the inbox started is not a prompt: a prompt waits for it
// (Session.acquire).
func (s *Session) begin() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return invalid(fmt.Sprintf("session %s is closed", s.id))
	case s.busy:
		return busy(fmt.Sprintf("session %s is busy with another prompt; cancel it or wait", s.id))
	}
	s.busy = true
	return nil
}

func (s *Session) end() {
	s.mu.Lock()
	s.busy = false
	s.mu.Unlock()
}

// close stops the session's jobs and closes its log. With refuseBusy, a
// session running a prompt is left alone (ErrBusy).
func (s *Session) close(refuseBusy bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if refuseBusy && s.busy {
		return busy(fmt.Sprintf("session %s is busy; cancel the prompt first", s.id))
	}
	s.jobs.stopAll()
	s.terms.CloseAll()
	if err := s.keep.Close(); err != nil {
		s.eng.log.Warn("closing the session's language servers", "session", s.id, "err", err)
	}
	s.stopTitle()
	if s.stopStart != nil {
		s.stopStart()
	}
	if s.mcp != nil {
		if err := s.mcp.Close(); err != nil {
			s.eng.log.Warn("closing MCP servers", "session", s.id, "err", err)
		}
		s.mcp = nil
	}
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.log.Close(); err != nil {
		return fmt.Errorf("session %s: close: %w", s.id, err)
	}
	return nil
}
