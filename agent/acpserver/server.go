package acpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/sandbox"
)

// Config configures a Server.
type Config struct {
	// Engine runs the sessions.
	Engine *agent.Engine
	// Version is reported in initialize's agentInfo.
	Version string
	// WriteTimeout bounds the write of one frame to the client; a client
	// that does not take a frame within it is treated as gone (0:
	// DefaultWriteTimeout).
	WriteTimeout time.Duration
	// MissingKey, when set, names the environment variable the model key
	// should come from, which is unset: initialize advertises it as the auth
	// method, and session/new, session/prompt and authenticate fail with the
	// ACP auth-required error naming it (session/load and session/list still
	// work, so the history stays readable).
	MissingKey string
	// KeyVar names the environment variable the model key comes from
	// ("" when the model needs none: replay, the stand-in, a local
	// endpoint); initialize advertises setting it as the auth method.
	KeyVar string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Prices is the price table usage_update's cost comes from (nil:
	// DefaultPrices; turns.go).
	Prices Prices
	// ListPageSize is how many sessions one session/list page holds (0:
	// DefaultListPageSize).
	ListPageSize int
}

// Server implements the agent side of ACP over an engine.
type Server struct {
	cfg  Config
	eng  *agent.Engine
	log  *slog.Logger
	conn *acp.AgentSideConnection
	// decodedRetell turns off the frames written straight from a log's
	// bytes (retellframe.go): tests hold the two ways to each other.
	decodedRetell bool
	// out writes whole frames to the client (session/update frames are
	// encoded by the server itself: updateframe.go).
	out *lockedWriter
	// inflight knows which prompts are unanswered (a late title waits
	// for its prompt's answer: frames.go).
	inflight *inflight

	mu sync.Mutex
	// active counts running handlers that touch sessions; closing makes
	// late handlers refuse, so shutdown can wait for the rest.
	active  int
	closing bool
	idle    *sync.Cond
	// serveCtx is Serve's context: ending it (SIGTERM) also ends prompts.
	serveCtx context.Context
	clientFS acp.FileSystemCapabilities
	// clientNotices and clientCompaction are the client's
	// session.notices and session.compaction capabilities (extra.go).
	clientNotices, clientCompaction bool
	// messages is each session's current message ids (messageid.go).
	messages map[string]*messageIDs
	// elicitForm: the client advertised form elicitation (elicit.go);
	// calls sends the requests the SDK cannot encode (calls.go).
	elicitForm bool
	calls      *calls
}

var (
	_ acp.Agent       = (*Server)(nil)
	_ acp.AgentLoader = (*Server)(nil)
)

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil {
		return nil, errors.New("acpserver: Config needs an Engine")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	srv := &Server{cfg: cfg, eng: cfg.Engine, log: cfg.Logger}
	srv.idle = sync.NewCond(&srv.mu)
	return srv, nil
}

// Serve speaks ACP on in/out until the peer closes in or ctx ends, then
// closes the engine (every session's log).
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
	ff.methods = srv.extraMethods(ctx)
	ff.calls = newCalls(w)
	defer ff.calls.close()
	conn := acp.NewAgentSideConnection(srv, w, ff)
	conn.SetLogger(srv.log)
	srv.conn, srv.out, srv.inflight, srv.calls = conn, w, fl, ff.calls
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
	err := srv.eng.Close()
	if c := w.cause(); errors.Is(c, ErrStalled) {
		err = errors.Join(c, err)
	}
	return err
}

// enter registers a running handler; it fails once shutdown began.
func (srv *Server) enter() error {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.closing {
		return agent.ErrShuttingDown
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

// Initialize implements acp.Agent.
func (srv *Server) Initialize(_ context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	srv.mu.Lock()
	srv.clientFS = p.ClientCapabilities.Fs
	srv.elicitForm = formElicitation(p.ClientCapabilities)
	srv.mu.Unlock()
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentInfo:       &acp.Implementation{Name: "reel", Version: srv.cfg.Version},
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  acp.PromptCapabilities{EmbeddedContext: true, Image: srv.eng.ImageInput()},
			SessionCapabilities: srv.sessionCapabilities(),
			McpCapabilities:     mcpCapabilities,
		},
		AuthMethods: srv.authMethods(),
		// The steering extension (steering.go), where claude-agent-acp
		// and codex-acp advertise it.
		Meta: steeringMeta(),
	}, nil
}

