package mcpreplay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/mcp"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// Connector is an agent.MCPConnector serving each session from its
// recorded log: Logs[i] is the events of the i-th session opened in the
// process (as reel acp's --replay logs are given).
type Connector struct {
	Logs [][]sessionlog.Event
	// Logger receives what package mcp's client notices; nil discards.
	Logger *slog.Logger
}

var _ agent.MCPConnector = Connector{}

// Connect implements agent.MCPConnector: package mcp's client connects
// req's servers, each reached over an in-memory transport to a server
// that serves the recording.
func (c Connector) Connect(ctx context.Context, req agent.MCPRequest) (agent.MCPConnection, error) {
	if req.Session >= len(c.Logs) {
		return nil, fmt.Errorf("mcp replay: session %d connects MCP servers, but only %d recorded log(s) were given", req.Session+1, len(c.Logs))
	}
	return connect(ctx, c.Logs[req.Session], req, c.Logger)
}

// recordedCall is a tool call the recording logged, with its result.
type recordedCall struct {
	id     string
	args   string
	text   string
	isErr  bool
	hasRes bool
}

// connect finds the connection req.Prior of the log, starts a replay
// server for each of its servers and connects them with package mcp.
func connect(ctx context.Context, events []sessionlog.Event, req agent.MCPRequest, log *slog.Logger) (agent.MCPConnection, error) {
	var starts []int
	for i := range events {
		if events[i].Type == sessionlog.TypeMCPConnect {
			starts = append(starts, i)
		}
	}
	if req.Prior >= len(starts) {
		return nil, fmt.Errorf("mcp replay: the session makes its connection %d to MCP servers, but its recording has %d mcp/connect record(s)", req.Prior+1, len(starts))
	}
	at := starts[req.Prior]
	end := len(events)
	if req.Prior+1 < len(starts) {
		end = starts[req.Prior+1]
	}
	st, err := sessionlog.DecodeData[sessionlog.MCPConnectData](&events[at])
	if err != nil {
		return nil, fmt.Errorf("mcp replay: seq %d: %w", events[at].Seq, err)
	}
	var want, got []string
	for _, s := range req.Servers {
		want = append(want, s.Name+" ("+string(s.Transport)+")")
	}
	for _, s := range st.Servers {
		got = append(got, s.Name+" ("+s.Transport+")")
	}
	if !slices.Equal(want, got) {
		return nil, fmt.Errorf("mcp replay: the session connects [%s], but the recording (seq %d) connected [%s]", strings.Join(want, ", "), events[at].Seq, strings.Join(got, ", "))
	}
	servers := make(map[string]*server, len(st.Servers))
	for _, s := range st.Servers {
		servers[s.Name] = newServer(s)
	}
	set, err := mcp.Connect(ctx, req.Servers, mcp.Options{
		Logger: log,
		Dir:    req.Cwd,
		Roots:  []string{req.Cwd},
		Transport: func(cfg mcp.ServerConfig) sdk.Transport {
			return servers[cfg.Name]
		},
	})
	var ce *mcp.ConnectError
	if err != nil && !errors.As(err, &ce) {
		_ = set.Close()
		return nil, fmt.Errorf("mcp replay: %w", err)
	}
	conn := &connection{set: set, recorded: st, failed: map[string]string{}}
	if ce != nil {
		for _, se := range ce.Failures {
			conn.failed[se.Server] = strings.TrimPrefix(se.Error(), "mcp: ")
		}
	}
	calls := recordedCalls(events[at:end])
	for _, t := range set.Tools() {
		mt, ok := t.(*mcp.Tool)
		if !ok {
			continue
		}
		conn.tools = append(conn.tools, &tool{Tool: mt, srv: servers[mt.Server()], calls: calls})
	}
	return conn, nil
}

// calls are the recorded calls by call id, each consumed in order.
type calls struct {
	mu   sync.Mutex
	byID map[string][]recordedCall
}

// recordedCalls collects the tool calls of the range with their results.
func recordedCalls(events []sessionlog.Event) *calls {
	c := &calls{byID: map[string][]recordedCall{}}
	open := map[string]int{}
	for i := range events {
		e := &events[i]
		switch e.Type {
		case sessionlog.TypeToolCall:
			d, err := sessionlog.DecodeData[sessionlog.ToolCallData](e)
			if err != nil {
				continue
			}
			c.byID[d.CallID] = append(c.byID[d.CallID], recordedCall{id: d.CallID, args: d.Arguments})
			open[d.CallID] = len(c.byID[d.CallID]) - 1
		case sessionlog.TypeToolResult:
			d, err := sessionlog.DecodeData[sessionlog.ToolResultData](e)
			if err != nil || len(d.Message.Content) == 0 {
				continue
			}
			p := d.Message.Content[0]
			k, ok := open[p.ToolCallID]
			if !ok {
				continue
			}
			delete(open, p.ToolCallID)
			var text strings.Builder
			for _, part := range p.Content {
				text.WriteString(part.Text)
			}
			rc := &c.byID[p.ToolCallID][k]
			rc.text, rc.isErr, rc.hasRes = text.String(), p.IsError, true
		}
	}
	return c
}

