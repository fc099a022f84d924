package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/mcp"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// MCPConnector connects the MCP servers a client configures for a session.
// With Config.MCP nil the engine connects them live with package mcp; a
// replay connects the servers recorded in the replayed log instead, so a
// replay needs no server.
type MCPConnector interface {
	Connect(ctx context.Context, req MCPRequest) (MCPConnection, error)
}

// MCPRequest is one session's MCP servers to connect.
type MCPRequest struct {
	// Session is the index of the session among those opened in this
	// process (as Models.ForSession's), and ID and Cwd are its own.
	Session int
	ID, Cwd string
	// Servers are the client's servers, in its order.
	Servers []mcp.ServerConfig
	// Prior is how many times the session's log says it connected MCP
	// servers before (mcp/connect records; a loaded session's count).
	Prior int
}

// MCPConnection is a session's connected MCP servers.
type MCPConnection interface {
	// Tools are the tools the model is offered, in a fixed order; each
	// names its server (MCPTool).
	Tools() []tools.Tool
	// Status is every configured server, connected or not, as mcp/connect
	// records it.
	Status() sessionlog.MCPConnectData
	// Close ends the connections, stopping stdio servers.
	Close() error
}

// MCPTool is a tool of an MCP server: its calls ask the user first unless
// the server is trusted (Config.MCPTrusted).
type MCPTool interface {
	tools.Tool
	// Server is the configured name of the tool's server.
	Server() string
	// RemoteName is the tool's own name on its server.
	RemoteName() string
	// Arguments is the one strict parse of a call's arguments (see
	// mcp.CheckArguments): a refusal names the keys, and then nothing is
	// asked or sent; otherwise the bytes returned are what hooks and the
	// user are shown and what Run is given, which the server receives
	// unchanged.
	Arguments(args json.RawMessage) (json.RawMessage, error)
}

// A live MCP tool is an MCPTool: were it not, its calls would be neither
// parsed nor asked about.
var _ MCPTool = (*mcp.Tool)(nil)

// WithMCPServers is a session option: connect servers (the client's, from
// session/new or session/load) and offer their tools for the session.
func WithMCPServers(servers []mcp.ServerConfig) SessionOption {
	return func(o *sessionOptions) { o.mcp = servers }
}

// SessionOption configures a session being created or loaded.
type SessionOption func(*sessionOptions)

// sessionOptions are the options of NewSession and LoadSession.
type sessionOptions struct {
	mcp []mcp.ServerConfig
	// provider, when set, is the loaded session's model instead of a new
	// one from Config.Models (a released background child loaded again in
	// the same process keeps its model, whose replay position goes on).
	provider llm.Provider
	// parent, when set, is the live session a loaded child is bound by
	// (its mode and policy are never wider than parent's).
	parent *Session
	// questions offers ask_user_question (WithQuestions).
	questions bool
}

// withParent makes LoadSession bind the loaded child to the live parent p.
func withParent(p *Session) SessionOption {
	return func(o *sessionOptions) { o.parent = p }
}

// withProvider makes LoadSession use p as the session's model.
func withProvider(p llm.Provider) SessionOption {
	return func(o *sessionOptions) { o.provider = p }
}

// liveMCP is the default MCPConnector: package mcp, with the session's cwd
// as the servers' working directory and root, and the environment of reel
// without the model keys.
type liveMCP struct{ e *Engine }

// Connect implements MCPConnector. A server that cannot be used is in the
// Status with its error; the others connect.
func (l liveMCP) Connect(ctx context.Context, req MCPRequest) (MCPConnection, error) {
	set, err := mcp.Connect(ctx, req.Servers, mcp.Options{
		Logger:  l.e.log.With("session", req.ID),
		Dir:     req.Cwd,
		Roots:   []string{req.Cwd},
		Environ: withoutSecrets(os.Environ()),
	})
	var ce *mcp.ConnectError
	if err != nil && !errors.As(err, &ce) {
		if set != nil {
			_ = set.Close()
		}
		return nil, err
	}
	return liveConnection{set: set, servers: req.Servers, failed: ce}, nil
}

