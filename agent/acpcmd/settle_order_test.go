package acpcmd_test

import (
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// TestSettlementAfterPromptAnswer: through the real binary, a background
// subagent started in a prompt's turn (--debug-child-after-turn) works
// only once its parent's prompt is done, so the turn its settlement
// notice starts streams after the prompt's answer, never before it (the
// reference's order, which the corpus's subagent recordings pin). With
// --debug-linger-after-turn the parent's turn loop waits after its turn
// until the child settled or waits for it: a child that ran as soon as
// the parent's turn ended would settle into the prompt's loop, and its
// notice's turn would stream before the answer (seen in corpus runs on
// tmpfs, where nothing slows the child down).
func TestSettlementAfterPromptAnswer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"parent lingers after its turn", []string{"--debug-linger-after-turn"}},
		{"natural timing", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ws, state := workspace(t)
			notice := &standin.Expect{LastUserContains: "finished and will do no further work unless you send it more."}
			script := &standin.Script{Responses: []standin.Response{
				call(t, "p1", "subagent", map[string]any{"description": "Count", "prompt": "Say ONE.", "run_in_background": true}),
				{Text: "STARTED", Expect: &standin.Expect{LastMessageContains: "started subagent "}},
				{Text: "ONE", Expect: &standin.Expect{LastUserContains: "Say ONE."}},
				{Text: "NOTED ONE", Expect: notice},
			}}
			url, srv := standinURL(t, script)
			args := append([]string{"acp", "--state-dir", state, "--mode", "read-only", "--debug-child-after-turn",
				"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model"}, tc.extra...)
			p := startProc(t, dir, baseEnv(t), args...)
			p.initialize()
			sid := p.newSession(ws)
			stop, frames := p.prompt(sid, "start a child")
			if stop != "end_turn" {
				t.Fatalf("prompt: %s (stderr %s)", stop, p.stderr.String())
			}
			var text []string
			for _, f := range frames {
				if _, k, tx := f.update(); k == "agent_message_chunk" {
					text = append(text, tx)
				}
			}
			if got := strings.Join(text, ""); got != "STARTED" {
				t.Fatalf("agent text before the prompt's answer: %q, want %q (the settlement's turn streamed before the answer)", got, "STARTED")
			}
			p.waitUpdate("agent_message_chunk", "NOTED ONE")
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d: %s", code, p.stderr.String())
			}
			if n := len(srv.Requests()); n != len(script.Responses) {
				t.Errorf("%d model requests, want %d", n, len(script.Responses))
			}
		})
	}
}