// authMethods lists the one way to authenticate: set the key variable in
// the agent's environment. A model that needs no key lists none.
func (srv *Server) authMethods() []acp.AuthMethod {
	v := srv.keyVar()
	if v == "" {
		return []acp.AuthMethod{}
	}
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

// keyVar is the variable the key comes from (MissingKey when it is unset).
func (srv *Server) keyVar() string {
	if srv.cfg.MissingKey != "" {
		return srv.cfg.MissingKey
	}
	return srv.cfg.KeyVar
}

// Authenticate implements acp.Agent: reel takes its key from the
// environment, so the one method succeeds when the key is set and is
// auth-required (naming the variable) when it is not; any other method id
// is invalid params.
func (srv *Server) Authenticate(_ context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	if v := srv.keyVar(); v == "" || p.MethodId != "env:"+v {
		offered := "none: the model needs no key"
		if v != "" {
			offered = "env:" + v
		}
		return acp.AuthenticateResponse{}, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown auth method %q (reel offers %s)", p.MethodId, offered)})
	}
	if srv.cfg.MissingKey != "" {
		return acp.AuthenticateResponse{}, srv.errAuthRequired()
	}
	return acp.AuthenticateResponse{}, nil
}

// modeInfo is the name and description of each mode, in advertised order.
var modeInfo = map[sandbox.Mode]struct{ name, desc string }{
	sandbox.ReadOnly:         {"Read only", "Read files and run commands, but change nothing on disk."},
	sandbox.WorkspaceWrite:   {"Workspace write", "Write inside the session's working directory and temp; read everywhere."},
	sandbox.DangerFullAccess: {"Full access", "No sandbox: commands and file tools may change anything the user can."},
}

// modes is the session mode state advertised with current selected.
func modes(current sandbox.Mode) *acp.SessionModeState {
	st := &acp.SessionModeState{CurrentModeId: acp.SessionModeId(current)}
	for _, m := range sandbox.Modes() {
		mi := modeInfo[m]
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{Id: acp.SessionModeId(m), Name: mi.name, Description: acp.Ptr(mi.desc)})
	}
	return st
}

// logFailure reports on stderr a request that failed for a reason other
// than the client's mistake (the client sees only "Internal error" and the
// message in its data).
func (srv *Server) logFailure(method string, err error) {
	if !errors.Is(err, agent.ErrInvalid) && !errors.Is(err, agent.ErrBusy) {
		srv.log.Error(method+" failed", "err", err)
	}
}

// acpError maps an engine error onto the ACP error a request answers with:
// the caller's mistakes are invalid params (a busy session: invalid
// request), a failed model call keeps the provider's message and code, and
// anything else is the SDK's internal error carrying the message.
func acpError(err error) error {
	var me *agent.ModelError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, agent.ErrBusy):
		return acp.NewInvalidRequest(map[string]any{"error": err.Error()})
	case errors.Is(err, agent.ErrInvalid):
		return acp.NewInvalidParams(map[string]any{"error": err.Error()})
	case errors.As(err, &me):
		return modelError(me)
	}
	return err
}

