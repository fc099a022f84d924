package acpcmd_test

import (
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// TestBashOutputStreams: through the real binary, a command that runs for
// seconds shows its output in the editor while it runs (tool_call_update
// in_progress with the output so far), before its result; a command that
// floods its output is shown only a bounded tail, about once a second,
// never the flood.
func TestBashOutputStreams(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, ws, state := workspace(t)
	script := &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{{ID: "slow", Name: "bash", Arguments: jsonArgs(t, map[string]any{
			"command": "for i in 1 2 3; do echo line$i; sleep 0.7; done", "description": "Count slowly"})}}},
		{ToolCalls: []standin.ToolCall{{ID: "flood", Name: "bash", Arguments: jsonArgs(t, map[string]any{
			"command": "head -c 3000000 /dev/zero | tr '\\0' x; sleep 2.5; echo end", "description": "Flood"})}}},
		{Text: "done"},
	}}
	url, _ := standinURL(t, script)
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "workspace-write",
		"--provider", "deepseek", "--base-url", url, "--model", "standin")
	p.initialize()
	sid := p.newSession(ws)
	stop, _, frames := promptAnswering(t, p, sid, "count")
	if stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	progress := map[string][]string{}
	ended := map[string]bool{}
	for _, u := range toolUpdates(frames) {
		switch {
		case u.status == "in_progress" && u.text != "":
			if ended[u.id] {
				t.Errorf("%s: output streamed after its result", u.id)
			}
			progress[u.id] = append(progress[u.id], u.text)
		case u.status == "completed" || u.status == "failed":
			ended[u.id] = true
		}
	}
	if len(progress["slow"]) == 0 || !strings.HasPrefix(progress["slow"][0], "line1\n") {
		t.Errorf("the slow command's output did not stream before its result: %q", progress["slow"])
	}
	if len(progress["flood"]) == 0 {
		t.Fatal("the flooding command's output did not stream")
	}
	for _, text := range progress["flood"] {
		if len(text) > 9000 || !strings.Contains(text, "earlier bytes]") {
			t.Errorf("a flood progress frame is %d bytes: %.80q…", len(text), text)
		}
	}
	if n := len(progress["flood"]); n > 4 {
		t.Errorf("%d progress frames for a 2.5 s command; want about one a second", n)
	}
}
