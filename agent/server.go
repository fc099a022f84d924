package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// Server implements the agent side of ACP.
type Server struct {
	cfg Config
	log *slog.Logger
	// confined has the escalation arguments on bash and write; full is for
	// danger-full-access, where there is nothing to escalate to.
	confined, full *tools.Set
	conn           *acp.AgentSideConnection

	mu       sync.Mutex
	sessions map[string]*session
	// active counts running handlers that touch sessions; closing makes
	// late handlers refuse, so shutdown can wait for the rest.
	active  int
	closing bool
	idle    *sync.Cond
	// serveCtx is Serve's context: ending it (SIGTERM) also ends prompts.
	serveCtx context.Context
	opened   int // sessions opened in this process
	clientFS acp.FileSystemCapabilities
}

var (
	_ acp.Agent       = (*Server)(nil)
	_ acp.AgentLoader = (*Server)(nil)
)

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Models == nil {
		return nil, errors.New("agent: Config needs a Store and Models")
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeWorkspaceWrite
	}
	if !ValidMode(cfg.Mode) {
		return nil, fmt.Errorf("agent: unknown sandbox mode %q (want read-only, workspace-write or danger-full-access)", cfg.Mode)
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
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	srv := &Server{
		cfg: cfg, log: cfg.Logger, sessions: map[string]*session{},
		confined: tools.Default(tools.Options{Escalation: true}),
		full:     tools.Default(tools.Options{}),
	}
	srv.idle = sync.NewCond(&srv.mu)
	return srv, nil
}

// Serve speaks ACP on in/out until the peer closes in or ctx ends, then
// closes every session's log.
//
// A client that stops reading out is treated as gone once a frame cannot be
// written within Config.WriteTimeout: the running work is cancelled (turns
// end aborted on their logs) and Serve returns an error wrapping
// ErrStalled. Once shutdown began, a frame write is bounded by one second.
func (srv *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv.mu.Lock()
	srv.serveCtx = ctx
	srv.mu.Unlock()
	fl := newInflight()
	w := newLockedWriter(out, fl, srv.cfg.WriteTimeout)
	ff := newFrameFilter(in, w, srv.log, fl)
	conn := acp.NewAgentSideConnection(srv, w, ff)
	conn.SetLogger(srv.log)
	srv.conn = conn
	// The connection reads (and may log, or dispatch to handlers that use
	// srv.conn) only from here on.
	close(ff.ready)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	case <-w.dead:
		srv.log.Error("the client stopped reading; cancelling the running work", "err", w.cause())
		cancel()
	}
	w.hasten()
	srv.shutdown()
	err := srv.closeAll()
	if c := w.cause(); errors.Is(c, ErrStalled) {
		err = errors.Join(c, err)
	}
	return err
}

// errShuttingDown refuses work that arrives while the server shuts down.
var errShuttingDown = errors.New("the agent is shutting down")

// enter registers a running handler; it fails once shutdown began.
func (srv *Server) enter() error {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.closing {
		return errShuttingDown
	}
	srv.active++
	return nil
}

// exit unregisters a handler.
func (srv *Server) exit() {
	srv.mu.Lock()
	srv.active--
	srv.idle.Broadcast()
	srv.mu.Unlock()
}

// shutdown refuses new handlers and waits for running ones (their
// contexts were cancelled with the connection, so they end promptly).
func (srv *Server) shutdown() {
	srv.mu.Lock()
	srv.closing = true
	for srv.active > 0 {
		srv.idle.Wait()
	}
	srv.mu.Unlock()
}

// closeAll stops every session's background jobs and closes every session
// log (syncing it), after waiting for running prompts to finish writing
// their turn end.
func (srv *Server) closeAll() error {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	var errs []error
	for id, s := range srv.sessions {
		s.jobs.stopAll()
		s.mu.Lock()
		if !s.closed {
			s.closed = true
			if err := s.log.Close(); err != nil {
				errs = append(errs, fmt.Errorf("session %s: close: %w", id, err))
			}
		}
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

func (srv *Server) now() int64 { return srv.cfg.Now().UnixMilli() }

func (srv *Server) newID() string { return srv.cfg.NewID() }

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// notify sends a session/update; a failure (the client went away) is logged.
func (srv *Server) notify(ctx context.Context, s *session, u acp.SessionUpdate) {
	if err := srv.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: acp.SessionId(s.id), Update: u}); err != nil {
		srv.log.Debug("session/update not delivered", "session", s.id, "err", err)
	}
}

