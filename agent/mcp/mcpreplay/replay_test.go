package mcpreplay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/mcp"
	"github.com/reel-agent/reel/agent/mcp/mcpreplay"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// recorded builds a log: one mcp/connect per connection (each offering
// mcp__t__echo), then the given calls, each with its result.
func recorded(connections int, calls ...[3]string) []sessionlog.Event {
	var evs []sessionlog.Event
	add := func(typ string, p sessionlog.Payload) {
		evs = append(evs, sessionlog.Event{Type: typ, Seq: len(evs), Data: p.AppendJSON(nil)})
	}
	for c := 0; c < connections; c++ {
		add(sessionlog.TypeMCPConnect, sessionlog.MCPConnectData{Servers: []sessionlog.MCPServerData{
			{Name: "t", Transport: "stdio", Tools: []sessionlog.MCPToolData{{Name: "mcp__t__echo", Remote: "echo", Title: "t: echo",
				Description: "Echo.", Parameters: json.RawMessage(`{"type":"object"}`)}}},
			{Name: "dead", Transport: "stdio", Error: "server \"dead\": initialize failed"},
		}})
		for _, c := range calls {
			add(sessionlog.TypeToolCall, sessionlog.ToolCallData{Turn: 1, Step: 1, CallID: c[0], Name: "mcp__t__echo", Arguments: c[1]})
			add(sessionlog.TypeToolResult, sessionlog.NewToolResult(1, 1, c[0], c[2], false, "m"))
		}
	}
	return evs
}

// servers are the session's servers; their commands do not exist: a
// replay starts none.
var servers = []mcp.ServerConfig{
	{Name: "t", Transport: mcp.TransportStdio, Command: "/nonexistent/t"},
	{Name: "dead", Transport: mcp.TransportStdio, Command: "/nonexistent/dead"},
}

