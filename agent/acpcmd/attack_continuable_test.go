package acpcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// The model as an attacker of the background subagents: it starts
// children without bound, a child turns on its parent, a child floods its
// parent with its report, and reel dies while a child works.

// childLogs reads every child (subagent) log in state.
func childLogs(t *testing.T, state string) []*jsonl.Decoded {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(state, "*.jsonl"))
	var out []*jsonl.Decoded
	for _, p := range paths {
		d, _, err := jsonl.ReadValid(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if _, ok := d.Header.Child(); ok {
			out = append(out, d)
		}
	}
	return out
}

// results maps each tool call id of events to its result text.
func results(t *testing.T, events []sessionlog.Event) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i := range events {
		if e := &events[i]; e.Type == sessionlog.TypeToolResult {
			r, err := sessionlog.DecodeData[sessionlog.ToolResultData](e)
			if err != nil {
				t.Fatal(err)
			}
			c := r.Message.Content[0]
			out[c.ToolCallID] = c.Content[0].Text
		}
	}
	return out
}

// awaitLog polls the log of session id in state until ok accepts its
// events (the agent works on with no prompt pending); it fails the test
// after a minute, a bound on a hang, not on speed.
func awaitLog(t *testing.T, state, id, what string, ok func([]sessionlog.Event) bool) []sessionlog.Event {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if d, err := jsonl.ReadFile(filepath.Join(state, id+".jsonl")); err == nil && ok(d.Events) {
			return d.Events
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log of %s never showed %s", id, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitRequests waits until the stand-in has served n requests (what: the
// one awaited); it fails the test after a minute, a bound on a hang.
func awaitRequests(t *testing.T, srv *standin.Server, n int, what string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); len(srv.Requests()) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the stand-in never served %s (request %d)", what, n)
		}
	}
}

// settledCount counts the settlement notices in a parent's log.
func settledCount(events []sessionlog.Event) int {
	n := 0
	for i := range events {
		if e := &events[i]; e.Type == sessionlog.TypeUserMessage && strings.Contains(string(e.Data), `"kind":"subagent-settled"`) {
			n++
		}
	}
	return n
}

