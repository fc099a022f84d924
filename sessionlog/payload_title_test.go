package sessionlog_test

import (
	"encoding/json"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// TestTitlePayloads: the title records encode in dsh's member order (the
// want column is what the reference's recordings hold) and read back.
func TestTitlePayloads(t *testing.T) {
	route := &sessionlog.TitleRoute{Provider: "title-replay", Model: "title-model"}
	msg := sessionlog.UserMessage{
		Content: []sessionlog.ContentPart{sessionlog.TextPart("Generate …:\n[{\"seq\":4,\"text\":\"<a> & b\"}]")},
		Source:  sessionlog.MessageSource{Kind: "plugin", Extra: []sessionlog.Member{{Key: "plugin", Value: json.RawMessage(`"dsh-session-title-llm"`)}}},
		ID:      "m1",
	}
	for _, c := range []struct {
		typ  string
		p    sessionlog.Payload
		want string
	}{
		{sessionlog.TypeSessionTitle, sessionlog.SessionTitleData{Title: "Reply with exactly TITLE_DONE. Do", MessageSeqs: []int{4}, Source: sessionlog.TitleSource{Kind: sessionlog.TitleFallback}},
			`{"title":"Reply with exactly TITLE_DONE. Do","messageSeqs":[4],"source":{"kind":"fallback"}}`},
		{sessionlog.TypeSessionTitle, sessionlog.SessionTitleData{Title: "Late durable session title", MessageSeqs: []int{4, 9}, Source: sessionlog.TitleSource{Kind: sessionlog.TitleProvider, Provider: "session-title-first-prompt-llm", Model: route}},
			`{"title":"Late durable session title","messageSeqs":[4,9],"source":{"kind":"provider","provider":"session-title-first-prompt-llm","model":{"provider":"title-replay","model":"title-model"}}}`},
		{sessionlog.TypeSessionTitle, sessionlog.SessionTitleData{Title: "Mine", MessageSeqs: []int{}, Source: sessionlog.TitleSource{Kind: sessionlog.TitleUser}},
			`{"title":"Mine","messageSeqs":[],"source":{"kind":"user"}}`},
		{sessionlog.TypeTitleLLMRequest, sessionlog.TitleLLMRequestData{TitleProvider: "p", MessageSeqs: []int{4}, Route: *route, System: "Line 1\nLine 2", Messages: []sessionlog.UserMessage{msg}, MaxTokens: 32},
			`{"titleProvider":"p","messageSeqs":[4],"route":{"provider":"title-replay","model":"title-model"},"system":"Line 1\nLine 2","messages":[{"content":[{"type":"text","text":"Generate …:\n[{\"seq\":4,\"text\":\"<a> & b\"}]"}],"source":{"kind":"plugin","plugin":"dsh-session-title-llm"},"role":"user","id":"m1"}],"maxTokens":32}`},
	} {
		got := string(c.p.AppendJSON(nil))
		if got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
			continue
		}
		again, ok, err := sessionlog.ReencodePayload(&sessionlog.Event{Type: c.typ, Data: json.RawMessage(got)})
		if !ok || err != nil || string(again) != c.want {
			t.Errorf("%s does not read back: %s (%v, %v)", c.typ, again, ok, err)
		}
	}
}
