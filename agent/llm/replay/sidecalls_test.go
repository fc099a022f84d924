package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// pins is reel's pinned goldens folder.
var pins = filepath.Join("..", "..", "..", "snapshots")

func readLog(t *testing.T, path string) *jsonl.Decoded {
	t.Helper()
	d, _, err := jsonl.ReadValid(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCompactionRequestMatched rebuilds the compaction fixture's summary
// request from its log and checks that the request reel sends is accepted
// and that a wrong range, a wrong instruction or a wrong cap fails the
// call naming the field.
func TestCompactionRequestMatched(t *testing.T) {
	d := readLog(t, filepath.Join("..", "..", "..", "fixtures", "compaction", "session.jsonl"))
	script, wants, err := replay.LoadWithWants(d.Header, d.Events, "")
	if err != nil {
		t.Fatal(err)
	}
	at := -1
	for i, e := range script {
		if strings.HasPrefix(e.Where, "compaction summary at seq ") {
			at = i
		}
	}
	if at < 0 || script[at].Want == nil {
		t.Fatalf("the compaction summary entry carries no recorded request: %+v", script)
	}
	w := script[at].Want
	if len(w.Messages) != 4 || w.MaxTokens != 4096 || w.Purpose != llm.PurposeCompaction {
		t.Fatalf("rebuilt request: %d messages, cap %d, purpose %q; want 4, 4096, %q", len(w.Messages), w.MaxTokens, w.Purpose, llm.PurposeCompaction)
	}
	if wants["compaction at turn 3 step 0"] != w {
		t.Fatal("the compaction request is not found by its turn and step")
	}
	sys, err := os.ReadFile(filepath.Join(pins, "instructions", "compaction-system_1.snap.md"))
	if err != nil {
		t.Fatal(err)
	}
	ask, err := os.ReadFile(filepath.Join(pins, "instructions", "compaction-request_1.snap.md"))
	if err != nil {
		t.Fatal(err)
	}
	instr := sessionlog.UserMessage{Content: []sessionlog.ContentPart{sessionlog.TextPart(string(ask))}}
	sent := func(f func(*llm.Request)) llm.Request {
		r := llm.Request{Purpose: llm.PurposeCompaction, Turn: 3, Step: 0, System: string(sys), MaxTokens: 4096,
			Messages: append(append([]json.RawMessage(nil), w.Messages...), instr.AppendJSON(nil))}
		if f != nil {
			f(&r)
		}
		return r
	}
	cases := []struct {
		name, field string // "" means: matches
		req         llm.Request
	}{
		{"as recorded", "", sent(nil)},
		{"range off by one", "message 3 message count", sent(func(r *llm.Request) {
			r.Messages = append(r.Messages[:3:3], r.Messages[4])
		})},
		{"range from the second message", "message count", sent(func(r *llm.Request) { r.Messages = r.Messages[1:] })},
		{"instruction", "message 4 instruction", sent(func(r *llm.Request) {
			r.Messages[4] = sessionlog.UserMessage{Content: []sessionlog.ContentPart{sessionlog.TextPart("Summarize.")}}.AppendJSON(nil)
		})},
		{"system prompt", "system prompt", sent(func(r *llm.Request) { r.System = "Summarize." })},
		{"max tokens", "max tokens", sent(func(r *llm.Request) { r.MaxTokens = 100 })},
		{"a step's request", "purpose", sent(func(r *llm.Request) { r.Purpose = "" })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &replay.Matcher{Mode: replay.MatchFull, Pins: pins}
			unchecked, err := m.Check(script[at].Where, w, c.req)
			if len(unchecked) > 0 {
				t.Fatalf("not compared: %v", unchecked)
			}
			if c.field == "" {
				if err != nil {
					t.Fatalf("want a match, got %v", err)
				}
				return
			}
			if !errors.Is(err, replay.ErrRequestMismatch) || !strings.Contains(err.Error(), c.field+":") {
				t.Fatalf("want a mismatch naming %q, got %v", c.field, err)
			}
		})
	}
}

// TestTitleRequestMatched serves a title call through a provider whose
// title script comes from an override (no recorded request of its own):
// the call is still matched with the recorded title request.
func TestTitleRequestMatched(t *testing.T) {
	d := readLog(t, filepath.Join("..", "..", "..", "fixtures", "title-after-first-turn", "session.jsonl"))
	wants, err := replay.TitleWants(d.Events)
	if err != nil || len(wants) != 1 {
		t.Fatalf("title requests: %d, %v", len(wants), err)
	}
	w := wants[0]
	override := filepath.Join(t.TempDir(), "title.override.json")
	if err := os.WriteFile(override, []byte(`[{"kind":"chunks","chunks":[{"type":"finish","reason":{"kind":"stop"}}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	titles, err := replay.LoadTitles(d.Events, override)
	if err != nil {
		t.Fatal(err)
	}
	req := func(f func(*llm.Request)) llm.Request {
		r := llm.Request{Purpose: llm.PurposeTitle, System: w.Header.System, MaxTokens: w.MaxTokens, Messages: w.Messages}
		if f != nil {
			f(&r)
		}
		return r
	}
	cases := []struct {
		name, field string
		req         llm.Request
	}{
		{"as recorded", "", req(nil)},
		{"system prompt", "system prompt", req(func(r *llm.Request) { r.System = "Title this." })},
		{"messages", "message count", req(func(r *llm.Request) { r.Messages = nil })},
		{"max tokens", "max tokens", req(func(r *llm.Request) { r.MaxTokens = 1 })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var unchecked []string
			p := replay.New(nil, 0, t.TempDir()).WithTitles(titles).
				WithMatcher(&replay.Matcher{Mode: replay.MatchFull}, func(_ string, what []string) { unchecked = append(unchecked, what...) }, nil)
			s, err := p.Stream(context.Background(), c.req)
			if len(unchecked) > 0 {
				t.Fatalf("not compared: %v", unchecked)
			}
			if c.field == "" {
				if err != nil {
					t.Fatalf("want a match, got %v", err)
				}
				s.Close()
				return
			}
			if !errors.Is(err, replay.ErrRequestMismatch) || !strings.Contains(err.Error(), c.field+":") {
				t.Fatalf("want a mismatch naming %q, got %v", c.field, err)
			}
		})
	}
}

// TestWholeScriptOverrideMatchedByTurnAndStep replaces a log's script
// whole: the calls are matched with the recorded request of the turn and
// step reel names.
func TestWholeScriptOverrideMatchedByTurnAndStep(t *testing.T) {
	d := readLog(t, filepath.Join("..", "..", "..", "fixtures", "tool-call-turn", "session.jsonl"))
	override := filepath.Join(t.TempDir(), "replay.override.json")
	if err := os.WriteFile(override, []byte(`[{"kind":"throw","message":"boom"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	script, wants, err := replay.LoadWithWants(d.Header, d.Events, override)
	if err != nil {
		t.Fatal(err)
	}
	w := wants["turn 1 step 1"]
	if w == nil || script[0].Want != nil {
		t.Fatalf("want the recorded turn 1 step 1 and an override entry without one")
	}
	for _, c := range []struct {
		name     string
		messages []json.RawMessage
		mismatch bool
	}{
		{"as recorded", w.Messages, false},
		{"message dropped", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var unchecked []string
			p := replay.New(script, 0, t.TempDir()).WithWants(wants).
				WithMatcher(&replay.Matcher{Mode: replay.MatchMessages}, func(_ string, what []string) { unchecked = append(unchecked, what...) }, nil)
			_, err := p.Stream(context.Background(), llm.Request{Turn: 1, Step: 1, HeaderReason: w.Reason, Messages: c.messages})
			if len(unchecked) > 0 {
				t.Fatalf("not compared: %v", unchecked)
			}
			if got := errors.Is(err, replay.ErrRequestMismatch); got != c.mismatch {
				t.Fatalf("mismatch %v, want %v: %v", got, c.mismatch, err)
			}
			if c.mismatch && !strings.Contains(err.Error(), "turn 1 step 1 (") {
				t.Fatalf("the mismatch does not name the turn and step: %v", err)
			}
		})
	}
}
