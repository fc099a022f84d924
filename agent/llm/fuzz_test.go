package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzChunkJSON checks the codec's round trip: whatever decodes must encode,
// the encoding must be valid JSON that decodes to the same chunk, and
// encoding is then a fixed point. Seeds live in testdata/fuzz/FuzzChunkJSON.
func FuzzChunkJSON(f *testing.F) {
	f.Add([]byte(`{"type":"text-delta","index":0,"text":"<\u2028>"}`))
	f.Add([]byte(`{"type":"finish","reason":{"kind":"max-tokens"},"replayState":{"response":{"kind":"pi-ai","version":2},"blocks":[{"type":"text"},{"type":"tool-call"}]}}`))
	f.Add([]byte(`{"type":"finish","reason":{"kind":"stop"},"replayState":{ }}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c1 Chunk
		if err := c1.UnmarshalJSON(data); err != nil {
			return
		}
		b1, err := c1.MarshalJSON()
		if err != nil {
			t.Fatalf("decoded %q but cannot encode: %v", data, err)
		}
		if !json.Valid(b1) {
			t.Fatalf("encoded invalid JSON %q from %q", b1, data)
		}
		var c2 Chunk
		if err := c2.UnmarshalJSON(b1); err != nil {
			t.Fatalf("cannot decode own encoding %q: %v", b1, err)
		}
		if !reflect.DeepEqual(c1, c2) {
			t.Fatalf("round trip disagrees\n c1 %#v\n c2 %#v", c1, c2)
		}
		b2, err := c2.MarshalJSON()
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("encoding is not a fixed point: %q then %q (%v)", b1, b2, err)
		}
	})
}

// FuzzJSString checks how chunks write strings (with sessionlog.AppendString,
// JSON.stringify style) against encoding/json's decoder and against the
// escaping rule of the package documentation: only '"', '\\' and controls
// below U+0020 are escaped, everything else is written raw, and an invalid
// UTF-8 byte becomes U+FFFD. Seeds live in testdata/fuzz/FuzzJSString.
func FuzzJSString(f *testing.F) {
	f.Add("plain")
	f.Add("\x00\b\f\n\r\t\x1f\"\\\u2028\u2029<>&\x7f")
	f.Add("bad \xff\xfe utf8 \xed\xa0\x80")
	f.Fuzz(func(t *testing.T, s string) {
		enc, err := Chunk{Type: ChunkTextDelta, Text: s}.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Text string }
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("encoded %q as invalid JSON %q: %v", s, enc, err)
		}
		want := s
		if !utf8.ValidString(s) {
			want = string([]rune(s)) // invalid bytes become U+FFFD, as in encoding/json
		}
		if got.Text != want {
			t.Fatalf("decoded %q, want %q (encoded %q)", got.Text, want, enc)
		}
		lit := enc[len(`{"type":"text-delta","index":0,"text":`) : len(enc)-1]
		if ref := jsStringify(want); string(lit) != ref {
			t.Fatalf("encoded %q as %s, want %s", s, lit, ref)
		}
	})
}

// jsStringify is an independent statement of JSON.stringify's escaping of a
// valid UTF-8 string.
func jsStringify(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