// take consumes the next recorded call with id.
func (c *calls) take(id string) (recordedCall, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.byID[id]
	if len(list) == 0 {
		return recordedCall{}, false
	}
	c.byID[id] = list[1:]
	return list[0], true
}

// connection is a replayed agent.MCPConnection: a live mcp.Set whose
// servers are replay servers.
type connection struct {
	set      *mcp.Set
	recorded sessionlog.MCPConnectData
	failed   map[string]string // server → the client's error
	tools    []*tool
}

// Tools implements agent.MCPConnection: the client's tools.
func (c *connection) Tools() []tools.Tool {
	out := make([]tools.Tool, len(c.tools))
	for i, t := range c.tools {
		out[i] = t
	}
	return out
}

// Status implements agent.MCPConnection as the live connection does,
// from what the client listed, so a client that names, describes or
// lists tools otherwise than the recording shows in the log. A server
// that failed in the recording and failed again in the client (its
// replay server refuses to connect) carries the recording's error, which
// no replay can reproduce (a process's exit status, its stderr).
func (c *connection) Status() sessionlog.MCPConnectData {
	byServer := map[string][]sessionlog.MCPToolData{}
	for _, t := range c.tools {
		sc := t.Schema()
		byServer[t.Server()] = append(byServer[t.Server()], sessionlog.MCPToolData{
			Name: t.Name(), Remote: t.RemoteName(), Title: t.Title(), ReadOnly: t.ReadOnlyHint(),
			Description: sc.Description, Parameters: sc.Parameters})
	}
	var d sessionlog.MCPConnectData
	for _, rec := range c.recorded.Servers {
		sd := sessionlog.MCPServerData{Name: rec.Name, Transport: rec.Transport, Error: c.failed[rec.Name], Tools: byServer[rec.Name]}
		if rec.Error != "" && sd.Error != "" {
			sd.Error = rec.Error
		}
		d.Servers = append(d.Servers, sd)
	}
	return d
}

// Close implements agent.MCPConnection.
func (c *connection) Close() error { return c.set.Close() }

// tool is a tool of the client (an *mcp.Tool) whose calls first tell its
// replay server which recorded call is coming, so the server can answer
// it with that call's result.
type tool struct {
	*mcp.Tool
	srv   *server
	calls *calls
}

var (
	_ agent.MCPTool   = (*tool)(nil)
	_ tools.Describer = (*tool)(nil)
)

// Run implements tools.Tool: the client's Run, answered by the replay
// server with the recorded result of the call with the env's call id. A
// call the recording did not make (or made with no result) fails at
// once; one the client sends with other arguments than the recording's
// is refused by the server, naming both; one the client answers without
// asking the server is an error result saying so.
func (t *tool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	id := ""
	if env != nil {
		id = env.CallID
	}
	fail := func(format string, a ...any) (tools.Result, error) {
		return tools.Result{Kind: tools.KindOther, Title: t.Title(), IsError: true, Text: fmt.Sprintf(format, a...)}, nil
	}
	rc, ok := t.calls.take(id)
	switch {
	case !ok:
		return fail("mcp replay: the recording made no call %q of %s", id, t.Name())
	case !rc.hasRes:
		return fail("mcp replay: the recording has no result for the call %q of %s", id, t.Name())
	}
	// The recording logged the model's arguments; the live call sent
	// their canonical encoding, which the server compares with what it
	// receives.
	want := rc.args
	if canon, err := t.Arguments(json.RawMessage(rc.args)); err == nil {
		want = string(canon)
	}
	exp := &expected{remote: t.RemoteName(), args: want, call: rc}
	if t.srv == nil {
		return fail("mcp replay: the client lists %s of the server %q, which the recording did not connect", t.Name(), t.Server())
	}
	t.srv.expect(exp)
	res, err := t.Tool.Run(ctx, env, args)
	if pending, refused := t.srv.withdraw(exp); pending && !refused && err == nil {
		res.IsError = true
		res.Text = fmt.Sprintf("mcp replay: the client answered the call %q of %s without sending it to the server; it answered: %s", id, t.Name(), res.Text)
	}
	return res, err
}
