package acpcmd_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// call is a scripted response making one tool call.
func call(t *testing.T, id, tool string, args map[string]any) standin.Response {
	return standin.Response{ToolCalls: []standin.ToolCall{{ID: id, Name: tool, Arguments: jsonArgs(t, args)}}}
}

// userTexts are the texts of a log's user messages with their source
// kinds, as "kind: text" (parts joined by " | ").
func userTexts(t *testing.T, events []sessionlog.Event) []string {
	t.Helper()
	var out []string
	for i := range events {
		e := &events[i]
		if e.Type != sessionlog.TypeUserMessage {
			continue
		}
		var m struct {
			Content []struct{ Text string }
			Source  map[string]any
		}
		if err := json.Unmarshal(e.Data, &m); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, c := range m.Content {
			parts = append(parts, c.Text)
		}
		out = append(out, m.Source["kind"].(string)+": "+strings.Join(parts, " | "))
	}
	return out
}

// turnEnds are the kinds of a log's turn ends, in order.
func turnEnds(t *testing.T, events []sessionlog.Event) []string {
	t.Helper()
	var out []string
	for i := range events {
		if e := &events[i]; e.Type == sessionlog.TypeTurnEnd {
			d, err := sessionlog.DecodeData[sessionlog.TurnEndData](e)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d.Reason.Kind)
		}
	}
	return out
}

// TestBackgroundSubagentContinued: through the real binary, a background
// subagent answers "started subagent <id>" at once and works on its own;
// when it runs out of work it settles and its parent, idle by then, runs
// a turn of its own on the notice — streamed to the editor with no
// prompt pending. list_agents shows the released child as ready;
// send_message continues it (a new activation, a new notice), also after
// reel restarted and the parent was loaded; ids that are not the caller's
// children (its own, a path) are refused. Both logs keep every turn, and
// `reel log verify` accepts the pair.
func TestBackgroundSubagentContinued(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	notice := &standin.Expect{LastUserContains: "finished and will do no further work unless you send it more."}
	script := &standin.Script{Responses: []standin.Response{
		// Prompt 1: the parent starts the child and answers.
		call(t, "p1", "subagent", map[string]any{"description": "Count", "prompt": "Say ONE.", "run_in_background": true}),
		{Text: "STARTED", Expect: &standin.Expect{LastMessageContains: "started subagent "}},
		// The child's first turn, after the parent's (--debug-child-after-turn).
		{Text: "ONE", Expect: &standin.Expect{LastUserContains: "Say ONE."}},
		// The parent's turn on the settlement notice, with no prompt.
		{Text: "NOTED ONE", Expect: notice},
		// Prompt 2: list, continue.
		call(t, "p2", "list_agents", map[string]any{}),
		call(t, "p3", "send_message", map[string]any{"subagent_id": standin.SubagentPlaceholder, "message": "Say TWO."}),
		{Text: "QUEUED", Expect: &standin.Expect{LastMessageContains: "message queued as the next turn for subagent "}},
		{Text: "TWO", Expect: &standin.Expect{LastUserContains: "Say TWO."}},
		{Text: "NOTED TWO", Expect: notice},
		// Prompt 3, in a new process: ids that are not children, then the child again.
		call(t, "p4", "send_message", map[string]any{"subagent_id": "PARENT", "message": "x"}),
		call(t, "p5", "send_message", map[string]any{"subagent_id": "../../etc/passwd", "message": "x"}),
		call(t, "p6", "send_message", map[string]any{"subagent_id": standin.SubagentPlaceholder, "message": "Say THREE."}),
		{Text: "QUEUED AGAIN"},
		{Text: "THREE", Expect: &standin.Expect{LastUserContains: "Say THREE."}},
		{Text: "NOTED THREE", Expect: notice},
	}}
	url, srv := standinURL(t, script)
	args := []string{"acp", "--state-dir", state, "--mode", "read-only", "--session-id", "PARENT", "--debug-child-after-turn",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model"}
	p := startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	sid := p.newSession(ws)
	if stop, _ := p.prompt(sid, "start a child"); stop != "end_turn" {
		t.Fatalf("prompt 1: %s (stderr %s)", stop, p.stderr.String())
	}
	// The notice's turn streams with no request pending.
	p.waitUpdate("agent_message_chunk", "NOTED ONE")
	if stop, frames := p.prompt(sid, "continue it"); stop != "end_turn" {
		t.Fatalf("prompt 2: %s", stop)
	} else if res := toolResults(frames); !strings.HasSuffix(res["p2"], " [ready] — Count") {
		t.Errorf("list_agents after the settlement: %q", res["p2"])
	}
	p.waitUpdate("agent_message_chunk", "NOTED TWO")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.stderr.String())
	}

	args[6] = "--session-id=unused" // the parent is loaded, not created
	p = startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	p.call("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
	stop, frames := p.prompt(sid, "again")
	if stop != "end_turn" {
		t.Fatalf("prompt 3: %s", stop)
	}
	res := toolResults(frames)
	for _, id := range []string{"p4", "p5"} {
		if !strings.Contains(res[id], "is unavailable") {
			t.Errorf("send_message %s to a session that is not a child: %q", id, res[id])
		}
	}
	p.waitUpdate("agent_message_chunk", "NOTED THREE")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.stderr.String())
	}
	if n := len(srv.Requests()); n != len(script.Responses) {
		t.Errorf("%d model requests, want %d (a scripted request failed: see the stand-in's expectations)", n, len(script.Responses))
	}

	parent := logEvents(t, state, sid)
	childID := strings.TrimPrefix(res["p6"], "completed: message queued as the next turn for subagent ")
	child, _, err := jsonl.ReadValid(filepath.Join(state, childID+".jsonl"))
	if err != nil {
		t.Fatalf("the child's log: %v (p6 answered %q)", err, res["p6"])
	}
	wantChild := []string{"user: Say ONE.", "coordinator: Say TWO.", "coordinator: Say THREE."}
	if got := userTexts(t, child.Events); strings.Join(got, "\n") != strings.Join(wantChild, "\n") {
		t.Errorf("the child's messages:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantChild, "\n"))
	}
	if got := turnEnds(t, child.Events); strings.Join(got, ",") != "completed,completed,completed" {
		t.Errorf("the child's turns: %v", got)
	}
	var notices []string
	for _, m := range userTexts(t, parent) {
		if strings.HasPrefix(m, "subagent-settled: ") {
			notices = append(notices, m)
		}
	}
	for i, word := range []string{"ONE", "TWO", "THREE"} {
		want := "subagent-settled: Background subagent " + childID + " finished and will do no further work unless you send it more. | Its closing message: | " + word
		if i >= len(notices) || notices[i] != want {
			t.Errorf("notice %d: got %v, want %q", i+1, notices, want)
		}
	}
	if got := turnEnds(t, parent); len(got) != 6 {
		t.Errorf("the parent's turns %v, want 3 prompts and 3 notices", got)
	}
	out, err := exec.Command(reelExe, "log", "verify", state).CombinedOutput()
	if err != nil {
		t.Errorf("reel log verify: %v\n%s", err, out)
	}
}
