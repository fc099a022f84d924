package equiv

import (
	"encoding/json"
	"slices"
	"strings"
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

// TestWireNoticeTurns compares the wire of runs with turns a background
// subagent's notice started: their agent text after the last answer, or
// between two answers, is compared like any other, so a run whose notice
// turn is missing, or whose prompt is answered before the notice turn,
// differs.
func TestWireNoticeTurns(t *testing.T) {
	chunk := func(text string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}` + "\n"
	}
	answer := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"stopReason":"end_turn"}}` + "\n"
	}
	head := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}` + "\n"
	// subagent-continuable-inheritance: the notice turn runs after the
	// prompt was answered, with no request pending.
	inheritance := head + chunk("DONE") + answer("3") + chunk("SUBAGENT_SETTLED_NOTED")
	// subagent-report: the parent is held until the notice turn ended, so
	// the answer follows it.
	report := head + chunk("STARTED") + chunk("SUBAGENT_SETTLED_NOTED") + answer("3") + chunk("CHILD_REPORT_OK") + answer("4")
	cases := []struct {
		name, want, got string
		diff            string // "" when equivalent, else a word of the difference
	}{
		{"notice turn after the answer", inheritance, inheritance, ""},
		{"notice text in two chunks", inheritance, head + chunk("DONE") + answer("3") + chunk("SUBAGENT_") + chunk("SETTLED_NOTED"), ""},
		{"notice turn missing", inheritance, head + chunk("DONE") + answer("3"), "after the last answer"},
		{"notice turn before the answer", inheritance, head + chunk("DONE") + chunk("SUBAGENT_SETTLED_NOTED") + answer("3"), "before answer 3"},
		{"held answer", report, report, ""},
		{"answer not held", report, head + chunk("STARTED") + answer("3") + chunk("SUBAGENT_SETTLED_NOTED") + chunk("CHILD_REPORT_OK") + answer("4"), "before answer 3"},
		{"held answer, notice turn missing", report, head + chunk("STARTED") + answer("3") + chunk("CHILD_REPORT_OK") + answer("4"), "before answer 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Compare(&Side{Label: "recording", Wire: []byte(c.want)}, &Side{Label: "reel", Wire: []byte(c.got)}, Options{})
			lines := strings.Join(r.Lines(), "\n")
			switch {
			case c.diff == "" && r.Verdict() != Equivalent:
				t.Errorf("want equivalent, got %s:\n%s%v", r.Verdict(), lines, r.Unchecked)
			case c.diff != "" && !strings.Contains(lines, c.diff):
				t.Errorf("want a difference naming %q, got:\n%s", c.diff, lines)
			}
		})
	}
}

// setWireResult rewrites the text of every final tool_call_update of a
// side's transcript: a test that edits a tool result in the log keeps the
// wire showing the same result.
func setWireResult(t *testing.T, s *Side, text string) {
	t.Helper()
	editWire(s, func(line string) []string {
		var f map[string]any
		if json.Unmarshal([]byte(line), &f) != nil || f["method"] != "session/update" {
			return []string{line}
		}
		u := f["params"].(map[string]any)["update"].(map[string]any)
		if u["sessionUpdate"] != "tool_call_update" || (u["status"] != "completed" && u["status"] != "failed") {
			return []string{line}
		}
		u["content"] = []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": text}}}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		return []string{string(b)}
	})
}
