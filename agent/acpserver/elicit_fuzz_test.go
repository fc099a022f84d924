package acpserver

import (
	"encoding/json"
	"testing"

	"github.com/reel-agent/reel/agent/askuser"
)

// FuzzElicitReply: whatever a client replies to a form, parseElicitReply
// returns an outcome or an error without panicking; an accepted reply
// answers only questions asked, and what askuser.Check then admits chooses
// only offered labels.
func FuzzElicitReply(f *testing.F) {
	qs := []askuser.Question{
		{ID: "a", Question: "A?", Options: []askuser.Option{{Label: "x"}, {Label: "y"}}},
		{ID: "b", Question: "B?", Options: []askuser.Option{{Label: "x"}, {Label: "y"}}, MultiSelect: true},
		{ID: "c", Question: "C?"},
	}
	for _, s := range []string{
		`{"action":"accept","content":{"q1":"x","q2":["x","y"],"q2_other":"o","q3":"t"}}`,
		`{"action":"accept","content":{"q1":"x","q1_other":"t"}}`,
		`{"action":"decline"}`, `{"action":"cancel"}`, `{"action":"accept","content":{"q9":1}}`,
		`{"action":"accept","content":{"q1":["x"]}}`, `null`, `[]`, `{"action":"accept","content":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := parseElicitReply(qs, json.RawMessage(raw))
		if err != nil {
			return
		}
		if r.Outcome != askuser.Answered {
			if len(r.Answers) != 0 {
				t.Fatalf("answers with outcome %d", r.Outcome)
			}
			return
		}
		asked := map[string]bool{"a": true, "b": true, "c": true}
		for _, a := range r.Answers {
			if !asked[a.ID] {
				t.Fatalf("answer to %q, not asked", a.ID)
			}
		}
		checked, err := askuser.Check(qs, r.Answers)
		if err != nil {
			return
		}
		for _, a := range checked {
			for _, l := range a.Selected {
				if l != "x" && l != "y" {
					t.Fatalf("label %q not offered got through", l)
				}
			}
		}
	})
}
