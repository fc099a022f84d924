package acpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/acpserver"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/openai"
	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// TestMain lets the test binary stand in for "reel sandbox-exec": a real
// sandbox.Sandbox re-executes os.Executable() with that subcommand, the way
// cmd/reel dispatches it, so the escalation tests run bash under Landlock.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		err := sandbox.Exec(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(sandbox.ExitCode(err))
	}
	os.Exit(m.Run())
}

// client is the editor side of the in-process tests: it records every
// session/update and answers session/request_permission from a FIFO queue
// of option kinds (an empty queue answers cancelled).
type client struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every update
	updates []acp.SessionNotification
	answers []acp.PermissionOptionKind
	asked   []acp.RequestPermissionRequest
	errs    []string
}

func newClient() *client { return &client{changed: make(chan struct{})} }

var _ acp.Client = (*client)(nil)

func (c *client) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n)
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

func (c *client) RequestPermission(_ context.Context, r acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, r)
	if len(c.answers) == 0 {
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}, nil
	}
	kind := c.answers[0]
	c.answers = c.answers[1:]
	for _, o := range r.Options {
		if o.Kind == kind {
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.RequestPermissionOutcomeSelected{OptionId: o.OptionId, Outcome: "selected"}}}, nil
		}
	}
	c.errs = append(c.errs, fmt.Sprintf("permission request did not offer kind %q: %+v", kind, r.Options))
	return acp.RequestPermissionResponse{}, acp.NewInvalidParams(map[string]any{"error": "kind not offered"})
}

func (c *client) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (c *client) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

func (c *client) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (c *client) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (c *client) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (c *client) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (c *client) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// queue appends permission answers.
func (c *client) queue(kinds ...acp.PermissionOptionKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answers = append(c.answers, kinds...)
}

// permissionRequests returns the permission requests received so far.
func (c *client) permissionRequests() []acp.RequestPermissionRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.asked)
}

// updatesOf returns the updates received so far for session sid.
func (c *client) updatesOf(sid acp.SessionId) []acp.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []acp.SessionUpdate
	for _, n := range c.updates {
		if n.SessionId == sid {
			out = append(out, n.Update)
		}
	}
	return out
}

// waitFor blocks until ok holds for the updates of sid. It fails the test
// when stop is closed first (the prompt ended without the update).
func (c *client) waitFor(t *testing.T, sid acp.SessionId, stop <-chan struct{}, what string, ok func([]acp.SessionUpdate) bool) {
	t.Helper()
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		if ok(c.updatesOf(sid)) {
			return
		}
		select {
		case <-ch:
		case <-stop:
			if ok(c.updatesOf(sid)) {
				return
			}
			t.Fatalf("the prompt ended before %s; updates: %s", what, describe(c.updatesOf(sid)))
		}
	}
}

// kindOf names an update by its sessionUpdate discriminator.
func kindOf(u acp.SessionUpdate) string {
	switch {
	case u.UserMessageChunk != nil:
		return "user_message_chunk"
	case u.AgentMessageChunk != nil:
		return "agent_message_chunk"
	case u.AgentThoughtChunk != nil:
		return "agent_thought_chunk"
	case u.ToolCall != nil:
		return "tool_call"
	case u.ToolCallUpdate != nil:
		return "tool_call_update"
	case u.CurrentModeUpdate != nil:
		return "current_mode_update"
	case u.Plan != nil:
		return "plan"
	case u.AvailableCommandsUpdate != nil:
		return "available_commands_update"
	}
	return "other"
}

// joined concatenates the text of the updates of one chunk kind.
func joined(us []acp.SessionUpdate, kind string) string {
	var b strings.Builder
	for _, u := range us {
		var cb *acp.ContentBlock
		switch {
		case kind == "agent_message_chunk" && u.AgentMessageChunk != nil:
			cb = &u.AgentMessageChunk.Content
		case kind == "agent_thought_chunk" && u.AgentThoughtChunk != nil:
			cb = &u.AgentThoughtChunk.Content
		case kind == "user_message_chunk" && u.UserMessageChunk != nil:
			cb = &u.UserMessageChunk.Content
		}
		if cb != nil && cb.Text != nil {
			b.WriteString(cb.Text.Text)
		}
	}
	return b.String()
}

