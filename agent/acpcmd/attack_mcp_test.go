package acpcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// standinMCP is the mcpServers entry of a stdio stand-in MCP server
// (reel mcp-standin MODE) called name.
func standinMCP(name, mode string) map[string]any {
	return map[string]any{"name": name, "command": reelExe, "args": []string{"mcp-standin", mode}, "env": []any{}}
}

// newSessionWith opens a session in cwd with MCP servers.
func (p *proc) newSessionWith(cwd string, servers ...map[string]any) string {
	p.t.Helper()
	res, _ := p.call("session/new", map[string]any{"cwd": cwd, "mcpServers": servers})
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.SessionID == "" {
		p.t.Fatalf("session/new result %s", res)
	}
	return r.SessionID
}

// promptAnswering runs a prompt and answers the permission requests reel
// sends with the option ids of answers, in order (failing when it asks
// more often), until the prompt's response arrives.
func promptAnswering(t *testing.T, p *proc, sid, text string, answers ...string) (stop string, asked int, frames []frame) {
	t.Helper()
	stop, frames = promptWith(t, p, sid, text, func(params json.RawMessage) string {
		if asked >= len(answers) {
			t.Fatalf("reel asked for permission %d times, the test has %d answers: %s", asked+1, len(answers), params)
		}
		asked++
		return answers[asked-1]
	})
	return stop, asked, frames
}