// liveConnection is a connected mcp.Set.
type liveConnection struct {
	set     *mcp.Set
	servers []mcp.ServerConfig
	failed  *mcp.ConnectError
}

// Tools implements MCPConnection.
func (c liveConnection) Tools() []tools.Tool { return c.set.Tools() }

// Close implements MCPConnection.
func (c liveConnection) Close() error { return c.set.Close() }

// Status implements MCPConnection.
func (c liveConnection) Status() sessionlog.MCPConnectData {
	errs := map[string]string{}
	if c.failed != nil {
		for _, se := range c.failed.Failures {
			errs[se.Server] = strings.TrimPrefix(se.Error(), "mcp: ")
		}
	}
	byServer := map[string][]sessionlog.MCPToolData{}
	for _, t := range c.set.Tools() {
		mt, ok := t.(*mcp.Tool)
		if !ok {
			continue
		}
		sc := mt.Schema()
		byServer[mt.Server()] = append(byServer[mt.Server()], sessionlog.MCPToolData{
			Name: mt.Name(), Remote: mt.RemoteName(), Title: mt.Title(), ReadOnly: mt.ReadOnlyHint(),
			Description: sc.Description, Parameters: sc.Parameters})
	}
	var d sessionlog.MCPConnectData
	for _, srv := range c.servers {
		sd := sessionlog.MCPServerData{Name: srv.Name, Transport: string(srv.Transport), Error: errs[srv.Name], Tools: byServer[srv.Name]}
		d.Servers = append(d.Servers, sd)
	}
	return d
}

// connectMCP connects the session's MCP servers (none: nothing happens),
// logs mcp/connect, and adds the servers' tools to the session's tool
// sets. A server that cannot be used is reported to the logger and, at
// the session's next prompt, to the client; the session works without it.
func (s *Session) connectMCP(ctx context.Context, index int, servers []mcp.ServerConfig) error {
	if len(servers) == 0 {
		return nil
	}
	e := s.eng
	prior := 0
	s.mu.Lock()
	for _, ev := range s.log.Log().Events() {
		if ev.Type == sessionlog.TypeMCPConnect {
			prior++
		}
	}
	s.mu.Unlock()
	conn, err := e.mcp.Connect(ctx, MCPRequest{Session: index, ID: s.id, Cwd: s.cwd, Servers: servers, Prior: prior})
	if err != nil {
		return fmt.Errorf("session %s: connect MCP servers: %w", s.id, err)
	}
	st := conn.Status()
	if _, err := s.emit(ctx, e.now(), sessionlog.TypeMCPConnect, st, nil, nil); err != nil {
		_ = conn.Close()
		return err
	}
	var problems []string
	for _, srv := range st.Servers {
		if srv.Error != "" {
			e.log.Warn("MCP server not available", "session", s.id, "server", srv.Name, "err", srv.Error)
			problems = append(problems, fmt.Sprintf("[mcp] The MCP server %q could not be used (%s); this session goes on without its tools.", srv.Name, srv.Error))
		} else {
			e.log.Info("MCP server connected", "session", s.id, "server", srv.Name, "tools", len(srv.Tools))
		}
	}
	list := append(conn.Tools(), s.questionTools()...)
	confined, err := toolSetWith(e.cfg, true, list)
	if err == nil {
		var full *tools.Set
		if full, err = toolSetWith(e.cfg, false, list); err == nil {
			s.mu.Lock()
			s.mcp, s.confined, s.full = conn, confined, full
			s.mcpProblems = problems
			s.mu.Unlock()
			return nil
		}
	}
	_ = conn.Close()
	// Package mcp names its tools mcp__…, which no reel tool is; a clash
	// is a bug, not the user's configuration.
	return fmt.Errorf("session %s: the MCP tools cannot be offered: %w", s.id, err)
}

// toolsFor returns the session's tool set under mode: the engine's, plus
// its MCP servers' tools.
func (s *Session) toolsFor(mode sandbox.Mode) *tools.Set {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.confined == nil {
		return s.eng.toolsFor(mode)
	}
	if mode == sandbox.DangerFullAccess {
		return s.full
	}
	return s.confined
}

