package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reel-agent/reel/agent/codemode"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/sessionquery"
	"github.com/reel-agent/reel/agent/skills"
	"github.com/reel-agent/reel/agent/terminal"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// Engine owns the live sessions of one process: their logs, their models,
// their turn loops. It knows nothing of the protocol a client speaks.
type Engine struct {
	cfg Config
	log *slog.Logger
	// confined has the escalation arguments on bash and write; full is for
	// danger-full-access, where there is nothing to escalate to.
	confined, full *tools.Set
	// mcp connects sessions' MCP servers.
	mcp MCPConnector

	// instr is the resolved instruction-file configuration (nil: off);
	// repeatThresholds the sorted reminder thresholds (nil: off).
	instr            *instrConfig
	repeatThresholds []int

	mu       sync.Mutex
	sessions map[string]*Session
	opened   int // sessions opened in this process
	// lastChild is the createdAt of the last child session (childCreatedAt).
	lastChild int64
	closed    bool
	// shutting is set when Close begins: no inbox starts a turn then.
	shutting atomic.Bool
}

// New returns an engine for cfg.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil || cfg.Models == nil {
		return nil, errors.New("agent: Config needs a Store and Models")
	}
	if cfg.Mode == "" {
		cfg.Mode = sandbox.WorkspaceWrite
	}
	if !sandbox.ValidMode(string(cfg.Mode)) {
		return nil, fmt.Errorf("agent: unknown sandbox mode %q (want %s)", cfg.Mode, sandbox.ModeNames)
	}
	if cfg.Approval == "" {
		cfg.Approval = ApprovalOnRequest
	}
	if cfg.Approval != ApprovalOnRequest && cfg.Approval != ApprovalNever {
		return nil, fmt.Errorf("agent: unknown approval policy %q (want on-request or never)", cfg.Approval)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = newUUID
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{
		cfg: cfg, log: cfg.Logger, sessions: map[string]*Session{},
		confined: toolSet(cfg, true),
		full:     toolSet(cfg, false),
		instr:    resolveInstructions(cfg.Instructions),
		mcp:      cfg.MCP,
	}
	if e.mcp == nil {
		e.mcp = liveMCP{e}
	}
	if !cfg.DisableRepeatReminders {
		t, err := repeatThresholds(cfg.RepeatThresholds)
		if err != nil {
			return nil, err
		}
		e.repeatThresholds = t
	}
	// The engine's own context messages (reminders, instruction files)
	// are entered before the configured pre-step hooks run.
	e.cfg.PreStep = ChainPreSteps(e.contextHook, cfg.PreStep)
	return e, nil
}

// DefaultMode is the sandbox mode of a session whose log sets none.
func (e *Engine) DefaultMode() sandbox.Mode { return e.cfg.Mode }

func (e *Engine) now() int64 { return e.cfg.Now().UnixMilli() }

func (e *Engine) newID() string { return e.cfg.NewID() }

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// NewSession creates a session working in cwd (absolute) with a new log,
// which records the default mode and approval policy, and connects the
// MCP servers of its options.
func (e *Engine) NewSession(ctx context.Context, cwd string, opts ...SessionOption) (*Session, error) {
	var o sessionOptions
	for _, opt := range opts {
		opt(&o)
	}
	if !filepath.IsAbs(cwd) {
		return nil, invalid(fmt.Sprintf("cwd %q must be an absolute path", cwd))
	}
	// Under replay a session takes its recording's id: the recorded texts
	// that name it (a child's relayed messages) hold.
	e.mu.Lock()
	id := e.nextIDLocked(false)
	if e.cfg.FirstSessionID != "" && e.opened == 0 {
		id = e.cfg.FirstSessionID
	}
	e.mu.Unlock()
	h := sessionlog.NewHeader(id, e.now(), cwd)
	w, err := e.cfg.Store.Create(ctx, h)
	if err != nil {
		// An id that names an existing (or live) session is the client's
		// or the command line's mistake, not the agent's.
		if errors.Is(err, fs.ErrExist) || errors.Is(err, sessionlog.ErrInUse) {
			return nil, invalid(fmt.Sprintf("session %s already exists (pick another --session-id, or load it with session/load): %v", id, err))
		}
		return nil, fmt.Errorf("create session log: %w", err)
	}
	s, index, err := e.register(sessionlog.NewSession(sessionlog.New(h), w), id, cwd, 0, nil)
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	if o.questions {
		if err := s.offerQuestions(); err != nil {
			return nil, e.abandon(s, err)
		}
	}
	now := e.now()
	if _, err := s.emit(ctx, now, sessionlog.TypeSandboxMode, sessionlog.SandboxModeData{Mode: string(e.cfg.Mode), Source: "config"}, nil, nil); err != nil {
		return nil, e.abandon(s, err)
	}
	if _, err := s.emit(ctx, now, sessionlog.TypeApprovalPolicy, sessionlog.ApprovalPolicyData{Policy: e.cfg.Approval, Source: "config"}, nil, nil); err != nil {
		return nil, e.abandon(s, err)
	}
	if err := s.connectMCP(ctx, index, o.mcp); err != nil {
		return nil, e.abandon(s, err)
	}
	if err := s.checkpoint(ctx); err != nil {
		return nil, e.abandon(s, err)
	}
	e.log.Info("session created", "session", id, "cwd", cwd)
	s.sessionStart("startup")
	return s, nil
}

