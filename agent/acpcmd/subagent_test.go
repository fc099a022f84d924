package acpcmd_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// TestSubagents: through the real binary, a subagent call runs a child
// session with its own log (linked to the parent by its header, the
// approval policy never and the parent's mode, a descriptor before its
// first step) and returns the child's final text; a fork child starts
// from a copy of the parent's completed turns; a child may not delegate
// (the depth limit's refusal); a fork cannot run in the background (the
// reference's refusal).
func TestSubagents(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	call := func(id, tool string, args map[string]any) standin.Response {
		return standin.Response{ToolCalls: []standin.ToolCall{{ID: id, Name: tool, Arguments: jsonArgs(t, args)}}}
	}
	script := &standin.Script{Responses: []standin.Response{
		{Text: "turn one done"},
		// Turn 2: a fresh child, which tries to delegate again.
		call("p1", "subagent", map[string]any{"description": "Say alpha", "prompt": "Reply ALPHA.", "run_in_background": false}),
		call("c1", "subagent", map[string]any{"description": "Nested", "prompt": "x"}),
		{Text: "ALPHA", Expect: &standin.Expect{LastMessageContains: "exceeds maxDepth 1"}},
		// Then a fork, which cannot run in the background.
		call("p2", "subagent_fork", map[string]any{"description": "Fork it", "prompt": "What did the first turn say?"}),
		{Text: "It said turn one done.", Expect: &standin.Expect{LastUserContains: "What did the first turn say?"}},
		call("p3", "subagent_fork", map[string]any{"description": "Bg", "prompt": "x", "run_in_background": true}),
		{Text: "parent done", Expect: &standin.Expect{LastMessageContains: "run_in_background is disabled"}},
	}}
	url, _ := standinURL(t, script)
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "read-only",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
	p.initialize()
	sid := p.newSession(ws)
	for _, text := range []string{"first", "delegate"} {
		if stop, _ := p.prompt(sid, text); stop != "end_turn" {
			t.Fatalf("stopReason %q (stderr %s)", stop, p.stderr.String())
		}
	}
	// The children are the parent's business: session/list shows the parent only.
	if list, _ := p.call("session/list", map[string]any{}); strings.Count(string(list), `"sessionId"`) != 1 {
		t.Errorf("session/list: %s", list)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	res := results(t, logEvents(t, state, sid))
	want := map[string]string{"p1": "ALPHA", "p2": "It said turn one done.", "p3": "Error: run_in_background is disabled for this tool instance (enableRunInBackground: false)"}
	for id, w := range want {
		if res[id] != w {
			t.Errorf("result of %s = %q, want %q", id, res[id], w)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(state, "*.jsonl"))
	var children []*jsonl.Decoded
	for _, l := range logs {
		if strings.HasSuffix(l, sid+".jsonl") {
			continue
		}
		d, _, err := jsonl.ReadValid(l)
		if err != nil {
			t.Fatal(err)
		}
		children = append(children, d)
	}
	if len(children) != 2 {
		t.Fatalf("%d child logs, want 2", len(children))
	}
	slices.SortFunc(children, func(a, b *jsonl.Decoded) int { return int(a.Header.CreatedAt - b.Header.CreatedAt) })
	for i, c := range children {
		ch, ok := c.Header.Child()
		if !ok || ch.Parent != sid || ch.Depth != 1 {
			t.Errorf("child %d header %s", i+1, c.Header.Raw)
		}
		var types []string
		seen := map[string]string{}
		for j := range c.Events {
			e := &c.Events[j]
			types = append(types, e.Type)
			if _, ok := seen[e.Type]; !ok {
				seen[e.Type] = string(e.Data)
			}
		}
		joined := strings.Join(types, ",")
		if !strings.Contains(joined, "approval/policy,sandbox/mode,turn/start,") || !strings.Contains(joined, "subagent/descriptor,step/start") {
			t.Errorf("child %d events: %s", i+1, joined)
		}
		if !strings.Contains(seen[sessionlog.TypeSubagentDescriptor], `"mode":"one-shot"`) {
			t.Errorf("child %d descriptor %s", i+1, seen[sessionlog.TypeSubagentDescriptor])
		}
		if i == 1 && (ch.SeedLength == 0 || c.Events[ch.SeedLength].Type != sessionlog.TypeEndSeed) {
			t.Errorf("the fork child's seed: seedLength %d", ch.SeedLength)
		}
	}
	if !strings.Contains(string(children[0].Events[0].Data), `"policy":"never","source":"delegation"`) {
		t.Errorf("child 1 starts with %s", children[0].Events[0].Data)
	}
}

// TestSubagentKilledMidChild: reel is SIGKILLed while a child's turn
// streams (the parent waits in its subagent call). A new process loads the
// parent: both logs load, each repaired (the parent's call gets an error
// result, the child's turn is closed as interrupted), and the parent's
// call and result still pair.
func TestSubagentKilledMidChild(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	script := &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{{ID: "p1", Name: "subagent", Arguments: jsonArgs(t, map[string]any{"description": "Hang", "prompt": "Take forever."})}}},
		{Text: "partial child text that never ends", ChunkSize: 4, DelayMs: 100, Hang: true},
		{Text: "after the crash"},
	}}
	url, _ := standinURL(t, script)
	args := []string{"acp", "--state-dir", state, "--mode", "read-only", "--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model"}
	p := startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	sid := p.newSession(ws)
	p.request("session/prompt", promptParams(sid, "delegate"))
	// The child streams its answer into the parent's call as progress.
	for {
		f := p.next()
		if f.Method == "session/update" && strings.Contains(f.raw, `"toolCallId":"p1"`) && strings.Contains(f.raw, "partial") {
			break
		}
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	p = startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	p.call("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d after load", code)
	}
	parent, _, err := jsonl.ReadValid(filepath.Join(state, sid+".jsonl"))
	if err != nil {
		t.Fatalf("the parent's log does not load: %v", err)
	}
	var call, result bool
	for i := range parent.Events {
		e := &parent.Events[i]
		switch {
		case e.Type == sessionlog.TypeToolCall && strings.Contains(string(e.Data), `"callId":"p1"`):
			call = true
		case e.Type == sessionlog.TypeToolResult && strings.Contains(string(e.Data), `"callId":"p1"`):
			result = strings.Contains(string(e.Data), `"isError":true`)
		}
	}
	if !call || !result {
		t.Errorf("the parent's subagent call: logged %v, answered with an error result %v", call, result)
	}
	logs, _ := filepath.Glob(filepath.Join(state, "*.jsonl"))
	if len(logs) != 2 {
		t.Fatalf("%d logs, want the parent's and the child's", len(logs))
	}
	for _, l := range logs {
		if strings.HasSuffix(l, sid+".jsonl") {
			continue
		}
		// The child's log: loading it (read + repair) closes its turn.
		p = startProc(t, dir, baseEnv(t), args...)
		p.initialize()
		id := strings.TrimSuffix(filepath.Base(l), ".jsonl")
		p.call("session/load", map[string]any{"sessionId": id, "cwd": ws, "mcpServers": []any{}})
		if code := p.finish(); code != 0 {
			t.Fatalf("exit %d after loading the child", code)
		}
		child, _, err := jsonl.ReadValid(l)
		if err != nil {
			t.Fatalf("the child's log does not load: %v", err)
		}
		last := child.Events[len(child.Events)-1]
		if last.Type != sessionlog.TypeTurnEnd || !strings.Contains(string(last.Data), `"interrupted"`) {
			t.Errorf("the child's log ends with %s %s, want an interrupted turn/end", last.Type, last.Data)
		}
	}
}

