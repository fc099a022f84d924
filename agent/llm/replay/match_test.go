package replay_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/sessionlog"
)

func msgs(raw ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(raw))
	for i, r := range raw {
		out[i] = json.RawMessage(r)
	}
	return out
}

const (
	userMsg   = `{"role":"user","id":"{{id:1}}","source":{"kind":"user"},"content":[{"type":"text","text":"list {{cwd}}"}]}`
	callMsg   = `{"role":"assistant","source":{"kind":"model"},"content":[{"type":"tool-call","id":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"}]}`
	resultMsg = `{"role":"user","source":{"kind":"tool"},"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"a.txt"}]}]}`
	noteMsg   = `{"role":"user","source":{"kind":"plugin"},"content":[{"type":"text","text":"reminder"}]}`
)

// TestMatcherNamesTheField checks that every kind of difference fails the
// call with a line naming the field, and that the normalization lets the
// run's cwd and fresh ids through.
func TestMatcherNamesTheField(t *testing.T) {
	want := &replay.Want{Turn: 1, Step: 2, Reason: "initial",
		Header:   sessionlog.RequestHeader{System: "cwd is {{cwd}}", Tools: json.RawMessage(`[{"name":"bash"}]`)},
		Messages: msgs(userMsg, callMsg, resultMsg)}
	sent := func(f func(*llm.Request)) llm.Request {
		r := llm.Request{HeaderReason: "initial", System: "cwd is /run/x", Tools: json.RawMessage(`[{"name":"bash"}]`),
			Messages: msgs(strings.ReplaceAll(strings.ReplaceAll(userMsg, "{{cwd}}", "/run/x"), "{{id:1}}", "0b0e"), callMsg, resultMsg)}
		if f != nil {
			f(&r)
		}
		return r
	}
	swap := func(i int, old, new string) func(*llm.Request) {
		return func(r *llm.Request) {
			r.Messages[i] = json.RawMessage(strings.Replace(string(r.Messages[i]), old, new, 1))
		}
	}
	cases := []struct {
		name, mode, field string // field "" means: matches
		req               llm.Request
	}{
		{"same after normalization", replay.MatchFull, "", sent(nil)},
		{"header reason", replay.MatchFull, "header reason", sent(func(r *llm.Request) { r.HeaderReason = "series" })},
		{"system prompt", replay.MatchFull, "system prompt", sent(func(r *llm.Request) { r.System = "old mode" })},
		{"tool schema set", replay.MatchFull, "tool schema set", sent(func(r *llm.Request) { r.Tools = json.RawMessage(`[]`) })},
		{"tool result dropped", replay.MatchFull, "message 2 message count", sent(func(r *llm.Request) { r.Messages = r.Messages[:2] })},
		{"role", replay.MatchFull, "message 1 role", sent(swap(1, `"assistant"`, `"user"`))},
		{"text", replay.MatchFull, "message 0 part 0 (text) text", sent(swap(0, "list", "lost"))},
		{"tool-call id", replay.MatchFull, "tool-call id", sent(swap(1, `"c1"`, `"c2"`))},
		{"tool-call arguments", replay.MatchFull, "tool-call arguments", sent(swap(1, `ls`, `rm`))},
		{"tool-result isError", replay.MatchFull, "tool-result isError", sent(swap(2, `"toolCallId"`, `"isError":true,"toolCallId"`))},
		{"tool-result content", replay.MatchFull, "content part 0 (text) text", sent(swap(2, "a.txt", "b.txt"))},
		{"messages mode: content is loose", replay.MatchMessages, "", sent(swap(2, "a.txt", "b.txt"))},
		{"messages mode: system is reel's", replay.MatchMessages, "", sent(func(r *llm.Request) { r.System = "other" })},
		{"messages mode: injections skipped", replay.MatchMessages, "", sent(func(r *llm.Request) { r.Messages = append(r.Messages, json.RawMessage(noteMsg)) })},
		{"messages mode: result dropped", replay.MatchMessages, "message count", sent(func(r *llm.Request) { r.Messages = r.Messages[:2] })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &replay.Matcher{Mode: c.mode, Cwd: "/run/x"}
			_, err := m.Check("turn 1 step 2", want, c.req)
			if c.field == "" {
				if err != nil {
					t.Fatalf("want a match, got %v", err)
				}
				return
			}
			if !errors.Is(err, replay.ErrRequestMismatch) || !strings.Contains(err.Error(), "turn 1 step 2 ") || !strings.Contains(err.Error(), c.field+":") {
				t.Fatalf("want a mismatch naming %q, got %v", c.field, err)
			}
		})
	}
}

// TestMatchDocNamesEveryField keeps docs/scenarios.md's "Replay matches
// requests" section naming every field, mode and source kind the matcher
// uses.
func TestMatchDocNamesEveryField(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "scenarios.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Replay matches requests")
	if start < 0 {
		t.Fatal(`docs/scenarios.md has no "## Replay matches requests" section`)
	}
	sec := doc[start:]
	if end := strings.Index(sec[3:], "\n## "); end >= 0 {
		sec = sec[:end+3]
	}
	for _, f := range replay.MatchFields {
		if !strings.Contains(sec, "| "+f+" |") {
			t.Errorf("the section's field table has no row %q", f)
		}
	}
	for _, m := range replay.MatchModes {
		if !strings.Contains(sec, "`"+m+"`") {
			t.Errorf("the section does not name mode `%s`", m)
		}
	}
	for _, n := range replay.InstructionPins {
		if !strings.Contains(sec, n+"_1.snap.md") {
			t.Errorf("the section does not name the pinned instruction %s_1.snap.md", n)
		}
		if _, err := os.Stat(filepath.Join("..", "..", "..", "snapshots", "instructions", n+"_1.snap.md")); err != nil {
			t.Errorf("pinned instruction: %v", err)
		}
	}
	for _, k := range replay.ConversationSources {
		if !strings.Contains(sec, "`"+k+"`") {
			t.Errorf("the section does not name source kind `%s`", k)
		}
	}
}
