package equiv

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseWire: any bytes parse without panicking, deterministically,
// and every non-empty line is accounted for exactly once (an answer, a
// permission request, a stray line, or another frame).
func FuzzParseWire(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"toolCall":{"toolCallId":"c"},"options":[{"kind":"allow_once"}]}}`))
	f.Add([]byte("garbage\n\n{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1}}"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":[]}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		w := ParseWire(b)
		if !reflect.DeepEqual(w, ParseWire(bytes.Clone(b))) {
			t.Fatal("ParseWire is not deterministic")
		}
		lines := 0
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if n := len(w.Answers) + len(w.Permissions) + len(w.Bad); n > lines {
			t.Fatalf("%d lines accounted for, the input has %d", n, lines)
		}
	})
}

// FuzzEssence: every tool rule reduces any text without panicking, the
// same way each time, and an essence equals itself.
func FuzzEssence(f *testing.F) {
	f.Add("<path>p</path>\n<type>file</type>\n<content>\n1: a\n</content>")
	f.Add("     1\ta\n     2\tb")
	f.Add("out\n[stderr]\nerr\n[exit code: 2]")
	f.Add("[sandbox denied: mode read-only] x\n[killed by signal 9 (killed)]")
	f.Add("a\n\n(Omitted 3 bytes. Full formatted result stored at: /x. Use read.)")
	f.Add("Found 2 of 9 matches\n\na\nLine 1: x\n\n(cut)")
	f.Add("No files found")
	f.Add("Wrote 3 bytes to {{cwd}}/x (new file)")
	f.Fuzz(func(t *testing.T, text string) {
		for _, r := range ToolRules {
			a, okA := r.essence(text, nil)
			b, okB := r.essence(strings.Clone(text), nil)
			if okA != okB || !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: essence of %q is not deterministic", r.Tool, text)
			}
			if okA && !a.equal(a) {
				t.Fatalf("%s: essence of %q is not equal to itself", r.Tool, text)
			}
			_ = a.String()
		}
	})
}