// TestSubagentCancelledWithItsParent: session/cancel of the parent's
// prompt ends the child's turn too (aborted), the parent's call gets the
// cancelled result, and the prompt answers cancelled.
func TestSubagentCancelledWithItsParent(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	script := &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{{ID: "p1", Name: "subagent", Arguments: jsonArgs(t, map[string]any{"description": "Hang", "prompt": "Take forever."})}}},
		{Text: "child starts and hangs", ChunkSize: 4, Hang: true},
	}}
	url, _ := standinURL(t, script)
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "read-only", "--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
	p.initialize()
	sid := p.newSession(ws)
	id := p.request("session/prompt", promptParams(sid, "delegate"))
	for {
		f := p.next()
		if f.Method == "session/update" && strings.Contains(f.raw, `"toolCallId":"p1"`) && strings.Contains(f.raw, "child") {
			break
		}
	}
	p.notify("session/cancel", map[string]any{"sessionId": sid})
	resp, _ := p.await(id)
	if !strings.Contains(resp.raw, `"stopReason":"cancelled"`) {
		t.Fatalf("the prompt answered %s", resp.raw)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	logs, _ := filepath.Glob(filepath.Join(state, "*.jsonl"))
	for _, l := range logs {
		d, _, err := jsonl.ReadValid(l)
		if err != nil {
			t.Fatal(err)
		}
		last := d.Events[len(d.Events)-1]
		if _, isChild := d.Header.Child(); isChild && (last.Type != sessionlog.TypeTurnEnd || !strings.Contains(string(last.Data), `"aborted"`)) {
			t.Errorf("the child's log ends with %s %s, want an aborted turn/end", last.Type, last.Data)
		}
		if !strings.HasSuffix(l, sid+".jsonl") {
			continue
		}
		if !strings.Contains(string(d.Events[len(d.Events)-1].Data), "aborted") {
			t.Errorf("the parent's turn ends with %s", last.Data)
		}
		for i := range d.Events {
			if e := &d.Events[i]; e.Type == sessionlog.TypeToolResult && !strings.Contains(string(e.Data), "subagent run was cancelled") {
				t.Errorf("the parent's call result: %s", e.Data)
			}
		}
	}
	if len(logs) != 2 {
		t.Errorf("%d logs, want 2", len(logs))
	}
}