// LoadSession opens the log of session id (committing crash repair) and
// makes it live; cwd, when absolute, replaces the recorded working
// directory. The MCP servers of its options are connected. The next step
// writes a resume header.
func (e *Engine) LoadSession(ctx context.Context, id, cwd string, opts ...SessionOption) (*Session, error) {
	var o sessionOptions
	for _, opt := range opts {
		opt(&o)
	}
	e.mu.Lock()
	_, open := e.sessions[id]
	e.mu.Unlock()
	if open {
		return nil, invalid(fmt.Sprintf("session %s is already open in this process", id))
	}
	loaded, w, err := e.cfg.Store.Open(ctx, id)
	if err != nil {
		// An unknown id, or an id that cannot name a log file at all, is the
		// client's mistake; a log that fails to load is the agent's error.
		if errors.Is(err, sessionlog.ErrNotFound) || errors.Is(err, sessionlog.ErrBadID) {
			return nil, invalid(fmt.Sprintf("unknown session %q: %v", id, err))
		}
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	if len(loaded.Closers) > 0 {
		e.log.Warn("repaired an interrupted turn", "session", id, "closers", len(loaded.Closers))
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		cwd = loaded.Log.Header().Cwd
	}
	// The replay position of a loaded session is the number of model calls
	// its log already holds, counted as replay derives its script. A live
	// model (one shared provider, or the session's own) takes no position,
	// so a live load does not read the calls at all.
	done := 0
	if _, shared := e.cfg.Models.(SharedModels); !shared && o.provider == nil {
		n, derr := replay.CountLogCalls(loaded.Log)
		if derr != nil {
			e.log.Warn("cannot count the recorded model calls", "session", id, "err", derr)
		}
		done = n
	}
	s, index, err := e.register(sessionlog.NewSession(loaded.Log, w), id, cwd, done, o.provider)
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	if c, ok := loaded.Log.Header().Child(); ok {
		s.depth, s.child = c.Depth, true
		// A child never runs wider than its ancestors: the live parent
		// that loads it binds it; with none, the modes and policies its
		// stored ancestors logged do.
		if o.parent != nil {
			s.mu.Lock()
			s.up = o.parent
			s.mu.Unlock()
		} else {
			mode, policy, err := e.storedCeiling(ctx, c.Parent)
			if err != nil {
				return nil, e.abandon(s, fmt.Errorf("load session %s: the modes of its ancestors: %w", id, err))
			}
			s.mu.Lock()
			s.ceilingMode, s.ceilingApprove, s.upID = mode, policy, c.Parent
			s.mu.Unlock()
		}
	}
	if o.questions {
		if err := s.offerQuestions(); err != nil {
			return nil, e.abandon(s, err)
		}
	}
	if err := s.connectMCP(ctx, index, o.mcp); err != nil {
		return nil, e.abandon(s, err)
	}
	if len(o.mcp) > 0 {
		if err := s.checkpoint(ctx); err != nil {
			return nil, e.abandon(s, err)
		}
	}
	if err := s.settleRestore(ctx); err != nil {
		return nil, e.abandon(s, err)
	}
	s.sessionStart("resume")
	return s, nil
}

// register adds a live session with its model (prov, or else one from
// Config.Models); index is its place among the sessions opened in this
// process.
func (e *Engine) register(ls *sessionlog.Session, id, cwd string, done int, prov llm.Provider) (s *Session, index int, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, 0, ErrShuttingDown
	}
	if _, dup := e.sessions[id]; dup {
		return nil, 0, invalid(fmt.Sprintf("session %s is already open in this process", id))
	}
	index = e.opened
	if prov == nil {
		if prov, err = e.cfg.Models.ForSession(index, cwd, done); err != nil {
			return nil, 0, fmt.Errorf("model for session %s: %w", id, err)
		}
	}
	e.opened++
	s = &Session{eng: e, id: id, cwd: cwd, provider: prov, log: ls, firstOfInstance: true,
		spill: tools.NewSpillBudget(tools.DefaultSessionSpillBytes)}
	s.catchUp()
	// Where the log lives, for hooks (looked up once: a hook runs at
	// every tool call).
	if tp, ok := e.cfg.Store.(transcriptPather); ok {
		s.transcript = tp.Path(id)
	}
	e.sessions[id] = s
	return s, index, nil
}

// abandon forgets a session that failed while opening (closing its log and
// its MCP servers) and returns err.
func (e *Engine) abandon(s *Session, err error) error {
	_ = s.close(false)
	e.mu.Lock()
	delete(e.sessions, s.id)
	e.mu.Unlock()
	return err
}