// modelError is the ACP error a prompt answers with when the model call
// failed: internal error (-32603), as the reference agent answers, even
// for refused credentials (auth-required would send the editor to an
// authentication flow reel cannot offer while a key is set); its message
// is the provider's own and data repeats the failure code (AUTH, …) for
// programs. Only what the log records goes in (not the HTTP status), so
// a replay answers exactly as the recorded run did.
func modelError(me *agent.ModelError) *acp.RequestError {
	data := map[string]any{"error": "turn failed: " + me.Message}
	if !me.Provider {
		return acp.NewInternalError(data)
	}
	if me.Code != "" {
		data["code"] = me.Code
	}
	return &acp.RequestError{Code: acp.NewInternalError(nil).Code, Message: me.Error(), Data: data}
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
	if err := unsupportedDirs(p.AdditionalDirectories); err != nil {
		return acp.NewSessionResponse{}, err
	}
	withMCP, err := mcpOption(p.McpServers)
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	s, err := srv.eng.NewSession(ctx, p.Cwd, srv.withQuestions(withMCP)...)
	if err != nil {
		srv.logFailure("session/new", err)
		return acp.NewSessionResponse{}, acpError(err)
	}
	// Turns a background child's notice starts report with no prompt
	// pending: their updates go to this session too.
	s.SetClient(srv.client(s.ID()))
	srv.notifyAfterAnswer(ctx, s.ID(), availableCommands(srv.eng.SessionCommands(ctx, s)))
	return acp.NewSessionResponse{SessionId: acp.SessionId(s.ID()), Modes: modes(s.Mode()), ConfigOptions: configOptions(s), Models: legacyModels(s)}, nil
}

// unsupportedDirs refuses ACP's (unstable) additionalDirectories: a
// session's sandbox and tools work in its cwd only, and silently ignoring
// extra roots would leave the editor believing the agent may write there.
func unsupportedDirs(dirs []string) error {
	if len(dirs) == 0 {
		return nil
	}
	return acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf(
		"additionalDirectories is not supported by reel (got %d): a session works in its cwd only; open a session per directory", len(dirs))})
}

// LoadSession implements acp.AgentLoader: it loads the log (committing
// crash repair), streams the history back, then answers.
func (srv *Server) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.LoadSessionResponse{}, err
	}
	defer srv.exit()
	if err := unsupportedDirs(p.AdditionalDirectories); err != nil {
		return acp.LoadSessionResponse{}, err
	}
	withMCP, err := mcpOption(p.McpServers)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	s, err := srv.eng.LoadSession(ctx, string(p.SessionId), p.Cwd, srv.withQuestions(withMCP)...)
	if err != nil {
		srv.logFailure("session/load", err)
		return acp.LoadSessionResponse{}, acpError(err)
	}
	s.SetClient(srv.client(s.ID()))
	// The history goes out in batches of frames, before the answer.
	retell := srv.updates(s.ID())
	retell.batch = &frameBatch{}
	s.History(ctx, retell)
	if err := srv.flush(retell.batch); err != nil {
		srv.log.Debug("session/update not delivered", "session", s.ID(), "err", err)
	}
	if t, ok := s.Title(); ok {
		srv.updates(s.ID()).Title(ctx, t)
	}
	srv.notifyAfterAnswer(ctx, s.ID(), availableCommands(srv.eng.SessionCommands(ctx, s)))
	return acp.LoadSessionResponse{Modes: modes(s.Mode()), ConfigOptions: configOptions(s), Models: legacyModels(s)}, nil
}

// Prompt implements acp.Agent. ctx is cancelled by session/cancel.
func (srv *Server) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.PromptResponse{}, err
	}
	defer srv.exit()
	s, err := srv.eng.Session(string(p.SessionId))
	if err != nil {
		return acp.PromptResponse{}, acpError(err)
	}
	if srv.cfg.MissingKey != "" {
		return acp.PromptResponse{}, srv.errAuthRequired()
	}
	srv.mu.Lock()
	serveCtx := srv.serveCtx
	srv.mu.Unlock()
	if serveCtx != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer context.AfterFunc(serveCtx, cancel)()
		defer cancel()
	}
	content, err := promptContent(p.Prompt)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	before := s.Spent()
	stop, err := s.Prompt(ctx, content, srv.client(s.ID()))
	if err != nil {
		return acp.PromptResponse{}, acpError(err)
	}
	if stop == agent.StopMaxTokens {
		// The reference agent answers a turn cut at the token limit with
		// end_turn: the limit is no prompt-level stop reason there, and the
		// log's turn/end still says max-tokens.
		stop = agent.StopEndTurn
	}
	return acp.PromptResponse{StopReason: acp.StopReason(stop), Usage: turnUsage(before, s.Spent())}, nil
}