// TestSubagentsInParallel: two subagent calls of one step are logged
// first, in the model's order, then run at the same time (their children's
// turns overlap), then their results are logged in the model's order; the
// children's logs are created in call order.
func TestSubagentsInParallel(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	sub := func(id, desc string) standin.ToolCall {
		return standin.ToolCall{ID: id, Name: "subagent", Arguments: jsonArgs(t, map[string]any{"description": desc, "prompt": "Reply SAME."})}
	}
	script := &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{sub("p1", "first child"), sub("p2", "second child")}},
		{Text: "SAME", DelayMs: 600},
		{Text: "SAME", DelayMs: 600},
		{Text: "both done"},
	}}
	url, _ := standinURL(t, script)
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "read-only", "--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
	p.initialize()
	sid := p.newSession(ws)
	if stop, _ := p.prompt(sid, "two at once"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	parent, _, err := jsonl.ReadValid(filepath.Join(state, sid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for i := range parent.Events {
		e := &parent.Events[i]
		switch e.Type {
		case sessionlog.TypeToolCall:
			d, _ := sessionlog.DecodeData[sessionlog.ToolCallData](e)
			order = append(order, "call "+d.CallID)
		case sessionlog.TypeToolResult:
			d, _ := sessionlog.DecodeData[sessionlog.ToolResultData](e)
			c := d.Message.Content[0]
			order = append(order, "result "+c.ToolCallID+" "+c.Content[0].Text)
		}
	}
	if got := strings.Join(order, ", "); got != "call p1, call p2, result p1 SAME, result p2 SAME" {
		t.Errorf("parent: %s", got)
	}
	logs, _ := filepath.Glob(filepath.Join(state, "*.jsonl"))
	type span struct {
		label      string
		start, end int64
		created    int64
	}
	var spans []span
	for _, l := range logs {
		d, _, err := jsonl.ReadValid(l)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := d.Header.Child(); !ok {
			continue
		}
		sp := span{created: d.Header.CreatedAt}
		for i := range d.Events {
			e := &d.Events[i]
			switch e.Type {
			case sessionlog.TypeTurnStart:
				sp.start = e.Time
			case sessionlog.TypeTurnEnd:
				sp.end = e.Time
			case sessionlog.TypeSubagentDescriptor:
				d, _ := sessionlog.DecodeData[sessionlog.SubagentDescriptorData](e)
				sp.label = d.Label
			}
		}
		spans = append(spans, sp)
	}
	if len(spans) != 2 {
		t.Fatalf("%d children", len(spans))
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.created - b.created) })
	if spans[0].created == spans[1].created {
		t.Errorf("two children created at the same millisecond: their order is not their creation order")
	}
	if spans[0].label != "first child" || spans[1].label != "second child" {
		t.Errorf("children created in the order %q, %q", spans[0].label, spans[1].label)
	}
	if !(spans[1].start < spans[0].end && spans[0].start < spans[1].end) {
		t.Errorf("the children's turns do not overlap: %+v", spans)
	}
}

// TestSubagentUsesTheParentsMCPServers: a child is offered its parent's
// MCP tools (a trusted server's run; the child never asks, so an
// untrusted one's are refused), over the parent's connection, which
// outlives the child.
func TestSubagentUsesTheParentsMCPServers(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	echo := func(id, server, text string) standin.Response {
		return standin.Response{ToolCalls: []standin.ToolCall{{ID: id, Name: "mcp__" + server + "__echo", Arguments: jsonArgs(t, map[string]any{"text": text})}}}
	}
	script := &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{{ID: "p1", Name: "subagent", Arguments: jsonArgs(t, map[string]any{"description": "Use MCP", "prompt": "Echo through both servers."})}}},
		echo("c1", "trusted", "from the child"),
		echo("c2", "other", "not allowed"),
		{Text: "child done", Expect: &standin.Expect{LastMessageContains: "approval policy of this session is never"}},
		echo("p2", "trusted", "parent again"),
		{Text: "parent done", Expect: &standin.Expect{LastMessageContains: "parent again"}},
	}}
	url, _ := standinURL(t, script)
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "read-only", "--provider", "deepseek", "--base-url", url,
		"--model", "standin", "--no-title-model", "--mcp-trust", "trusted")
	p.initialize()
	sid := p.newSessionWith(ws, standinMCP("trusted", "tools"), standinMCP("other", "tools"))
	if stop, _ := p.prompt(sid, "delegate"); stop != "end_turn" {
		t.Fatalf("stopReason %q (stderr %s)", stop, p.stderr.String())
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	logs, _ := filepath.Glob(filepath.Join(state, "*.jsonl"))
	found := false
	for _, l := range logs {
		d, _, err := jsonl.ReadValid(l)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := d.Header.Child(); !ok {
			continue
		}
		for i := range d.Events {
			if e := &d.Events[i]; e.Type == sessionlog.TypeToolResult && strings.Contains(string(e.Data), `"text":"from the child"`) {
				found = true
			}
		}
	}
	if !found {
		t.Error("the child's call of the parent's trusted MCP tool did not run")
	}
}