// Session returns the live session id.
func (e *Engine) Session(id string) (*Session, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.sessions[id]
	if !ok {
		return nil, invalid(fmt.Sprintf("unknown session %q (create it with session/new or load it with session/load)", id))
	}
	return s, nil
}

// SessionInfo describes one stored session.
type SessionInfo struct {
	ID, Cwd string
	// CreatedAt is the log header's creation time; UpdatedAt the time of
	// the session's last activity (sessionlog.Info.UpdatedAt).
	CreatedAt, UpdatedAt time.Time
	// Title is the session's title ("" when it has none): the latest
	// session/title of its log.
	Title string
}

// Sessions lists the stored top-level sessions (live or not; not the
// subagents' children) whose cwd is cwd, or all of them when cwd is empty. A log that cannot be listed is reported to
// the logger and skipped.
func (e *Engine) Sessions(ctx context.Context, cwd string) iter.Seq[SessionInfo] {
	return func(yield func(SessionInfo) bool) {
		for info, err := range e.cfg.Store.List(ctx) {
			if err != nil {
				e.log.Warn("listing sessions", "err", err)
				continue
			}
			// A subagent's session is its parent's business, not the
			// editor's: it is not listed.
			if (cwd != "" && cwd != info.Cwd) || info.Parent != "" {
				continue
			}
			t, _ := e.storedTitle(ctx, info.ID)
			if !yield(SessionInfo{ID: info.ID, Cwd: info.Cwd, CreatedAt: time.UnixMilli(info.CreatedAt).UTC(),
				UpdatedAt: time.UnixMilli(max(info.UpdatedAt, info.CreatedAt)).UTC(), Title: t.Text}) {
				return
			}
		}
	}
}

// CloseSession stops the session's background jobs and background
// children (theirs first), closes its log and forgets it. A session
// running a prompt is not closed (ErrBusy); a turn its inbox started is
// cancelled.
func (e *Engine) CloseSession(id string) error {
	s, err := e.Session(id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	busy := s.busy
	if !busy {
		s.ts.quiet = true
	}
	s.mu.Unlock()
	if !busy {
		e.drainKids(s)
		s.stopInbox()
	}
	if err := s.close(true); err != nil {
		return err
	}
	e.mu.Lock()
	delete(e.sessions, id)
	e.mu.Unlock()
	return nil
}

// Close stops every session's background jobs and closes every session log
// (syncing it). Callers end running prompts first (cancel them and wait):
// a prompt still running when its log closes fails its last writes. After
// Close the engine opens no session.
func (e *Engine) Close() error {
	e.shutting.Store(true)
	e.mu.Lock()
	e.closed = true
	live := make([]*Session, 0, len(e.sessions))
	for _, s := range e.sessions {
		live = append(live, s)
	}
	e.mu.Unlock()
	// The turns inboxes started (background children's among them) end
	// first, writing their turn ends, before any log closes.
	for _, s := range live {
		s.mu.Lock()
		s.ts.quiet = true
		if s.ts.bgCancel != nil {
			s.ts.bgCancel()
		}
		s.mu.Unlock()
	}
	for _, s := range live {
		s.stopInbox()
	}
	// A title call still running gets a moment to land (agent/title.go).
	settleTitles(live)
	// Sessions are closed outside e.mu: a session's lock is never taken
	// while e.mu is held (CloseSession takes them in the other order).
	var errs []error
	for _, s := range live {
		if err := s.close(false); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// toolSet is the tool set of the engine: reel's own tools (with the
// escalation arguments when escalation is set), web_fetch and skill.
func toolSet(cfg Config, escalation bool) *tools.Set {
	s, err := toolSetWith(cfg, escalation, nil)
	if err != nil {
		// The tools have unique names and valid schemas; the tests hold
		// them to it.
		panic(err)
	}
	return s
}

// toolSetWith is toolSet followed by extra (a session's MCP tools).
func toolSetWith(cfg Config, escalation bool, extra []tools.Tool) (*tools.Set, error) {
	list := tools.DefaultTools(tools.Options{Escalation: escalation})
	list = append(list, tools.WebFetch{NetworkOff: cfg.NetworkOff}, skills.Tool{Options: cfg.Skills}, tools.Subagent{}, tools.Subagent{Fork: true},
		tools.SendMessage{}, tools.ListAgents{}, tools.InterruptAgent{})
	if cfg.Terminals {
		list = append(list, terminal.Tools()...)
	}
	if cfg.SessionQuery {
		list = append(list, sessionquery.EventRead{})
	}
	if cfg.LSP != nil {
		list = append(list, cfg.LSP)
	}
	if cfg.CodeMode {
		list = append(list, codemode.Tool{Limits: cfg.CodeLimits})
	}
	return tools.NewSet(append(list, extra...)...)
}

// toolsFor returns the tool set offered under mode.
func (e *Engine) toolsFor(mode sandbox.Mode) *tools.Set {
	if mode == sandbox.DangerFullAccess {
		return e.full
	}
	return e.confined
}
