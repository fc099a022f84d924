package harness

import (
	"strings"
	"testing"
)

// TestWithoutProgress: only the output-so-far frames of running calls are
// dropped; the start, the in_progress status without content, the result
// and every other frame stay, in order.
func TestWithoutProgress(t *testing.T) {
	keep := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"kind":"execute","sessionUpdate":"tool_call","status":"pending","title":"t","toolCallId":"c"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","status":"in_progress","toolCallId":"c"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"content":[{"content":{"text":"in_progress","type":"text"},"type":"content"}],"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"c"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"content":{"text":"\"tool_call_update\" \"in_progress\"","type":"text"},"sessionUpdate":"agent_message_chunk"}}}`,
		`not json "tool_call_update" "in_progress"`,
	}
	drop := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"content":[{"content":{"text":"1\n2\n","type":"text"},"type":"content"}],"sessionUpdate":"tool_call_update","status":"in_progress","toolCallId":"c"}}}`
	in := strings.Join([]string{keep[0], keep[1], drop, drop, keep[2], keep[3], keep[4]}, "\n") + "\n"
	want := strings.Join(keep, "\n") + "\n"
	if got := string(withoutProgress([]byte(in))); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
