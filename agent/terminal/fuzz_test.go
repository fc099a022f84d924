package terminal

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/tools"
)

// sanitize runs the Sanitizer over data cut into chunks at the given
// points.
func sanitize(data []byte, cuts ...int) (out []byte, prompts int, atPrompt bool) {
	var s Sanitizer
	prev := 0
	for _, c := range append(cuts, len(data)) {
		c = min(max(c, prev), len(data))
		text, p := s.Push(data[prev:c])
		out = append(out, text...)
		if p {
			prompts++
		}
		prev = c
	}
	return append(out, s.Flush()...), prompts, s.AtPrompt()
}

// FuzzSanitizer: whatever a PTY prints, the text has no escape, carriage
// return or BEL left, and how the output is cut into reads changes
// nothing (but how many markers end in one read).
func FuzzSanitizer(f *testing.F) {
	for _, seed := range []string{
		"plain\r\ntext\r", "\x1b[31mred\x1b[0m", "\x1b]133;D;0\x07reel> ", "\x1b]133;D;0\x1b\\reel> ",
		"\x1b]0;title\x07x", "\x1b", "\x1b[", "\x1b]133;D;", "a\rb\r\nc\n\r", "\x1b\x1b[1mB", "\x07\x1b(B\x1b=",
		"\x1b]133;D;1\x07reel> more", "\x1b]133;Dx\x07reel> ",
	} {
		f.Add([]byte(seed), 3)
	}
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		whole, wholePrompts, wholeAt := sanitize(data)
		if bytes.ContainsAny(whole, "\x1b\r\x07") {
			t.Fatalf("sanitized %q to %q: an escape, CR or BEL is left", data, whole)
		}
		if len(whole) > len(data)+1 {
			t.Fatalf("sanitized %q to %q: longer than what was printed", data, whole)
		}
		if cut < 0 {
			cut = -cut
		}
		if len(data) > 0 {
			cut %= len(data) + 1
		}
		split, splitPrompts, splitAt := sanitize(data, cut)
		if !bytes.Equal(whole, split) || wholeAt != splitAt || splitPrompts < wholePrompts {
			t.Fatalf("%q cut at %d: %q (prompt %v) against whole %q (prompt %v)", data, cut, split, splitAt, whole, wholeAt)
		}
		bytewise := make([]int, len(data))
		for i := range bytewise {
			bytewise[i] = i
		}
		one, _, oneAt := sanitize(data, bytewise...)
		if !bytes.Equal(whole, one) || oneAt != wholeAt {
			t.Fatalf("%q byte by byte: %q against %q", data, one, whole)
		}
	})
}

// FuzzRing: a ring keeps the tail of everything written to it, at most its
// size, and says when it dropped some.
func FuzzRing(f *testing.F) {
	f.Add([]byte("hello, world"), 5, 4)
	f.Add([]byte("héllo wörld ✓✓✓"), 7, 3)
	f.Fuzz(func(t *testing.T, data []byte, size, chunk int) {
		size, chunk = 1+abs(size)%64, 1+abs(chunk)%16
		r := newRing(size)
		for i := 0; i < len(data); i += chunk {
			r.Write(data[i:min(i+chunk, len(data))])
		}
		got := r.Bytes()
		keep := data[max(0, len(data)-size):]
		if !bytes.HasSuffix(keep, got) || len(keep)-len(got) > 3 {
			t.Fatalf("ring %d of %q by %d: %q, want the tail %q", size, data, chunk, got, keep)
		}
		if r.dropped != (len(data) > size) {
			t.Fatalf("ring %d of %d bytes: dropped %v", size, len(data), r.dropped)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// FuzzDecodeArgs: the one parse of a terminal tool's arguments either
// refuses (with an ArgError) or returns only declared arguments of their
// types, and a document holding one argument twice, or two spelled alike
// but for case, is refused.
func FuzzDecodeArgs(f *testing.F) {
	for _, seed := range []string{
		`{"sessionId":"pty-1","text":"ls","submit":false}`, `{"sessionId":"pty-1","text":"a","Text":"b"}`,
		`{"sessionId":"pty-1","text":"a","text":"b"}`, `{"sessionId":"pty-1","offset":1.5}`, `{"sessionId":"pty-1","count":"20"}`,
		`null`, ``, `[]`, `{"sessionId":null,"text":"x"}`, `{"sessionId":"p","offset":9007199254740993}`,
	} {
		f.Add([]byte(seed))
	}
	specs := append(sendSpecs(), argSpec{"offset", argNumber, false}, argSpec{"count", argNumber, false})
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := decodeArgs("terminal_send", raw, specs)
		if err != nil {
			var ae *tools.ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("%q: error %v is no ArgError", raw, err)
			}
			return
		}
		for k, v := range a {
			var kind argKind = -1
			for _, s := range specs {
				if s.name == k {
					kind = s.kind
				}
			}
			switch v.(type) {
			case string:
				if kind != argString {
					t.Fatalf("%q: %s decoded as a string", raw, k)
				}
			case bool:
				if kind != argBool {
					t.Fatalf("%q: %s decoded as a bool", raw, k)
				}
			case int:
				if kind != argNumber {
					t.Fatalf("%q: %s decoded as a number", raw, k)
				}
			default:
				t.Fatalf("%q: %s decoded as %T", raw, k, v)
			}
		}
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) == nil {
			// encoding/json keeps the last of repeated keys and matches
			// case-insensitively: every accepted member must be the one
			// declared name, given once.
			dec := json.NewDecoder(bytes.NewReader(raw))
			_, _ = dec.Token()
			seen := map[string]bool{}
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return
				}
				k, _ := tok.(string)
				if seen[strings.ToLower(k)] {
					t.Fatalf("%q: %q given twice (up to case) was accepted", raw, k)
				}
				seen[strings.ToLower(k)] = true
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					return
				}
			}
		}
	})
}