// promptContent maps ACP prompt content onto the engine's: text as is, an
// embedded text resource as a <file> block, an image, a binary resource
// and an audio clip with their bytes decoded (the engine sends them where
// the model takes them, else tells the model and the user), a link by its
// URI (the engine reads file:// links). Base64 that does not decode is the
// client's mistake: invalid params, naming the block.
func promptContent(prompt []acp.ContentBlock) ([]agent.Content, error) {
	out := make([]agent.Content, 0, len(prompt))
	for i, c := range prompt {
		var ct agent.Content
		var err error
		switch {
		case c.Text != nil:
			ct.Text = c.Text.Text
		case c.ResourceLink != nil:
			ct = promptLink(c.ResourceLink)
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			ct.Text = fmt.Sprintf("<file uri=%q>\n%s\n</file>", r.Uri, r.Text)
		case c.Resource != nil && c.Resource.Resource.BlobResourceContents != nil:
			r := c.Resource.Resource.BlobResourceContents
			mt := ""
			if r.MimeType != nil {
				mt = *r.MimeType
			}
			ct.Blob, err = attached(i, "resource blob", r.Uri, mt, r.Blob)
		case c.Image != nil:
			uri := ""
			if c.Image.Uri != nil {
				uri = *c.Image.Uri
			}
			ct.Image, err = attached(i, "image data", uri, c.Image.MimeType, c.Image.Data)
		case c.Audio != nil:
			ct.Blob, err = attached(i, "audio data", "", audioType(c.Audio.MimeType), c.Audio.Data)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ct)
	}
	return out, nil
}

// attached decodes the base64 of prompt block i.
func attached(i int, what, uri, mediaType, data string) (*agent.Attached, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(data)
	if err != nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("prompt[%d]: the %s is not valid base64: %v", i, what, err)})
	}
	return &agent.Attached{URI: uri, MediaType: mediaType, Data: b}, nil
}

// audioType makes sure an audio clip's type reads as audio.
func audioType(mt string) string {
	if strings.HasPrefix(mt, "audio/") {
		return mt
	}
	return "audio/" + strings.TrimPrefix(mt, "/")
}

// Cancel implements acp.Agent. The SDK cancels the prompt's context; the
// engine notices and ends the turn as aborted. A turn running with no
// prompt pending (a background child's notice) is cancelled too, and the
// session's background children are interrupted.
func (srv *Server) Cancel(_ context.Context, p acp.CancelNotification) error {
	srv.log.Debug("cancel requested", "session", p.SessionId)
	if s, err := srv.eng.Session(string(p.SessionId)); err == nil {
		s.Cancel()
	}
	return nil
}

// SetSessionMode implements acp.Agent: the switch applies from the next
// step.
func (srv *Server) SetSessionMode(ctx context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	defer srv.exit()
	s, err := srv.eng.Session(string(p.SessionId))
	if err != nil {
		return acp.SetSessionModeResponse{}, acpError(err)
	}
	if err := s.SetMode(ctx, string(p.ModeId)); err != nil {
		return acp.SetSessionModeResponse{}, acpError(err)
	}
	srv.notify(ctx, s.ID(), acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: p.ModeId}})
	// The mode option mirrors the mode (models.go).
	srv.configUpdate(ctx, s)
	return acp.SetSessionModeResponse{}, nil
}

// CloseSession implements acp.Agent.
func (srv *Server) CloseSession(_ context.Context, p acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.CloseSessionResponse{}, err
	}
	defer srv.exit()
	if err := srv.eng.CloseSession(string(p.SessionId)); err != nil {
		return acp.CloseSessionResponse{}, acpError(err)
	}
	srv.forgetMessages(string(p.SessionId))
	return acp.CloseSessionResponse{}, nil
}

// availableCommands is the available_commands_update of a session's
// slash commands (the engine's and its skills').
func availableCommands(list []agent.Command) acp.SessionUpdate {
	var cmds []acp.AvailableCommand
	for _, c := range list {
		cmds = append(cmds, acp.AvailableCommand{Name: c.Name, Description: c.Description})
	}
	return acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{AvailableCommands: cmds}}
}
