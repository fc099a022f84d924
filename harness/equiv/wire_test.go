package equiv

import (
	"slices"
	"testing"
)

// TestParseWire reads answers, agent text, permission requests and stray
// lines, including malformed input.
func TestParseWire(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		outcomes []string
		texts    []string
		perms    int
		bad      []int
		trailing string
	}{
		{name: "empty"},
		{name: "answers", in: `{"jsonrpc":"2.0","id":1,"result":{}}
{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"he"}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"llo"}}}}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}
{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"x"}}
`, outcomes: []string{"result", "stopReason end_turn", "error -32603"}, texts: []string{"", "hello", ""}},
		{name: "tool call content is not text", in: `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call_update","content":[{"type":"content"}]}}}
`},
		{name: "permission", in: `{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"toolCall":{"toolCallId":"c1"},"options":[{"kind":"allow_once"},{"kind":"reject_once"}]}}
`, perms: 1},
		{name: "malformed lines", in: "not json\n{\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\"}\n\n[1,2]\n{\"jsonrpc\":\"2.0\",\"id\":1}\n", bad: []int{1, 2, 3, 5, 6}},
		{name: "error without id or code", in: `{"jsonrpc":"2.0","id":null,"error":{"message":"parse error"}}`, outcomes: []string{"error (no code)"}, texts: []string{""}},
		{name: "trailing text", in: `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"late"}}}}`, trailing: "late"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := ParseWire([]byte(c.in))
			var outcomes, texts []string
			for _, a := range w.Answers {
				outcomes, texts = append(outcomes, a.Outcome), append(texts, a.Text)
			}
			if !slices.Equal(outcomes, c.outcomes) || !slices.Equal(texts, c.texts) {
				t.Errorf("answers %q texts %q, want %q %q", outcomes, texts, c.outcomes, c.texts)
			}
			if len(w.Permissions) != c.perms {
				t.Errorf("%d permission requests, want %d", len(w.Permissions), c.perms)
			}
			if c.perms > 0 && (w.Permissions[0].ToolCallID != "c1" || !slices.Equal(w.Permissions[0].Kinds, []string{"allow_once", "reject_once"})) {
				t.Errorf("permission %+v", w.Permissions[0])
			}
			if !slices.Equal(w.Bad, c.bad) {
				t.Errorf("bad lines %v, want %v", w.Bad, c.bad)
			}
			if w.Trailing != c.trailing {
				t.Errorf("trailing %q, want %q", w.Trailing, c.trailing)
			}
		})
	}
}
