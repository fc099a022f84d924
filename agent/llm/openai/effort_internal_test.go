package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
)

// TestReasoningEffortSent: a request's reasoning effort is sent as
// reasoning_effort on both body paths (whole and kept encodings), and a
// request without one sends none.
func TestReasoningEffortSent(t *testing.T) {
	msg := json.RawMessage(`{"role":"user","content":[{"type":"text","text":"hi"}]}`)
	for _, tc := range []struct {
		effort, want string
	}{
		{"high", `"reasoning_effort":"high"`},
		{"", ""},
	} {
		var memo llm.Memo
		req := llm.Request{Model: "o3", Messages: []json.RawMessage{msg}, ReasoningEffort: tc.effort, Memo: &memo}
		got, err := sentBody(Config{Model: "o3"}, new(int), req)
		if err != nil {
			t.Fatal(err)
		}
		checkBody(t, "effort "+tc.effort, Config{Model: "o3"}, new(int), req)
		has := bytes.Contains(got, []byte(`"reasoning_effort"`))
		if tc.want == "" && has || tc.want != "" && !bytes.Contains(got, []byte(tc.want)) {
			t.Errorf("effort %q: body %s", tc.effort, got)
		}
	}
}