// trusts reports whether calls of server's tools run without asking.
func (e *Engine) trusts(server string) bool {
	return slices.Contains(e.cfg.MCPTrusted, server) || slices.Contains(e.cfg.MCPTrusted, "*")
}

// approveMCP decides whether a call of an MCP tool may run: a trusted
// server's may; otherwise an earlier "always" answer of this session
// decides, else the user is asked (allow or reject once or for the rest
// of the session). why is the model's message when the call may not run.
func (r *run) approveMCP(ctx context.Context, call ToolCall, tool MCPTool, mode sandbox.Mode) (why string, ok bool) {
	server := tool.Server()
	if r.e.trusts(server) || breakApprove() {
		return "", true
	}
	rejectedAlways := fmt.Sprintf("Error: the user rejected the MCP tool %q for the rest of this session. Nothing was executed.", call.Name)
	r.s.mu.Lock()
	remembered := r.s.always[alwaysKey(server, tool.RemoteName())]
	r.s.mu.Unlock()
	switch remembered {
	case sessionlog.OutcomeAllowedAlways:
		return "", true
	case sessionlog.OutcomeRejectedAlways:
		return rejectedAlways, false
	}
	ans, err := r.askApproval(ctx, mcpApproval(call, tool, mode), fmt.Sprintf("the MCP server %q is not trusted", server))
	switch {
	case errors.Is(err, errPolicyNever):
		return fmt.Sprintf("Error: the MCP tool %q needs approval (its server %q is not trusted; the user can trust it with reel acp --mcp-trust %s), and the approval policy of this session is never: it was rejected without asking. Nothing was executed.", call.Name, server, server), false
	case errors.Is(err, errNoApprover):
		return fmt.Sprintf("Error: the MCP tool %q needs approval, and no one can approve it in this session: it was rejected without asking. Nothing was executed.", call.Name), false
	case err != nil && ctx.Err() != nil:
		return "The turn was cancelled while waiting for approval. Nothing was executed.", false
	case err != nil:
		r.e.log.Warn("permission request failed", "session", r.s.id, "err", err)
		return fmt.Sprintf("Error: the MCP tool %q needs approval, and the request could not be answered (%v). Nothing was executed.", call.Name, err), false
	case ans == Allowed, ans == AllowedAlways:
		return "", true
	case ans == RejectedAlways:
		return rejectedAlways, false
	case ans == Rejected:
		return fmt.Sprintf("Error: the user rejected tool %q. Nothing was executed.", call.Name), false
	}
	return fmt.Sprintf("Error: the permission request for this %s call was cancelled. Nothing was executed.", call.Name), false
}

// alwaysKey is the key of a session-wide answer about the tool called
// remote on the server called server. It is never the tool's reel name:
// mcp__a__b__c is server "a"'s tool "b__c" in one connection and server
// "a__b"'s tool "c" (or a sanitized or renamed one) in another, and an
// answer about one must not hold for the other.
func alwaysKey(server, remote string) string { return server + "\x00" + remote }

// mcpApproval words the approval of one MCP tool call: the tool, its
// server and the arguments exactly as they will be sent.
func mcpApproval(call ToolCall, tool MCPTool, mode sandbox.Mode) Approval {
	args := string(call.Arguments)
	var pretty json.RawMessage
	if b, err := json.MarshalIndent(json.RawMessage(call.Arguments), "", "  "); err == nil {
		pretty = b
		args = string(pretty)
	}
	what := call.Name
	if t, ok := tool.(interface{ Title() string }); ok && t.Title() != "" {
		what = t.Title()
	}
	return Approval{
		Call: call, Mode: mode, Wanted: mode, Always: true,
		MCPServer: tool.Server(), MCPTool: tool.RemoteName(),
		Title:  "Run the MCP tool " + what,
		Detail: fmt.Sprintf("The MCP server %q will be called with the tool %q and these arguments:\n\n%s", tool.Server(), call.Name, args),
	}
}
