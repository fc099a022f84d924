package acpcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
)

// TestAttackMCPNamesCannotInheritApproval: an MCP tool's reel name
// (mcp__SERVER__TOOL) is not one-to-one with the (server, tool) the user
// approved: servers "a" and "a__b" with tools "b__touch" and "touch" both
// join to mcp__a__b__touch, and "x.y" and "x_y" both sanitize to
// mcp__x_y__…. Through the real binary: the user allows one server's touch
// for the rest of the session; the session is loaded with the other
// server, which now gets that name; the model calls it. That call must be
// asked (and, rejected, not run), never run on the first server's
// approval.
func TestAttackMCPNamesCannotInheritApproval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		first, second []map[string]any
		call          string
	}{
		{"dunder", []map[string]any{standinMCP("a__b", "tools")},
			[]map[string]any{standinMCP("a", "nested"), standinMCP("a__b", "tools")}, "mcp__a__b__touch"},
		{"sanitized", []map[string]any{standinMCP("x.y", "tools")},
			[]map[string]any{standinMCP("x_y", "tools"), standinMCP("x.y", "tools")}, "mcp__x_y__touch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ws, state := workspace(t)
			touch := func(id, name string) standin.Response {
				return standin.Response{ToolCalls: []standin.ToolCall{{ID: id, Name: tc.call, Arguments: jsonArgs(t, map[string]any{"name": name})}}}
			}
			script := &standin.Script{Responses: []standin.Response{
				touch("c1", "allowed"), {Text: "done"},
				touch("c2", "pwned"), {Text: "tried"},
			}}
			url, _ := standinURL(t, script)
			args := []string{"acp", "--state-dir", state, "--mode", "workspace-write", "--provider", "deepseek", "--base-url", url, "--model", "standin"}
			p := startProc(t, dir, baseEnv(t), args...)
			p.initialize()
			sid := p.newSessionWith(ws, tc.first...)
			// The user allows the first server's tool for the session (when
			// the server is offered at all).
			if stop, _, _ := promptAnswering(t, p, sid, "create a file", "allow_always"); stop != "end_turn" {
				t.Fatalf("first prompt: stopReason %q", stop)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			p = startProc(t, dir, baseEnv(t), args...)
			p.initialize()
			servers := make([]any, len(tc.second))
			for i, s := range tc.second {
				servers[i] = s
			}
			p.call("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": servers})
			stop, asked, _ := promptAnswering(t, p, sid, "create another", "reject_once")
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
				t.Errorf("pwned exists: %s of another server ran on an approval the user gave a different (server, tool) (asked %d times)", tc.call, asked)
			}
			if stop != "end_turn" || asked != 1 {
				t.Errorf("after load: stopReason %q after %d permission requests, want end_turn after 1", stop, asked)
			}
			if tc.name != "dunder" {
				return
			}
			// A server name with "__" is refused where the client sees why.
			var refused bool
			for _, e := range logEvents(t, state, sid) {
				if e.Type != sessionlog.TypeMCPConnect {
					continue
				}
				d, err := sessionlog.DecodeData[sessionlog.MCPConnectData](&e)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range d.Servers {
					if s.Name == "a__b" && strings.Contains(s.Error, `"__"`) {
						refused = true
					}
				}
			}
			if !refused {
				t.Errorf("no mcp/connect refuses the server \"a__b\"")
			}
		})
	}
}
