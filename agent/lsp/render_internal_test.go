package lsp

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReadMessage holds the framing reader to the base protocol and its
// bounds: a body within the limit is returned whole; a larger
// Content-Length, an endless header line, too many headers, a missing or
// repeated Content-Length and a stream cut inside a message are ErrFrame;
// a clean end between messages is io.EOF.
func TestReadMessage(t *testing.T) {
	cases := []struct {
		name, in string
		want     string
		err      error
	}{
		{"one", "Content-Length: 2\r\n\r\n{}", "{}", nil},
		{"content type too", "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n[]", "[]", nil},
		{"bare newlines", "content-length: 4\n\nnull", "null", nil},
		{"at the limit", "Content-Length: 16\r\n\r\n" + strings.Repeat("x", 16), strings.Repeat("x", 16), nil},
		{"over the limit", "Content-Length: 17\r\n\r\n" + strings.Repeat("x", 17), "", ErrFrame},
		{"a terabyte", "Content-Length: 1099511627776\r\n\r\n", "", ErrFrame},
		{"negative", "Content-Length: -1\r\n\r\n", "", ErrFrame},
		{"endless header", strings.Repeat("x", 5000), "", ErrFrame},
		{"many headers", strings.Repeat("X: y\r\n", 20) + "Content-Length: 2\r\n\r\n{}", "", ErrFrame},
		{"no length", "X: y\r\n\r\n{}", "", ErrFrame},
		{"twice", "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", "", ErrFrame},
		{"no colon", "Content-Length 2\r\n\r\n{}", "", ErrFrame},
		{"cut body", "Content-Length: 10\r\n\r\n{}", "", ErrFrame},
		{"cut header", "Content-Length: 10\r\n", "", ErrFrame},
		{"clean end", "", "", io.EOF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readMessage(bufio.NewReaderSize(strings.NewReader(c.in), maxHeaderLine), 16)
			if !errors.Is(err, c.err) || (c.err == nil && string(got) != c.want) {
				t.Fatalf("readMessage(%q) = %q, %v; want %q, %v", clip(c.in, 60), got, err, c.want, c.err)
			}
		})
	}
}