// Initialize implements acp.Agent.
func (srv *Server) Initialize(_ context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	srv.mu.Lock()
	srv.clientFS = p.ClientCapabilities.Fs
	srv.mu.Unlock()
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentInfo:       &acp.Implementation{Name: "reel", Version: srv.cfg.Version},
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  acp.PromptCapabilities{EmbeddedContext: true},
			SessionCapabilities: acp.SessionCapabilities{List: &acp.SessionListCapabilities{}},
		},
		AuthMethods: srv.authMethods(),
	}, nil
}

// authMethods lists the one way to authenticate when the key is missing:
// set the variable in the agent's environment. With a key there is none.
func (srv *Server) authMethods() []acp.AuthMethod {
	if srv.cfg.MissingKey == "" {
		return []acp.AuthMethod{}
	}
	v := srv.cfg.MissingKey
	return []acp.AuthMethod{{Agent: &acp.AuthMethodAgent{
		Id:   "env:" + v,
		Name: "Set " + v,
		Description: acp.Ptr("reel reads the model API key from " + v + " in its environment: set it in the agent's " +
			"env (for Zed: agent_servers.reel.env) and restart the agent."),
	}}}
}

// errAuthRequired is the auth-required error of an agent without a key.
func (srv *Server) errAuthRequired() error {
	return acp.NewAuthRequired(map[string]any{"error": fmt.Sprintf(
		"no API key for the model: set %s in the environment reel acp starts in, then restart it (a local --base-url or --standin needs no key)",
		srv.cfg.MissingKey)})
}

// Authenticate implements acp.Agent: reel takes its key from the
// environment, so without one the client cannot authenticate it from here.
func (srv *Server) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	if srv.cfg.MissingKey != "" {
		return acp.AuthenticateResponse{}, srv.errAuthRequired()
	}
	return acp.AuthenticateResponse{}, nil
}

func (srv *Server) modes(current string) *acp.SessionModeState {
	st := &acp.SessionModeState{CurrentModeId: acp.SessionModeId(current)}
	for _, m := range modeInfo {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{Id: acp.SessionModeId(m.id), Name: m.name, Description: acp.Ptr(m.desc)})
	}
	return st
}

func invalidParams(format string, args ...any) error {
	return acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf(format, args...)})
}

// NewSession implements acp.Agent.
func (srv *Server) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.NewSessionResponse{}, err
	}
	defer srv.exit()
	if srv.cfg.MissingKey != "" {
		return acp.NewSessionResponse{}, srv.errAuthRequired()
	}
	if !filepath.IsAbs(p.Cwd) {
		return acp.NewSessionResponse{}, invalidParams("cwd %q must be an absolute path", p.Cwd)
	}
	id := srv.newID()
	srv.mu.Lock()
	if srv.cfg.FirstSessionID != "" && srv.opened == 0 {
		id = srv.cfg.FirstSessionID
	}
	srv.mu.Unlock()
	h := sessionlog.NewHeader(id, srv.now(), p.Cwd)
	w, err := srv.cfg.Store.Create(ctx, h)
	if err != nil {
		// An id that names an existing (or live) session is the client's
		// or the command line's mistake, not the agent's.
		if errors.Is(err, fs.ErrExist) || errors.Is(err, sessionlog.ErrInUse) {
			return acp.NewSessionResponse{}, invalidParams("session %s already exists (pick another --session-id, or load it with session/load): %v", id, err)
		}
		return acp.NewSessionResponse{}, fmt.Errorf("create session log: %w", err)
	}
	s, err := srv.register(sessionlog.NewSession(sessionlog.New(h), w), id, p.Cwd, 0)
	if err != nil {
		_ = w.Close()
		return acp.NewSessionResponse{}, err
	}
	now := srv.now()
	if _, err := s.emit(ctx, now, sessionlog.TypeSandboxMode, jsonObject("mode", srv.cfg.Mode, "source", "config"), nil, nil); err != nil {
		return acp.NewSessionResponse{}, err
	}
	if _, err := s.emit(ctx, now, sessionlog.TypeApprovalPolicy, jsonObject("policy", srv.cfg.Approval, "source", "config"), nil, nil); err != nil {
		return acp.NewSessionResponse{}, err
	}
	if err := s.checkpoint(ctx); err != nil {
		return acp.NewSessionResponse{}, err
	}
	srv.log.Info("session created", "session", id, "cwd", p.Cwd)
	srv.notify(ctx, s, availableCommands())
	return acp.NewSessionResponse{SessionId: acp.SessionId(id), Modes: srv.modes(srv.cfg.Mode)}, nil
}

