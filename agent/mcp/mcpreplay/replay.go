package mcpreplay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

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
}

var _ agent.MCPConnector = Connector{}

// Connect implements agent.MCPConnector.
func (c Connector) Connect(_ context.Context, req agent.MCPRequest) (agent.MCPConnection, error) {
	if req.Session >= len(c.Logs) {
		return nil, fmt.Errorf("mcp replay: session %d connects MCP servers, but only %d recorded log(s) were given", req.Session+1, len(c.Logs))
	}
	return connect(c.Logs[req.Session], req)
}

// recordedCall is a tool result the recording logged for a call id.
type recordedCall struct {
	args   string
	text   string
	isErr  bool
	hasRes bool
}

// connect finds the connection req.Prior of the log and builds its tools.
func connect(events []sessionlog.Event, req agent.MCPRequest) (agent.MCPConnection, error) {
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
	calls := recordedCalls(events[at:end])
	conn := &connection{status: st}
	for _, s := range st.Servers {
		for _, t := range s.Tools {
			sc := tools.Schema{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
			conn.tools = append(conn.tools, &tool{server: s.Name, data: t, schema: sc, calls: calls})
		}
	}
	return conn, nil
}

// calls are the recorded results by call id, each consumed in order.
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
			c.byID[d.CallID] = append(c.byID[d.CallID], recordedCall{args: d.Arguments})
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

// connection is a replayed agent.MCPConnection.
type connection struct {
	status sessionlog.MCPConnectData
	tools  []*tool
}

// Tools implements agent.MCPConnection.
func (c *connection) Tools() []tools.Tool {
	out := make([]tools.Tool, len(c.tools))
	for i, t := range c.tools {
		out[i] = t
	}
	return out
}

// Status implements agent.MCPConnection: what the recording logged.
func (c *connection) Status() sessionlog.MCPConnectData { return c.status }

// Close implements agent.MCPConnection; there is nothing to stop.
func (c *connection) Close() error { return nil }

// tool is one replayed MCP tool.
type tool struct {
	server string
	data   sessionlog.MCPToolData
	schema tools.Schema
	calls  *calls
}

var (
	_ agent.MCPTool   = (*tool)(nil)
	_ tools.Describer = (*tool)(nil)
)

// Name implements tools.Tool.
func (t *tool) Name() string { return t.data.Name }

// Schema implements tools.Tool: the schema the recording sent.
func (t *tool) Schema() tools.Schema {
	s := t.schema
	s.Parameters = bytes.Clone(s.Parameters)
	return s
}

// Server implements agent.MCPTool.
func (t *tool) Server() string { return t.server }

// Arguments implements agent.MCPTool: the live tool's parse
// (mcp.CheckArguments with the default bound).
func (t *tool) Arguments(args json.RawMessage) (json.RawMessage, error) {
	return mcp.CheckArguments(t.data.Name, args, mcp.DefaultMaxArgBytes)
}

// Title is the title the recording's client was shown.
func (t *tool) Title() string { return t.data.Title }

// Describe implements tools.Describer as the live MCP tool does.
func (t *tool) Describe(json.RawMessage) (string, tools.Kind, []tools.Location) {
	return t.data.Title, tools.KindOther, nil
}

// Run implements tools.Tool: the recorded result of the call with the
// env's call id, when the recording made it with the same arguments.
func (t *tool) Run(_ context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	res := tools.Result{Kind: tools.KindOther, Title: t.data.Title, IsError: true}
	id := ""
	if env != nil {
		id = env.CallID
	}
	rc, ok := t.calls.take(id)
	// The recording logged the model's arguments; the live call sent
	// their canonical encoding, which args is.
	recorded := json.RawMessage(rc.args)
	if canon, err := t.Arguments(recorded); err == nil {
		recorded = canon
	}
	switch {
	case !ok:
		res.Text = fmt.Sprintf("mcp replay: the recording made no call %q of %s", id, t.data.Name)
	case string(recorded) != string(args):
		res.Text = fmt.Sprintf("mcp replay: the recording called %s (%q) with %s, not %s", t.data.Name, id, rc.args, args)
	case !rc.hasRes:
		res.Text = fmt.Sprintf("mcp replay: the recording has no result for the call %q of %s", id, t.data.Name)
	default:
		res.Text, res.IsError = rc.text, rc.isErr
	}
	return res, nil
}