func run(t *testing.T, conn agent.MCPConnection, id, args string) tools.Result {
	t.Helper()
	res, err := conn.Tools()[0].Run(context.Background(), &tools.Env{CallID: id}, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestReplayedServers: a replayed connection is the recording's (tools,
// schemas, failures), and each call answers with the recorded result of
// the same id and arguments, once; anything else is an error result
// saying what differs.
func TestReplayedServers(t *testing.T) {
	c := mcpreplay.Connector{Logs: [][]sessionlog.Event{recorded(1, [3]string{"c1", `{"text":"a"}`, "a"}, [3]string{"c1", `{"text":"b"}`, "b"})}}
	conn, err := c.Connect(context.Background(), agent.MCPRequest{Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	if st := conn.Status(); len(st.Servers) != 2 || st.Servers[1].Error == "" || len(conn.Tools()) != 1 {
		t.Fatalf("status %+v, %d tools", st, len(conn.Tools()))
	}
	if sc := conn.Tools()[0].Schema(); sc.Name != "mcp__t__echo" || sc.Description != "Echo." || string(sc.Parameters) != `{"type":"object"}` {
		t.Errorf("schema %+v", sc)
	}
	for _, tt := range []struct{ id, args, want string }{
		{"c1", `{"text":"a"}`, "a"},
		{"c1", `{"text":"b"}`, "b"},
		{"c1", `{"text":"c"}`, `the recording made no call "c1"`},
		{"c2", `{"text":"a"}`, `the recording made no call "c2"`},
	} {
		if got := run(t, conn, tt.id, tt.args); !strings.Contains(got.Text, tt.want) || got.IsError != strings.Contains(tt.want, "recording") {
			t.Errorf("%s %s: %+v, want %q", tt.id, tt.args, got, tt.want)
		}
	}
	conn, _ = c.Connect(context.Background(), agent.MCPRequest{Servers: servers})
	if got := run(t, conn, "c1", `{"text":"b"}`); !got.IsError || !strings.Contains(got.Text, `the server "t" was called with echo {"text":"b"}, but the recording called it with {"text":"a"} (call "c1")`) {
		t.Errorf("other arguments: %+v", got)
	}
}

// TestReplayedConnectRefusals: connecting what the recording did not is
// an error naming what differs.
func TestReplayedConnectRefusals(t *testing.T) {
	c := mcpreplay.Connector{Logs: [][]sessionlog.Event{recorded(1)}}
	for _, tt := range []struct {
		req  agent.MCPRequest
		want string
	}{
		{agent.MCPRequest{Servers: servers[:1]}, "the session connects [t (stdio)], but the recording (seq 0) connected [t (stdio), dead (stdio)]"},
		{agent.MCPRequest{Servers: servers, Prior: 1}, "makes its connection 2 to MCP servers, but its recording has 1 mcp/connect record(s)"},
		{agent.MCPRequest{Servers: servers, Session: 1}, "session 2 connects MCP servers, but only 1 recorded log(s) were given"},
	} {
		if _, err := c.Connect(context.Background(), tt.req); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.req, err, tt.want)
		}
	}
}

// TestReplayedLoadConnectsTheNextRecord: a loaded session's connection is
// the recording's next record, with only the calls made after it.
func TestReplayedLoadConnectsTheNextRecord(t *testing.T) {
	c := mcpreplay.Connector{Logs: [][]sessionlog.Event{recorded(2, [3]string{"c1", `{}`, "x"})}}
	conn, err := c.Connect(context.Background(), agent.MCPRequest{Servers: servers, Prior: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, conn, "c1", `{}`); got.IsError || got.Text != "x" {
		t.Errorf("%+v", got)
	}
	if got := run(t, conn, "c1", `{}`); !got.IsError {
		t.Errorf("the first connection's call was served again: %+v", got)
	}
}

// TestReplayedCallsCompareCanonicalArguments: the recording logged the
// model's arguments as written, the engine runs their canonical encoding
// (MCPTool.Arguments), and a replay matches the two; arguments the live
// tool refuses are refused by the replayed one alike.
func TestReplayedCallsCompareCanonicalArguments(t *testing.T) {
	c := mcpreplay.Connector{Logs: [][]sessionlog.Event{recorded(1, [3]string{"c1", "{ \"text\": \"<a>\", \"n\": 1 }", "ok"})}}
	conn, err := c.Connect(context.Background(), agent.MCPRequest{Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	mt := conn.Tools()[0].(agent.MCPTool)
	args, err := mt.Arguments(json.RawMessage("{\"n\":1,\n\"text\":\"<a>\"}"))
	if err != nil || string(args) != `{"n":1,"text":"\u003ca\u003e"}` {
		t.Fatalf("Arguments = %s, %v", args, err)
	}
	if got := run(t, conn, "c1", string(args)); got.IsError || got.Text != "ok" {
		t.Errorf("%+v", got)
	}
	if _, err := mt.Arguments(json.RawMessage(`{"text":"a","Text":"b"}`)); err == nil || !strings.Contains(err.Error(), `fields "text" and "Text" differ only in case`) {
		t.Errorf("case-colliding arguments: %v", err)
	}
}

// TestReplayGoesThroughTheClient: the replayed tools are package mcp's
// client tools, connected to servers that list what the recording holds:
// the status the client builds from the listing equals the recorded one
// (names, remote names, titles, descriptions, read-only hints, schemas, a
// schema without "type" included), the recorded failure is kept, and
// results come back with their isError.
func TestReplayGoesThroughTheClient(t *testing.T) {
	rec := sessionlog.MCPConnectData{Servers: []sessionlog.MCPServerData{
		{Name: "s", Transport: "http", Tools: []sessionlog.MCPToolData{
			{Name: "mcp__s__a_b", Remote: "a.b", Title: "s: The A", ReadOnly: true, Description: "A.", Parameters: json.RawMessage(`{"properties":{"x":{"type":"string"}}}`)},
			{Name: "mcp__s__fail", Remote: "fail", Title: "s: fail", Description: "Fail.", Parameters: json.RawMessage(`{"type":"object"}`)},
		}},
		{Name: "dead", Transport: "stdio", Error: `server "dead": start failed: exec: no such file`},
	}}
	var evs []sessionlog.Event
	add := func(typ string, p sessionlog.Payload) {
		evs = append(evs, sessionlog.Event{Type: typ, Seq: len(evs), Data: p.AppendJSON(nil)})
	}
	add(sessionlog.TypeMCPConnect, rec)
	add(sessionlog.TypeToolCall, sessionlog.ToolCallData{Turn: 1, Step: 1, CallID: "f", Name: "mcp__s__fail", Arguments: `{}`})
	add(sessionlog.TypeToolResult, sessionlog.NewToolResult(1, 1, "f", "it failed", true, "m"))
	c := mcpreplay.Connector{Logs: [][]sessionlog.Event{evs}}
	conn, err := c.Connect(context.Background(), agent.MCPRequest{Servers: []mcp.ServerConfig{
		{Name: "s", Transport: mcp.TransportHTTP, URL: "http://127.0.0.1:9/none"},
		{Name: "dead", Transport: mcp.TransportStdio, Command: "/nonexistent/dead"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got, _ := json.Marshal(conn.Status())
	want, _ := json.Marshal(rec)
	if string(got) != string(want) {
		t.Errorf("status\n got %s\nwant %s", got, want)
	}
	if _, ok := conn.Tools()[0].(interface{ RemoteName() string }); !ok {
		t.Errorf("tool %T is not package mcp's", conn.Tools()[0])
	}
	res, err := conn.Tools()[1].Run(context.Background(), &tools.Env{CallID: "f"}, json.RawMessage(`{}`))
	if err != nil || !res.IsError || res.Text != "it failed" {
		t.Errorf("fail: %+v, %v", res, err)
	}
}

// TestReplayConcurrentCalls: calls of one tool running at once, each with
// its own arguments, each get their own recorded result.
func TestReplayConcurrentCalls(t *testing.T) {
	const n = 8
	var calls [][3]string
	for i := range n {
		calls = append(calls, [3]string{fmt.Sprintf("c%d", i), fmt.Sprintf(`{"text":"%d"}`, i), fmt.Sprintf("result %d", i)})
	}
	c := mcpreplay.Connector{Logs: [][]sessionlog.Event{recorded(1, calls...)}}
	conn, err := c.Connect(context.Background(), agent.MCPRequest{Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got := make([]tools.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			got[i], _ = conn.Tools()[0].Run(context.Background(), &tools.Env{CallID: calls[i][0]}, json.RawMessage(calls[i][1]))
		})
	}
	wg.Wait()
	for i, r := range got {
		if r.IsError || r.Text != calls[i][2] {
			t.Errorf("call %d: %+v, want %q", i, r, calls[i][2])
		}
	}
}