// TestFormatLocations holds the result text to the reference's: one
// path:line:character per location (one-based), grouped by file in first
// appearance, the omission note past the cap, "No results.", paths
// relative to the workspace inside it and absolute outside, quoted when
// they hold a control character, and the whole within the size cap.
func TestFormatLocations(t *testing.T) {
	roots := []string{"/w", "/real/w"}
	loc := func(uri string, line, char int) location { return location{URI: uri, Start: position{line, char}} }
	cases := []struct {
		name     string
		locs     []location
		max, cap int
		want     string
	}{
		{"none", nil, 100, 16000, "No results."},
		{"grouped", []location{loc("file:///w/a.ts", 0, 6), loc("file:///w/b.ts", 2, 0), loc("file:///w/a.ts", 9, 1)}, 100, 16000,
			"a.ts:1:7\na.ts:10:2\nb.ts:3:1"},
		{"one omitted", []location{loc("file:///w/a.ts", 0, 6), loc("file:///w/a.ts", 1, 6)}, 1, 16000, "a.ts:1:7\n… 1 more location omitted (limit 1)."},
		{"two omitted", []location{loc("file:///w/a.ts", 0, 0), loc("file:///w/a.ts", 1, 0), loc("file:///w/a.ts", 2, 0)}, 1, 16000,
			"a.ts:1:1\n… 2 more locations omitted (limit 1)."},
		{"resolved root", []location{loc("file:///real/w/src/x.ts", 0, 0)}, 100, 16000, "src/x.ts:1:1"},
		{"the root", []location{loc("file:///w", 0, 0)}, 100, 16000, ".:1:1"},
		{"outside", []location{loc("file:///usr/lib/x.d.ts", 4, 6), loc("file:///wx/a.ts", 0, 0)}, 100, 16000, "/usr/lib/x.d.ts:5:7\n/wx/a.ts:1:1"},
		{"dotdot", []location{loc("file:///w/../etc/passwd", 0, 0)}, 100, 16000, "/etc/passwd:1:1"},
		{"escaped", []location{loc("file:///w/a%20b.ts", 0, 0)}, 100, 16000, "a b.ts:1:1"},
		{"newline", []location{loc("file:///w/a.ts%0Aevil.ts:1:1", 0, 0)}, 100, 16000, `"a.ts\nevil.ts:1:1":1:1`},
		{"not file", []location{loc("jdt://x/y", 0, 0)}, 100, 16000, "jdt://x/y:1:1"},
		{"remote host", []location{loc("file://host/w/a.ts", 0, 0)}, 100, 16000, "file://host/w/a.ts:1:1"},
		{"capped", []location{loc("file:///w/abcdefghij.ts", 0, 0)}, 100, 50, "abcdefghij.ts:1:1"},
		{"cut", []location{loc("file:///w/abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij.ts", 0, 0)}, 100, 50,
			"abcde\n… locations truncated (limit 50 characters)."},
		{"cut before a wide character", []location{loc("file:///w/abcd😀efghijabcdefghijabcdefghijabcdefghijabcdefghij.ts", 0, 0)}, 100, 50,
			"abcd\n… locations truncated (limit 50 characters)."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := formatLocations(c.locs, roots, c.max, c.cap); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestDecode holds the decoding of servers' answers: Location,
// Location[], LocationLink[] and null for the navigation requests;
// MarkupContent, MarkedString (plain and fenced) and arrays of them for
// hover; anything else is ErrMalformed.
func TestDecode(t *testing.T) {
	locs := []struct {
		in, want string
		err      bool
	}{
		{`null`, "", false},
		{`[]`, "", false},
		{`{"uri":"file:///w/a.ts","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}`, "file:///w/a.ts@1:2", false},
		{`[{"targetUri":"file:///w/b.ts","targetRange":{},"targetSelectionRange":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}}}]`, "file:///w/b.ts@0:0", false},
		{`[{"uri":"file:///w/a.ts","range":{"start":{"line":-1,"character":2},"end":{"line":1,"character":3}}}]`, "", true},
		{`[{"uri":"file:///w/a.ts","range":{"start":{"line":1.5,"character":2},"end":{"line":1,"character":3}}}]`, "", true},
		{`[{"uri":"file:///w/a.ts"}]`, "", true},
		{`[1]`, "", true},
		{`"x"`, "", true},
		{``, "", true},
	}
	for _, c := range locs {
		got, err := decodeLocations(json.RawMessage(c.in))
		var parts []string
		for _, l := range got {
			parts = append(parts, l.URI+"@"+itoa(l.Start.Line)+":"+itoa(l.Start.Character))
		}
		if (err != nil) != c.err || strings.Join(parts, ",") != c.want {
			t.Errorf("decodeLocations(%s) = %q, %v", c.in, parts, err)
		}
	}
	hovers := []struct {
		in, want string
		err      bool
	}{
		{`null`, "", false},
		{`{"contents":{"kind":"markdown","value":"**x**"}}`, "**x**", false},
		{`{"contents":"plain"}`, "plain", false},
		{`{"contents":{"language":"go","value":"func f()"}}`, "```go\nfunc f()\n```", false},
		{`{"contents":["a",{"language":"ts","value":"b"}],"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}}}`, "a\n\n```ts\nb\n```", false},
		{`{"contents":[1]}`, "", true},
		{`{"contents":null}`, "", true},
		{`{"contents":"x","range":{"start":{}}}`, "", true},
		{`[]`, "", true},
	}
	for _, c := range hovers {
		got, err := decodeHover(json.RawMessage(c.in))
		if (err != nil) != c.err || got != c.want {
			t.Errorf("decodeHover(%s) = %q, %v", c.in, got, err)
		}
	}
	if got := formatHover("", 100); got != "No hover information." {
		t.Errorf("empty hover: %q", got)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// FuzzAnswer feeds raw bytes to the framing reader and raw JSON to the
// decoders and the formatting: nothing panics, every error is ErrFrame
// or ErrMalformed (or a clean end), a body is never longer than the
// limit, and a formatted result stays within its cap, one line per
// location plus the note, no line holding a control character.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"), []byte(`[{"uri":"file:///w/a.ts","range":{"start":{"line":0,"character":6},"end":{"line":0,"character":7}}}]`))
	f.Add([]byte("Content-Length: 99999999999\r\n\r\n"), []byte(`{"contents":["a",{"language":"ts","value":"b"}]}`))
	f.Add([]byte("X\n"), []byte(`{"uri":"file:///w/a%0Ab.ts","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}}`))
	f.Add([]byte("Content-Length: 4\r\n\r\nnull"), []byte(`{"contents":"`+strings.Repeat("é", 70)+`"}`))
	f.Add([]byte(""), []byte(`[{"targetUri":"x:\u2028y","targetSelectionRange":{"start":{"line":1,"character":1},"end":{"line":1,"character":1}}}]`))
	f.Fuzz(func(t *testing.T, frame, answer []byte) {
		const limit = 64
		body, err := readMessage(bufio.NewReaderSize(strings.NewReader(string(frame)), maxHeaderLine), limit)
		if err != nil && !errors.Is(err, ErrFrame) && !errors.Is(err, io.EOF) {
			t.Fatalf("readMessage: an error of another kind: %v", err)
		}
		if len(body) > limit {
			t.Fatalf("a body of %d bytes, over the %d-byte limit", len(body), limit)
		}
		locs, err := decodeLocations(answer)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("decodeLocations: an error of another kind: %v", err)
		}
		const maxLocs, maxChars = 3, 60
		text := formatLocations(locs, []string{"/w"}, maxLocs, maxChars)
		if utf16Len(text) > maxChars {
			t.Fatalf("a result of %d characters, over the cap %d", utf16Len(text), maxChars)
		}
		if !strings.Contains(text, "truncated") {
			lines := strings.Split(text, "\n")
			if want := min(len(locs), maxLocs) + min(max(len(locs)-maxLocs, 0), 1); len(locs) > 0 && len(lines) != want {
				t.Fatalf("%d locations rendered as %d lines: %q", len(locs), len(lines), text)
			}
		}
		for _, r := range text {
			if r != '\n' && (r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029') {
				t.Fatalf("a control character %U in %q", r, text)
			}
		}
		h, err := decodeHover(answer)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("decodeHover: an error of another kind: %v", err)
		}
		if got := formatHover(h, maxChars); utf16Len(got) > maxChars {
			t.Fatalf("a hover of %d characters, over the cap %d", utf16Len(got), maxChars)
		}
	})
}

// TestParseArgs holds the one strict parse of a call's arguments.
func TestParseArgs(t *testing.T) {
	cases := []struct {
		in, err string
	}{
		{`{"operation":"hover","file_path":"a.ts","line":1,"character":2}`, ""},
		{`{"operation":"hover","file_path":"a.ts","line":1.0,"character":2}`, ""},
		{`{"operation":"rename","file_path":"a.ts","line":1,"character":2}`, "operation"},
		{`{"operation":"hover","file_path":" ","line":1,"character":2}`, "file_path"},
		{`{"operation":"hover","file_path":"a.ts","line":0,"character":2}`, "line"},
		{`{"operation":"hover","file_path":"a.ts","line":1.5,"character":2}`, "line"},
		{`{"operation":"hover","file_path":"a.ts","line":1,"character":1e12}`, "character"},
		{`{"operation":"hover","file_path":"a.ts","line":1,"character":"2"}`, "character"},
		{`{"operation":"hover","file_path":"a.ts","file_path":"b.ts","line":1,"character":2}`, "given more than once"},
		{`{"operation":"hover","File_path":"a.ts","line":1,"character":2}`, "unknown argument"},
		{`[]`, "want a JSON object"},
		{`{`, "malformed JSON"},
	}
	for _, c := range cases {
		_, err := ParseArgs(json.RawMessage(c.in))
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseArgs(%s) = %v, want %q", c.in, err, c.err)
		}
	}
}