func count(us []acp.SessionUpdate, kind string) int {
	n := 0
	for _, u := range us {
		if kindOf(u) == kind {
			n++
		}
	}
	return n
}

func describe(us []acp.SessionUpdate) string {
	parts := make([]string, 0, len(us))
	for _, u := range us {
		parts = append(parts, kindOf(u))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// toolContentText joins the text content of a tool call update.
func toolContentText(cs []acp.ToolCallContent) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Content != nil && c.Content.Content.Text != nil {
			b.WriteString(c.Content.Content.Text.Text)
		}
	}
	return b.String()
}

// newServer builds the engine of cfg and an ACP server on it.
func newServer(cfg agent.Config) (*acpserver.Server, error) {
	return newServerVersion(cfg, "")
}

// newServerVersion is newServer reporting version in initialize.
func newServerVersion(cfg agent.Config, version string) (*acpserver.Server, error) {
	eng, err := agent.New(cfg)
	if err != nil {
		return nil, err
	}
	return acpserver.New(acpserver.Config{Engine: eng, Version: version, Logger: cfg.Logger})
}

// rig is one acpserver.Server served over io.Pipes to an SDK client.
type rig struct {
	conn     *acp.ClientSideConnection
	client   *client
	storeDir string
}

// start serves an agent built from cfg (Store, SpillDir and Invariant are
// filled in) and connects a client. Cleanup closes the client's side and
// checks that Serve returns without error.
func start(t *testing.T, cfg agent.Config) *rig {
	t.Helper()
	return startVersion(t, cfg, "")
}

// startVersion is start with the version initialize reports.
func startVersion(t *testing.T, cfg agent.Config, version string) *rig {
	t.Helper()
	if cfg.SpillDir == "" {
		cfg.SpillDir = t.TempDir()
	}
	return serveVersion(t, cfg, version)
}

// serve is start without the SpillDir default.
func serve(t *testing.T, cfg agent.Config) *rig {
	t.Helper()
	return serveVersion(t, cfg, "")
}

func serveVersion(t *testing.T, cfg agent.Config, version string) *rig {
	t.Helper()
	storeDir := t.TempDir()
	store, err := jsonl.Open(storeDir, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = store
	cfg.Invariant = true
	if cfg.Provider == "" {
		cfg.Provider, cfg.Model = "deepseek", "standin"
	}
	srv, err := newServerVersion(cfg, version)
	if err != nil {
		t.Fatal(err)
	}
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), agentIn, agentOut) }()
	cl := newClient()
	conn := acp.NewClientSideConnection(cl, clientOut, clientIn)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		_ = clientOut.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		_ = agentOut.Close()
		_ = store.Close()
		cl.mu.Lock()
		defer cl.mu.Unlock()
		for _, e := range cl.errs {
			t.Error(e)
		}
	})
	return &rig{conn: conn, client: cl, storeDir: storeDir}
}