// logEvents reads a session's log.
func logEvents(t *testing.T, state, sid string) []sessionlog.Event {
	t.Helper()
	d, _, err := jsonl.ReadValid(filepath.Join(state, sid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return d.Events
}

// TestAttackMCPServerNeverSeesTheKey: an MCP server is a process reel
// starts, and the model chooses what it is asked. Through the real binary,
// a model that asks the server for the model key in each variable reel
// reads it from gets "is not set" every time, and the key is in no file
// the session leaves behind.
func TestAttackMCPServerNeverSeesTheKey(t *testing.T) {
	t.Parallel()
	const key = "sk-reel-mcp-hunted-0123456789abcdef"
	dir, ws, state := workspace(t)
	var calls []standin.ToolCall
	for i, v := range []string{"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "REEL_API_KEY"} {
		calls = append(calls, standin.ToolCall{ID: "c" + strconv.Itoa(i), Name: "mcp__t__getenv", Arguments: jsonArgs(t, map[string]any{"name": v})})
	}
	script := &standin.Script{Responses: []standin.Response{{ToolCalls: calls}, {Text: "done"}}}
	url, _ := standinURL(t, script)
	env := append(baseEnv(t), "DEEPSEEK_API_KEY="+key, "OPENAI_API_KEY="+key, "REEL_API_KEY="+key)
	p := startProc(t, dir, env, "acp", "--state-dir", state, "--mode", "workspace-write",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--mcp-trust", "t")
	p.initialize()
	sid := p.newSessionWith(ws, standinMCP("t", "tools"))
	stop, _, frames := promptAnswering(t, p, sid, "hunt the key")
	if stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var results []string
	for _, u := range toolUpdates(frames) {
		if u.status == "completed" || u.status == "failed" {
			results = append(results, u.text)
		}
	}
	if len(results) != 3 {
		t.Fatalf("want 3 tool results, got %q", results)
	}
	for _, r := range results {
		if strings.Contains(r, key) || !strings.HasSuffix(r, " is not set") {
			t.Errorf("the MCP server answered %q", r)
		}
	}
	if seen, leaked := filesHolding(t, dir, func(b []byte) bool { return strings.Contains(string(b), key) }); seen == 0 || len(leaked) > 0 {
		t.Errorf("read %d files; the key is in %v", seen, leaked)
	}
}

// TestAttackMCPCallsNeedTheUsersYes: a model cannot run an untrusted MCP
// tool the user did not allow. Through the real binary, with a tool that
// creates a file: a call rejected once does not run and the next call is
// asked again; after "always reject" no call runs or asks; a loaded
// session remembers the answer (approval/asked and approval/decided in
// its log).
func TestAttackMCPCallsNeedTheUsersYes(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	touch := func(id, name string) standin.Response {
		return standin.Response{ToolCalls: []standin.ToolCall{{ID: id, Name: "mcp__t__touch", Arguments: jsonArgs(t, map[string]any{"name": name})}}}
	}
	script := &standin.Script{Responses: []standin.Response{
		touch("c1", "pwned1"), touch("c2", "pwned2"), touch("c3", "pwned3"), {Text: "tried"},
		touch("c4", "pwned4"), {Text: "tried again"},
	}}
	url, _ := standinURL(t, script)
	args := []string{"acp", "--state-dir", state, "--mode", "workspace-write", "--provider", "deepseek", "--base-url", url, "--model", "standin"}
	p := startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	sid := p.newSessionWith(ws, standinMCP("t", "tools"))
	stop, asked, frames := promptAnswering(t, p, sid, "create the files", "reject_once", "reject_always")
	if stop != "end_turn" || asked != 2 {
		t.Fatalf("stopReason %q after %d permission requests, want end_turn after 2", stop, asked)
	}
	var texts []string
	for _, u := range toolUpdates(frames) {
		if u.status == "failed" || u.status == "completed" {
			texts = append(texts, u.status+": "+u.text)
		}
	}
	want := []string{
		`failed: Error: the user rejected tool "mcp__t__touch". Nothing was executed.`,
		`failed: Error: the user rejected the MCP tool "mcp__t__touch" for the rest of this session. Nothing was executed.`,
		`failed: Error: the user rejected the MCP tool "mcp__t__touch" for the rest of this session. Nothing was executed.`,
	}
	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Errorf("results:\n%s\nwant:\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// A new process loads the session: the answer still holds.
	p = startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	p.call("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{standinMCP("t", "tools")}})
	if stop, asked, _ := promptAnswering(t, p, sid, "once more"); stop != "end_turn" || asked != 0 {
		t.Fatalf("after load: stopReason %q after %d permission requests, want end_turn after none", stop, asked)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for i := 1; i <= 4; i++ {
		if _, err := os.Stat(filepath.Join(ws, "pwned"+strconv.Itoa(i))); err == nil {
			t.Errorf("pwned%d exists: a rejected MCP call ran", i)
		}
	}
	// The audit pairs, as dsh writes them: the question, then its outcome.
	var audit []string
	for _, e := range logEvents(t, state, sid) {
		switch e.Type {
		case sessionlog.TypeApprovalAsked:
			d, err := sessionlog.DecodeData[sessionlog.ApprovalAskedData](&e)
			if err != nil {
				t.Fatal(err)
			}
			audit = append(audit, "asked "+d.ToolName+" "+d.CallID)
		case sessionlog.TypeApprovalDecided:
			d, err := sessionlog.DecodeData[sessionlog.ApprovalDecidedData](&e)
			if err != nil {
				t.Fatal(err)
			}
			audit = append(audit, d.Outcome)
		}
	}
	if got := strings.Join(audit, ","); got != "asked mcp__t__touch c1,rejected,asked mcp__t__touch c2,rejected-always" {
		t.Errorf("approval records %q", got)
	}
}

// TestAttackMCPHostileResultsAndHangs: what an MCP server returns is the
// model's to shape (a tool whose output it controls). Through the real
// binary: a 12 MB result is cut before it reaches the log and the model
// (a frame over the SDK's 16 MiB bound closes that server's connection);
// a call that never returns ends with session/cancel, its result logged;
// and the server process is gone when reel exits.
func TestAttackMCPHostileResultsAndHangs(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	script := &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{
			{ID: "pid", Name: "mcp__t__pid", Arguments: "{}"},
			{ID: "big", Name: "mcp__t__big", Arguments: `{"bytes":12000000}`},
		}},
		{Text: "big done"},
		{ToolCalls: []standin.ToolCall{{ID: "slow", Name: "mcp__t__slow", Arguments: "{}"}}},
		{Text: "never reached"},
	}}
	url, _ := standinURL(t, script)
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "workspace-write",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--mcp-trust", "*")
	p.initialize()
	sid := p.newSessionWith(ws, standinMCP("t", "tools"))
	stop, _, frames := promptAnswering(t, p, sid, "big")
	if stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	pid := 0
	for _, u := range toolUpdates(frames) {
		if u.id == "pid" && u.status == "completed" {
			pid, _ = strconv.Atoi(u.text)
		}
		if u.id == "big" && len(u.text) > 200_000 {
			t.Errorf("the client was shown %d bytes of the 12 MB result", len(u.text))
		}
	}
	if pid <= 0 {
		t.Fatal("no server pid")
	}
	id := p.request("session/prompt", promptParams(sid, "slow"))
	for {
		f := p.next()
		if f.Method == "session/update" && strings.Contains(f.raw, `"toolCallId":"slow"`) && strings.Contains(f.raw, `"in_progress"`) {
			break
		}
	}
	time.Sleep(200 * time.Millisecond) // let the call reach the server
	p.notify("session/cancel", map[string]any{"sessionId": sid})
	resp, _ := p.await(id)
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil || r.StopReason != "cancelled" {
		t.Fatalf("the hung call's prompt answered %s", resp.raw)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the MCP server (pid %d) outlived reel", pid)
	}
	results := map[string]int{}
	for _, e := range logEvents(t, state, sid) {
		if e.Type != sessionlog.TypeToolResult {
			continue
		}
		d, err := sessionlog.DecodeData[sessionlog.ToolResultData](&e)
		if err != nil {
			t.Fatal(err)
		}
		results[d.Message.Content[0].ToolCallID] = len(e.Data)
	}
	if n, ok := results["big"]; !ok || n > 200_000 {
		t.Errorf("the big result's log record is %d bytes (logged: %v)", n, ok)
	}
	if _, ok := results["slow"]; !ok {
		t.Errorf("the cancelled call has no tool/result: %v", results)
	}
}
