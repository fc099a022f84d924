package acpcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/mcp/mcptest"
)

// TestAttackMCPArgumentsOneParse is finding 2 of issue 26: MCP arguments
// skipped the one strict parse. The model sends an MCP tool arguments in
// which a key is given twice (plainly, with an escaped spelling, or in
// another case, at the top or nested), so the editor's permission prompt
// and the server's decoder could each read a different value. Through the
// real binary, a real MCP server process and a client that approves
// everything: none of these calls is put to the user, none reaches the
// server, and the model is told which keys collide. A well-formed call
// written loosely (spaces, unsorted keys, escapes, nesting) is asked
// about, and the server receives exactly the bytes the permission
// request's rawInput showed: the canonical encoding of the one parse.
func TestAttackMCPArgumentsOneParse(t *testing.T) {
	t.Parallel()
	for _, trusted := range []bool{false, true} {
		name := "untrusted"
		if trusted {
			name = "trusted"
		}
		t.Run(name, func(t *testing.T) { attackMCPArguments(t, trusted) })
	}
}

// attackMCPArguments runs TestAttackMCPArgumentsOneParse against a server
// the user must approve calls of, or (trusted) one whose calls run without
// asking: the refusals are the same, and a trusted server too receives the
// canonical bytes.
func attackMCPArguments(t *testing.T, trusted bool) {
	dir, ws, state := workspace(t)
	attacks := []struct{ id, args, keys string }{
		{"plain", `{"cmd":"echo SAFE","cmd":"rm -rf ~"}`, `"cmd"`},
		{"escaped", `{"cmd":"echo SAFE","c\u006dd":"rm -rf ~"}`, `"cmd"`},
		{"case", `{"cmd":"echo SAFE","CMD":"rm -rf ~"}`, `"CMD"`},
		{"case_kelvin", `{"kind":"safe","\u212aind":"evil"}`, `"kind"`},
		{"nested", `{"job":{"steps":[{"cmd":"echo SAFE","cmd":"rm -rf ~"}]}}`, `"cmd"`},
		{"nested_escaped", `{"job":{"cmd":"echo SAFE","\u0063md":"rm -rf ~"}}`, `"cmd"`},
		{"nested_case", `{"job":[{"Cmd":"echo SAFE","cMD":"rm -rf ~"}]}`, `"cMD"`},
		{"deep", strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200), "nest"},
	}
	var calls []standin.ToolCall
	for _, a := range attacks {
		calls = append(calls, standin.ToolCall{ID: a.id, Name: "mcp__r__record", Arguments: a.args})
	}
	benign := standin.ToolCall{ID: "benign", Name: "mcp__r__record",
		Arguments: "{ \"z\": [1, 2.50, -0, 1e3, {\"y\": null, \"x\": true}],\n \"a\": \"x<y & \\u00e9\\u2028\", \"m\": {\"b\": \"\", \"A\": {}} }"}
	const canonical = `{"a":"x\u003cy \u0026 é\u2028","m":{"A":{},"b":""},"z":[1,2.50,-0,1e3,{"x":true,"y":null}]}`
	script := &standin.Script{Responses: []standin.Response{
		{ToolCalls: calls},
		{ToolCalls: []standin.ToolCall{benign}},
		{Text: "done"},
	}}
	url, _ := standinURL(t, script)
	args := []string{"acp", "--state-dir", state, "--mode", "workspace-write",
		"--provider", "deepseek", "--base-url", url, "--model", "standin"}
	if trusted {
		args = append(args, "--mcp-trust", "r")
	}
	p := startProc(t, dir, baseEnv(t), args...)
	underAttack(t, p)
	p.initialize()
	sid := p.newSessionWith(ws, standinMCP("r", mcptest.ModeRecord))
	stop, asked, frames := promptAllowing(t, p, sid, "call the server")
	if stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	results := toolResults(frames)
	for _, a := range attacks {
		got := results[a.id]
		if !strings.HasPrefix(got, "failed: tools: mcp__r__record: ") || !strings.Contains(got, a.keys) {
			t.Errorf("%s: result %q, want a failed call naming %s", a.id, mcpArgsShort(got), a.keys)
		}
	}
	// Only the benign call was put to the user (none was, when trusted).
	var rawInputs []string
	for _, params := range asked {
		var req struct {
			ToolCall struct {
				ToolCallID string          `json:"toolCallId"`
				RawInput   json.RawMessage `json:"rawInput"`
			} `json:"toolCall"`
		}
		if err := json.Unmarshal(params, &req); err != nil {
			t.Fatal(err)
		}
		if req.ToolCall.ToolCallID != "benign" {
			t.Errorf("the call %q was put to the user, showing %s", req.ToolCall.ToolCallID, mcpArgsShort(string(req.ToolCall.RawInput)))
			continue
		}
		rawInputs = append(rawInputs, string(req.ToolCall.RawInput))
	}
	wantAsked := 1
	if trusted {
		wantAsked = 0
	}
	if len(rawInputs) != wantAsked {
		t.Fatalf("the benign call was asked about %d times, want %d", len(rawInputs), wantAsked)
	}
	// The server was called once, with the bytes the user approved.
	b, err := os.ReadFile(filepath.Join(ws, mcptest.RecordFile))
	if err != nil {
		t.Fatalf("the server recorded no call: %v", err)
	}
	received := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(received) != 1 {
		for _, r := range received {
			t.Errorf("the server received %s", mcpArgsShort(r))
		}
		t.Fatalf("the server was called %d times, want once (the benign call)", len(received))
	}
	if !trusted && received[0] != rawInputs[0] {
		t.Errorf("the server received\n%s\nthe permission request showed\n%s", received[0], rawInputs[0])
	}
	if received[0] != canonical {
		t.Errorf("the server received\n%s\nwant the canonical encoding\n%s", received[0], canonical)
	}
	if got := results["benign"]; got != "completed: "+canonical {
		t.Errorf("benign result %q", got)
	}
}

// mcpArgsShort shortens s for a failure message.
func mcpArgsShort(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