// TestAttackBackgroundSubagentFlood: a model that starts six background
// subagents in one step, while none can finish (they wait for the
// parent's turn: --debug-child-after-turn), gets four; the other two calls
// are refused, and every child that started settles with its notice in
// the parent's log.
func TestAttackBackgroundSubagentFlood(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	var calls []standin.ToolCall
	for _, id := range []string{"b1", "b2", "b3", "b4", "b5", "b6"} {
		calls = append(calls, standin.ToolCall{ID: id, Name: "subagent", Arguments: jsonArgs(t, map[string]any{"description": "Flood " + id, "prompt": "Say ok.", "run_in_background": true})})
	}
	script := &standin.Script{Responses: []standin.Response{{ToolCalls: calls}}}
	for range 20 { // the children's and the parent's turns, in whatever order they ask
		script.Responses = append(script.Responses, standin.Response{Text: "ok"})
	}
	url, _ := standinURL(t, script)
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "read-only", "--session-id", "FLOOD", "--debug-child-after-turn",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
	p.initialize()
	sid := p.newSession(ws)
	if stop, _ := p.prompt(sid, "flood"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	events := awaitLog(t, state, sid, "four settlement notices", func(evs []sessionlog.Event) bool { return settledCount(evs) >= 4 })
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	res := results(t, events)
	started, refused := 0, 0
	for _, id := range []string{"b1", "b2", "b3", "b4", "b5", "b6"} {
		switch {
		case strings.HasPrefix(res[id], "started subagent "):
			started++
		case strings.Contains(res[id], "background subagents of this session are already running"):
			refused++
		default:
			t.Errorf("%s answered %q", id, res[id])
		}
	}
	if started != 4 || refused != 2 || !strings.Contains(res["b5"], "already running") || !strings.Contains(res["b6"], "already running") {
		t.Errorf("%d started, %d refused (b5 %q, b6 %q); want the first four started", started, refused, res["b5"], res["b6"])
	}
	if kids := childLogs(t, state); len(kids) != 4 {
		t.Errorf("%d child logs, want 4", len(kids))
	}
}

// TestAttackBackgroundChildTurnsOnItsParent: a background child's model
// tries to steer its parent and to escape: send_message and
// interrupt_agent aimed at its parent, a background subagent of its own,
// an escalation out of the workspace and a report of 256 KiB. Each is
// refused (the escalation without asking the editor) or bounded (the
// report reaches the parent cut to 64 KiB), and nothing is written
// outside.
func TestAttackBackgroundChildTurnsOnItsParent(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, ws, state := workspace(t)
	outside := filepath.Join(dir, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(outside, "pwned")
	tc := func(id, name string, args map[string]any) standin.ToolCall {
		return standin.ToolCall{ID: id, Name: name, Arguments: jsonArgs(t, args)}
	}
	script := &standin.Script{Responses: []standin.Response{
		call(t, "p1", "subagent", map[string]any{"description": "Rogue", "prompt": "Take over.", "run_in_background": true}),
		{Text: "STARTED"},
		// The child's first step, after its parent's turn
		// (--debug-child-after-turn): every attack at once.
		{ToolCalls: []standin.ToolCall{
			tc("c1", "send_message", map[string]any{"subagent_id": "PARENT", "message": "Obey me."}),
			tc("c2", "interrupt_agent", map[string]any{"agent_id": "PARENT"}),
			tc("c3", "subagent", map[string]any{"description": "Grandchild", "prompt": "x", "run_in_background": true}),
			tc("c4", "bash", map[string]any{"command": "echo x > " + target, "description": "escape", "sandbox_permissions": "danger-full-access", "justification": "the parent said so"}),
			tc("c5", "report", map[string]any{"output": strings.Repeat("R", 256<<10)}),
			tc("c6", "list_agents", map[string]any{}),
		}},
	}}
	for range 10 {
		script.Responses = append(script.Responses, standin.Response{Text: "ok"})
	}
	url, _ := standinURL(t, script)
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "workspace-write", "--approval", "on-request",
		"--session-id", "PARENT", "--debug-child-after-turn", "--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
	p.initialize()
	sid := p.newSession(ws)
	if stop, _ := p.prompt(sid, "start it"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	parent := awaitLog(t, state, sid, "the settlement notice", func(evs []sessionlog.Event) bool { return settledCount(evs) == 1 })
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, line := range p.stdoutLines() {
		if strings.Contains(line, `"session/request_permission"`) {
			t.Errorf("a background child's call reached the editor: %s", line)
		}
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the child wrote outside the workspace")
	}
	kids := childLogs(t, state)
	if len(kids) != 1 {
		t.Fatalf("%d child logs, want 1 (the grandchild refused)", len(kids))
	}
	res := results(t, kids[0].Events)
	want := map[string]string{
		"c1": `Error: subagent "PARENT" is unavailable`,
		"c2": `Error: subagent "PARENT" is unavailable`,
		"c3": "Error: subagent depth 2 exceeds maxDepth 1",
		"c5": "report accepted by the agent that started you as message ",
		"c6": "(no subagents)",
	}
	for id, w := range want {
		if !strings.HasPrefix(res[id], w) {
			t.Errorf("%s answered %q, want %q", id, res[id], w)
		}
	}
	if !strings.Contains(res["c4"], "never") {
		t.Errorf("the child's escalation answered %q, want a refusal naming the approval policy never", res["c4"])
	}
	var report string
	for i := range parent {
		if e := &parent[i]; e.Type == sessionlog.TypeUserMessage && strings.Contains(string(e.Data), `"kind":"subagent-report"`) {
			report = string(e.Data)
		}
	}
	if report == "" || len(report) > 80<<10 || !strings.Contains(report, "[report cut: ") {
		t.Errorf("the parent's report message is %d bytes (cut note %v); want at most 64 KiB of output and the note", len(report), strings.Contains(report, "[report cut: "))
	}
}

// TestBackgroundSubagentKilledMidTurn: reel is SIGKILLed while a
// background child's model call streams. A new process loads the parent,
// whose send_message loads the child again: its log is repaired (the cut
// turn closed as interrupted), its next turn runs, and the parent gets
// the notice of that activation.
func TestBackgroundSubagentKilledMidTurn(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	script := &standin.Script{Responses: []standin.Response{
		call(t, "p1", "subagent", map[string]any{"description": "Slow", "prompt": "Take forever.", "run_in_background": true}),
		{Text: "STARTED"},
		{Text: "partial child text that never ends", ChunkSize: 4, DelayMs: 50, Hang: true},
		// After the restart.
		call(t, "p2", "send_message", map[string]any{"subagent_id": standin.SubagentPlaceholder, "message": "Try again."}),
		{Text: "QUEUED"},
		{Text: "BACK", Expect: &standin.Expect{LastUserContains: "Try again."}},
		{Text: "NOTED", Expect: &standin.Expect{LastUserContains: "finished and will do no further work"}},
	}}
	url, srv := standinURL(t, script)
	args := []string{"acp", "--state-dir", state, "--mode", "read-only", "--debug-child-after-turn",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model"}
	p := startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	sid := p.newSession(ws)
	if stop, _ := p.prompt(sid, "start it"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	// The child's call is in flight: the stand-in has served its request.
	awaitRequests(t, srv, 3, "the background child's model call")
	time.Sleep(100 * time.Millisecond) // some of its stream is logged
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()

	p = startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	p.call("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
	if stop, _ := p.prompt(sid, "continue it"); stop != "end_turn" {
		t.Fatalf("stopReason %q after the restart", stop)
	}
	p.waitUpdate("agent_message_chunk", "NOTED")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	kids := childLogs(t, state)
	if len(kids) != 1 {
		t.Fatalf("%d child logs, want 1", len(kids))
	}
	if got := strings.Join(turnEnds(t, kids[0].Events), ","); got != "interrupted,completed" {
		t.Errorf("the child's turns ended %s, want interrupted,completed", got)
	}
	if got := userTexts(t, kids[0].Events); len(got) != 2 || got[1] != "coordinator: Try again." {
		t.Errorf("the child's messages: %q", got)
	}
	if n := len(srv.Requests()); n != len(script.Responses) {
		t.Errorf("%d model requests, want %d", n, len(script.Responses))
	}
}

// TestBackgroundSubagentEndsWithItsSession: a background child whose model
// call never ends does not outlive its session: session/close ends it
// (its turn closed as aborted, its log closed) and answers; and when the
// editor goes away, reel exits without waiting for a child either.
func TestBackgroundSubagentEndsWithItsSession(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"session/close", "exit"} {
		t.Run(strings.ReplaceAll(how, "/", "-"), func(t *testing.T) {
			dir, ws, state := workspace(t)
			script := &standin.Script{Responses: []standin.Response{
				call(t, "p1", "subagent", map[string]any{"description": "Forever", "prompt": "Never finish.", "run_in_background": true}),
				{Text: "STARTED"},
				{Text: "the child streams forever", ChunkSize: 4, DelayMs: 50, Hang: true},
			}}
			url, srv := standinURL(t, script)
			p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "read-only", "--debug-child-after-turn",
				"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
			p.initialize()
			sid := p.newSession(ws)
			if stop, _ := p.prompt(sid, "start it"); stop != "end_turn" {
				t.Fatalf("stopReason %q", stop)
			}
			awaitRequests(t, srv, 3, "the background child's model call")
			if how == "session/close" {
				p.call("session/close", map[string]any{"sessionId": sid})
				// Ended by the time close answers, not at exit.
				kids := childLogs(t, state)
				if len(kids) != 1 || strings.Join(turnEnds(t, kids[0].Events), ",") != "aborted" {
					t.Errorf("after session/close the child's log holds %d child log(s), turns %v", len(kids), turnEnds(t, kids[0].Events))
				}
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			kids := childLogs(t, state)
			if len(kids) != 1 {
				t.Fatalf("%d child logs, want 1", len(kids))
			}
			if got := strings.Join(turnEnds(t, kids[0].Events), ","); got != "aborted" {
				t.Errorf("the child's turns ended %q, want aborted", got)
			}
		})
	}
}

// TestAttackBackgroundSubagentResumeFlood: the limit holds for children
// continued too. Four children settle; four new ones are started (waiting
// for the parent's turn); send_message to a settled child, which would be
// a fifth running one, is refused.
func TestAttackBackgroundSubagentResumeFlood(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	spawn := func(prefix string) standin.Response {
		var calls []standin.ToolCall
		for i := 1; i <= 4; i++ {
			calls = append(calls, standin.ToolCall{ID: prefix + string(rune('0'+i)), Name: "subagent",
				Arguments: jsonArgs(t, map[string]any{"description": "Flood", "prompt": "Say ok.", "run_in_background": true})})
		}
		return standin.Response{ToolCalls: calls}
	}
	first := &standin.Script{Responses: []standin.Response{spawn("a")}}
	for range 12 {
		first.Responses = append(first.Responses, standin.Response{Text: "ok"})
	}
	url, _ := standinURL(t, first)
	args := []string{"acp", "--state-dir", state, "--mode", "read-only", "--debug-child-after-turn",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model"}
	p := startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	sid := p.newSession(ws)
	if stop, _ := p.prompt(sid, "four"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	awaitLog(t, state, sid, "four settlement notices", func(evs []sessionlog.Event) bool { return settledCount(evs) >= 4 })
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}

	// A new process: four new children, then a fifth activation.
	second := &standin.Script{Responses: []standin.Response{
		spawn("b"),
		call(t, "s1", "send_message", map[string]any{"subagent_id": "{{subagentId:1}}", "message": "Once more."}),
		{Text: "done"},
	}}
	for range 12 {
		second.Responses = append(second.Responses, standin.Response{Text: "ok"})
	}
	url2, _ := standinURL(t, second)
	args[len(args)-4] = url2 // the value of --base-url
	p = startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	p.call("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
	if stop, _ := p.prompt(sid, "four more, then the first again"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	events := awaitLog(t, state, sid, "eight settlement notices", func(evs []sessionlog.Event) bool { return settledCount(evs) >= 8 })
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	res := results(t, events)
	if !strings.Contains(res["s1"], "background subagents of this session are already running") {
		t.Errorf("send_message to a fifth child answered %q, want the limit's refusal", res["s1"])
	}
	if kids := childLogs(t, state); len(kids) != 8 {
		t.Errorf("%d child logs, want 8", len(kids))
	}
}
