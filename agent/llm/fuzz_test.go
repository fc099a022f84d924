package llm

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzChunkJSON checks the codec's round trip: whatever decodes must encode,
// the encoding must be valid JSON that decodes to the same chunk, and
// encoding is then a fixed point. Seeds live in testdata/fuzz/FuzzChunkJSON.
func FuzzChunkJSON(f *testing.F) {
	f.Add([]byte(`{"type":"text-delta","index":0,"text":"<\u2028>"}`))
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

// FuzzJSString checks the JSON.stringify-style string encoder against
// encoding/json's decoder.
func FuzzJSString(f *testing.F) {
	f.Add("plain")
	f.Add("\x00\b\f\n\r\t\x1f\"\\\u2028\u2029<>&\x7f")
	f.Add("bad \xff\xfe utf8 \xed\xa0\x80")
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendJSString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("encoded %q as invalid JSON %q: %v", s, enc, err)
		}
		want := s
		if !utf8.ValidString(s) {
			want = string([]rune(s)) // invalid bytes become U+FFFD, as in encoding/json
		}
		if got != want {
			t.Fatalf("decoded %q, want %q (encoded %q)", got, want, enc)
		}
	})
}