func (r *rig) initialize(t *testing.T) acp.InitializeResponse {
	t.Helper()
	resp, err := r.conn.Initialize(context.Background(), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return resp
}

// newSession initializes (once per rig is enough, but harmless) and opens a
// session in cwd.
func (r *rig) newSession(t *testing.T, cwd string) acp.SessionId {
	t.Helper()
	resp, err := r.conn.NewSession(context.Background(), acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	return resp.SessionId
}

func (r *rig) prompt(ctx context.Context, sid acp.SessionId, text string) (acp.PromptResponse, error) {
	return r.conn.Prompt(ctx, acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
}

// mustPrompt runs a prompt and checks its stop reason.
func (r *rig) mustPrompt(t *testing.T, sid acp.SessionId, text string, want acp.StopReason) {
	t.Helper()
	resp, err := r.prompt(context.Background(), sid, text)
	if err != nil {
		t.Fatalf("session/prompt %q: %v", text, err)
	}
	if resp.StopReason != want {
		t.Fatalf("session/prompt %q: stopReason %q, want %q", text, resp.StopReason, want)
	}
}

// readLog reads a session's log file as stored.
func (r *rig) readLog(t *testing.T, sid acp.SessionId) *jsonl.Decoded {
	t.Helper()
	d, err := jsonl.ReadFile(filepath.Join(r.storeDir, string(sid)+".jsonl"))
	if err != nil {
		t.Fatalf("reading the log of %s: %v", sid, err)
	}
	if d.Torn != nil {
		t.Fatalf("the log of %s has a torn tail: %+v", sid, d.Torn)
	}
	if _, err := sessionlog.Seed(d.Header, d.Events); err != nil {
		t.Fatalf("the log of %s breaks a log rule: %v", sid, err)
	}
	return d
}

// rawFile returns a session log's bytes.
func (r *rig) rawFile(t *testing.T, sid acp.SessionId) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.storeDir, string(sid)+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func types(events []sessionlog.Event) []string {
	out := make([]string, 0, len(events))
	for _, e := range events {
		out = append(out, e.Type)
	}
	return out
}

// ofType returns the events of type typ.
func ofType(events []sessionlog.Event, typ string) []sessionlog.Event {
	var out []sessionlog.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// requireCode checks that err is a JSON-RPC error with code and a message
// or data mentioning frag.
func requireCode(t *testing.T, err error, code int, frag string) {
	t.Helper()
	var re *acp.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error; want code %d", err, err, code)
	}
	if re.Code != code {
		t.Fatalf("error code %d (%v), want %d", re.Code, re, code)
	}
	if !strings.Contains(re.Error(), frag) {
		t.Fatalf("error %v does not mention %q", re, frag)
	}
}

// model is a stand-in model server reached over real HTTP through the
// openai provider.
type model struct {
	srv      *standin.Server
	provider llm.Provider
	mu       sync.Mutex
	auth     []string // Authorization headers seen
}

// newModel serves responses from a stand-in on a loopback port; wrap, when
// non-nil, wraps its handler. The server is closed (cutting open streams)
// at cleanup.
func newModel(t *testing.T, wrap func(http.Handler) http.Handler, responses ...standin.Response) *model {
	t.Helper()
	script := &standin.Script{Responses: responses}
	if err := script.Validate(); err != nil {
		t.Fatalf("stand-in script: %v", err)
	}
	m := &model{srv: standin.New(script, nil)}
	h := m.srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	inner := h
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.auth = append(m.auth, r.Header.Get("Authorization"))
		m.mu.Unlock()
		inner.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("stand-in listen: %v", err)
	}
	hs := &http.Server{Handler: h}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	p, err := openai.New(openai.Config{
		Name: "deepseek", BaseURL: "http://" + ln.Addr().String() + "/v1", Model: "standin",
		APIKey: "sk-reel-test-standin", MaxAttempts: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.provider = p
	return m
}

// requests returns the chat-completions bodies the stand-in received.
func (m *model) requests(t *testing.T) []chatRequest {
	t.Helper()
	var out []chatRequest
	for i, raw := range m.srv.Requests() {
		var r chatRequest
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("stand-in request %d: %v", i+1, err)
		}
		out = append(out, r)
	}
	return out
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []json.RawMessage `json:"tools"`
}

// providerPerSession gives the i-th session opened the i-th provider.
type providerPerSession []llm.Provider

func (m providerPerSession) ForSession(i int, _ string, _ int) (llm.Provider, error) {
	if i >= len(m) {
		return nil, fmt.Errorf("test: session %d has no model", i)
	}
	return m[i], nil
}

// shared serves every session with one stand-in.
func shared(m *model) agent.Models { return agent.SharedModels{Provider: m.provider} }

// confinedSandbox adapts sandbox.Sandbox to agent.Sandbox (results are
// reported unannotated).
type confinedSandbox struct{ *sandbox.Sandbox }

func (confinedSandbox) Annotate(_ sandbox.Mode, _ string, res tools.Result) tools.Result { return res }

// requireLandlock skips a test that needs Landlock where the kernel has
// none; under CI=true that is a failure.
func requireLandlock(t *testing.T) {
	t.Helper()
	if abi, err := sandbox.Probe(); abi > 0 {
		return
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("Landlock is unavailable (%v): the sandbox escalation tests cannot run", err)
	} else {
		t.Skipf("Landlock is unavailable (%v)", err)
	}
}

// realDir is t.TempDir with symbolic links resolved (Landlock rules and
// path comparisons see real paths).
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