// register adds a live session with its model.
func (srv *Server) register(ls *sessionlog.Session, id, cwd string, done int) (*session, error) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if _, dup := srv.sessions[id]; dup {
		return nil, invalidParams("session %s is already open in this process", id)
	}
	prov, err := srv.cfg.Models.ForSession(srv.opened, cwd, done)
	if err != nil {
		return nil, fmt.Errorf("model for session %s: %w", id, err)
	}
	srv.opened++
	s := &session{id: id, index: srv.opened - 1, cwd: cwd, provider: prov, log: ls, firstOfInstance: true,
		spill: tools.NewSpillBudget(tools.DefaultSessionSpillBytes)}
	s.catchUp()
	srv.sessions[id] = s
	return s, nil
}

func (srv *Server) lookup(id acp.SessionId) (*session, error) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	s, ok := srv.sessions[string(id)]
	if !ok {
		return nil, invalidParams("unknown session %q (create it with session/new or load it with session/load)", id)
	}
	return s, nil
}

// Prompt implements acp.Agent. ctx is cancelled by session/cancel.
func (srv *Server) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.PromptResponse{}, err
	}
	defer srv.exit()
	s, err := srv.lookup(p.SessionId)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	if srv.cfg.MissingKey != "" {
		return acp.PromptResponse{}, srv.errAuthRequired()
	}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return acp.PromptResponse{}, invalidParams("session %s is closed", s.id)
	case s.busy:
		s.mu.Unlock()
		return acp.PromptResponse{}, acp.NewInvalidRequest(map[string]any{"error": fmt.Sprintf("session %s is busy with another prompt; cancel it or wait", s.id)})
	}
	s.busy = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}()
	srv.mu.Lock()
	serveCtx := srv.serveCtx
	srv.mu.Unlock()
	if serveCtx != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer context.AfterFunc(serveCtx, cancel)()
		defer cancel()
	}
	var stop acp.StopReason
	if isCompactPrompt(p.Prompt) {
		stop, err = srv.runCompactCommand(ctx, s)
	} else {
		stop, err = srv.runTurn(ctx, s, p.Prompt)
	}
	if err != nil {
		return acp.PromptResponse{}, err
	}
	return acp.PromptResponse{StopReason: stop}, nil
}

// Cancel implements acp.Agent. The SDK cancels the prompt's context; the
// loop notices and ends the turn as aborted.
func (srv *Server) Cancel(_ context.Context, p acp.CancelNotification) error {
	srv.log.Debug("cancel requested", "session", p.SessionId)
	return nil
}

// SetSessionMode implements acp.Agent: the switch is logged as sandbox/mode
// and applies from the next step.
func (srv *Server) SetSessionMode(ctx context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	defer srv.exit()
	s, err := srv.lookup(p.SessionId)
	if err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	mode := string(p.ModeId)
	if !ValidMode(mode) {
		return acp.SetSessionModeResponse{}, invalidParams("unknown mode %q (want read-only, workspace-write or danger-full-access)", mode)
	}
	if _, err := s.emit(ctx, srv.now(), sessionlog.TypeSandboxMode, jsonObject("mode", mode, "source", "client"), nil, nil); err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	if err := s.checkpoint(ctx); err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	// A job started under a wider mode (an approved escalation) must not
	// keep its rights after the editor narrowed the session.
	if n := s.jobs.stopWiderThan(mode); n > 0 {
		srv.log.Info("stopped background jobs started under a wider mode", "session", s.id, "mode", mode, "jobs", n)
	}
	srv.notify(ctx, s, acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: p.ModeId}})
	return acp.SetSessionModeResponse{}, nil
}