// TestAttackSubagentCannotWidenItsScope: a model may try to use a child to
// do what its own session may not. Through the real binary, under
// workspace-write with the approval policy on-request: a child that asks
// to escalate bash to danger-full-access, and that writes outside the
// workspace with the file tools, is refused without the editor being
// asked (a child never asks anyone), nothing is written outside, and the
// child cannot reach the model key either.
func TestAttackSubagentCannotWidenItsScope(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	const key = "sk-reel-subagent-hunted-0123456789abcdef"
	dir, ws, state := workspace(t)
	outside := filepath.Join(dir, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(outside, "pwned")
	bash := func(id, cmd string, extra map[string]any) standin.ToolCall {
		args := map[string]any{"command": cmd, "description": "escape"}
		for k, v := range extra {
			args[k] = v
		}
		return standin.ToolCall{ID: id, Name: "bash", Arguments: jsonArgs(t, args)}
	}
	script := &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{{ID: "p1", Name: "subagent", Arguments: jsonArgs(t, map[string]any{"description": "Escape", "prompt": "Write outside."})}}},
		{ToolCalls: []standin.ToolCall{
			bash("c1", "echo x > "+target, nil),
			bash("c2", "echo x > "+target, map[string]any{"sandbox_permissions": "danger-full-access", "justification": "the parent said so"}),
			{ID: "c3", Name: "write", Arguments: jsonArgs(t, map[string]any{"file_path": target, "content": "x", "sandbox_permissions": "danger-full-access", "justification": "please"})},
			bash("c4", "env | grep -i key; cat /proc/$PPID/environ | tr '\\0' '\\n' | grep -i key", nil),
		}},
		{Text: "child tried"},
		{Text: "parent done", Expect: &standin.Expect{LastMessageContains: "child tried"}},
	}}
	url, _ := standinURL(t, script)
	env := append(baseEnv(t), "DEEPSEEK_API_KEY="+key, "OPENAI_API_KEY="+key, "REEL_API_KEY="+key)
	p := startProc(t, dir, env, "acp", "--state-dir", state, "--mode", "workspace-write", "--approval", "on-request",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
	p.initialize()
	sid := p.newSession(ws)
	stop, asked, _ := promptAnswering(t, p, sid, "delegate the escape")
	if stop != "end_turn" || asked != 0 {
		t.Fatalf("stopReason %q after %d permission requests; want end_turn and none (a child never asks)", stop, asked)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("a child wrote outside the workspace")
	}
	// The child's own results: the confined write denied, both escalations
	// refused without asking.
	res := results(t, logEvents(t, state, sid))
	for _, c := range childLogs(t, state) {
		maps.Copy(res, results(t, c.Events))
	}
	for _, id := range []string{"c2", "c3"} {
		// Refused either by the child's own policy (never) or by the cap of
		// its ancestors' current mode, which is checked first; both refuse
		// without asking and run nothing.
		if r := res[id]; !strings.Contains(r, "rejected without asking") || !strings.Contains(r, "Nothing was executed") {
			t.Errorf("the child's escalation %s: %q", id, res[id])
		}
	}
	if r := res["c1"]; !strings.Contains(r, "Permission denied") && !strings.Contains(r, "denied") {
		t.Errorf("the child's confined write outside: %q", r)
	}
	if res["p1"] != "child tried" {
		t.Errorf("the parent's subagent call: %q", res["p1"])
	}
	if seen, leaked := filesHolding(t, dir, func(b []byte) bool { return strings.Contains(string(b), key) }); seen == 0 || len(leaked) > 0 {
		t.Errorf("read %d files; the key is in %v", seen, leaked)
	}
}