// LoadSession implements acp.AgentLoader: it loads the log (committing
// crash repair), streams the history back, then answers.
func (srv *Server) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.LoadSessionResponse{}, err
	}
	defer srv.exit()
	id := string(p.SessionId)
	srv.mu.Lock()
	_, open := srv.sessions[id]
	srv.mu.Unlock()
	if open {
		return acp.LoadSessionResponse{}, invalidParams("session %s is already open in this process", id)
	}
	loaded, w, err := srv.cfg.Store.Open(ctx, id)
	if err != nil {
		// An unknown id, or an id that cannot name a log file at all, is the
		// client's mistake; a log that fails to load is the agent's error.
		if errors.Is(err, sessionlog.ErrNotFound) || errors.Is(err, sessionlog.ErrHeader) && strings.Contains(err.Error(), "session id") {
			return acp.LoadSessionResponse{}, invalidParams("unknown session %q: %v", id, err)
		}
		return acp.LoadSessionResponse{}, fmt.Errorf("load session %s: %w", id, err)
	}
	if len(loaded.Closers) > 0 {
		srv.log.Warn("repaired an interrupted turn", "session", id, "closers", len(loaded.Closers))
	}
	cwd := loaded.Log.Header().Cwd
	if p.Cwd != "" && filepath.IsAbs(p.Cwd) {
		cwd = p.Cwd
	}
	// The replay position of a loaded session is the number of model calls
	// its log already holds, counted exactly as replay derives its script.
	script, derr := replay.Derive(loaded.Log.Events())
	if derr != nil {
		srv.log.Warn("cannot count the recorded model calls", "session", id, "err", derr)
	}
	done := len(script)
	s, err := srv.register(sessionlog.NewSession(loaded.Log, w), id, cwd, done)
	if err != nil {
		_ = w.Close()
		return acp.LoadSessionResponse{}, err
	}
	srv.streamHistory(ctx, s)
	srv.notify(ctx, s, availableCommands())
	return acp.LoadSessionResponse{Modes: srv.modes(s.mode(srv.cfg.Mode))}, nil
}

// ListSessions implements acp.Agent.
func (srv *Server) ListSessions(ctx context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.ListSessionsResponse{}, err
	}
	defer srv.exit()
	resp := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	for info, err := range srv.cfg.Store.List(ctx) {
		if err != nil {
			srv.log.Warn("listing sessions", "err", err)
			continue
		}
		if p.Cwd != nil && *p.Cwd != info.Cwd {
			continue
		}
		updated := time.UnixMilli(info.CreatedAt).UTC().Format(time.RFC3339)
		resp.Sessions = append(resp.Sessions, acp.SessionInfo{SessionId: acp.SessionId(info.ID), Cwd: info.Cwd, UpdatedAt: &updated})
	}
	return resp, nil
}

// CloseSession implements acp.Agent.
func (srv *Server) CloseSession(ctx context.Context, p acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.CloseSessionResponse{}, err
	}
	defer srv.exit()
	s, err := srv.lookup(p.SessionId)
	if err != nil {
		return acp.CloseSessionResponse{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy {
		return acp.CloseSessionResponse{}, acp.NewInvalidRequest(map[string]any{"error": fmt.Sprintf("session %s is busy; cancel the prompt first", s.id)})
	}
	s.jobs.stopAll()
	if !s.closed {
		s.closed = true
		if err := s.log.Close(); err != nil {
			return acp.CloseSessionResponse{}, err
		}
	}
	srv.mu.Lock()
	delete(srv.sessions, s.id)
	srv.mu.Unlock()
	return acp.CloseSessionResponse{}, nil
}

// ResumeSession implements acp.Agent; reel resumes through session/load.
func (srv *Server) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

// SetSessionConfigOption implements acp.Agent; reel has no config options.
func (srv *Server) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

// toolsFor returns the tool set offered under mode.
func (srv *Server) toolsFor(mode string) *tools.Set {
	if mode == ModeFullAccess {
		return srv.full
	}
	return srv.confined
}
