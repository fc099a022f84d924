package termtext

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab"},
		{"\x1b]52;c;ZXZpbA==\x07", `\x{1b}]52;c;ZXZpbA==\x{07}`},
		{"\x1b[2J\x1b]0;title\x07", `\x{1b}[2J\x{1b}]0;title\x{07}`},
		{"over\rwrite", `over\x{0d}write`},
		{"nul\x00del\x7f", `nul\x{00}del\x{7f}`},
		{"c1 \u009b31m \u0085", `c1 \u{9b}31m \u{85}`},
		{"lone c1 byte \x9b", `lone c1 byte \x{9b}`},
		{"bad utf8 \xff\xc3", `bad utf8 \x{ff}\x{c3}`},
		{"bidi \u202aa\u202bb\u202cc\u202dd\u202ee", `bidi \u{202a}a\u{202b}b\u{202c}c\u{202d}d\u{202e}e`},
		{"isolates \u2066\u2067\u2068\u2069", `isolates \u{2066}\u{2067}\u{2068}\u{2069}`},
		{"marks \u200e\u200f\u061c zw \u200b\ufeff", `marks \u{200e}\u{200f}\u{61c} zw \u{200b}\u{feff}`},
		{"sep \u2028\u2029", `sep \u{2028}\u{2029}`},
		{"tag \U000e0041", `tag \u{e0041}`},
		{"ok: é ü 日本 😀 \ufffd", "ok: é ü 日本 😀 \ufffd"},
		// Backslashes of code, paths and JSON pass unchanged.
		{`printf "a\n" C:\x \\ \u001b`, `printf "a\n" C:\x \\ \u001b`},
		// A literal backslash is escaped only before "x{" or "u{".
		{`\x{1b}`, `\x{5c}x{1b}`},
		{`\u{9b}`, `\x{5c}u{9b}`},
		{"\\\x1b", `\\x{1b}`},
		{`trailing \`, `trailing \`},
	} {
		got := Escape(c.in)
		if got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		back, err := Unescape(got)
		if err != nil || back != c.in {
			t.Errorf("Unescape(%q) = %q, %v; want %q", got, back, err, c.in)
		}
	}
}

func TestUnescapeMalformed(t *testing.T) {
	for _, in := range []string{`\x{1}`, `\x{123}`, `\x{zz}`, `\x{1b`, `\u{}`, `\u{41}`, `\u{d800}`, `\u{110000}`, `\u{1234567}`} {
		if _, err := Unescape(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("Unescape(%q): %v, want ErrMalformed", in, err)
		}
	}
}

func TestEscapeJSON(t *testing.T) {
	text := "a\x1b\x7f\u009b\u202e\u2066\u2028\U000e0041 é\n"
	in, err := json.Marshal(map[string]string{"text": text})
	if err != nil {
		t.Fatal(err)
	}
	out := EscapeJSON(in)
	if want := `{"text":"a\u001b\u007f\u009b\u202e\u2066\u2028\udb40\udc41 é\n"}`; string(out) != want {
		t.Errorf("EscapeJSON = %s, want %s", out, want)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["text"] != text {
		t.Errorf("EscapeJSON output decodes to %q, %v; want %q", back["text"], err, text)
	}
	if clean := []byte(`{"a": [1, "x\ty"]}`); !bytes.Equal(EscapeJSON(clean), clean) {
		t.Errorf("EscapeJSON changed clean JSON: %s", EscapeJSON(clean))
	}
}

// TestWriterCuts: a Writer's output is Escape of everything written,
// wherever the writes cut it — inside a character, after a backslash.
func TestWriterCuts(t *testing.T) {
	in := "a\\x{1b}\\\x1b日\u009b\u202e\\u{9b}\xff\\"
	for cut := 0; cut <= len(in); cut++ {
		for cut2 := cut; cut2 <= len(in); cut2++ {
			var out bytes.Buffer
			w := NewWriter(&out)
			for _, part := range []string{in[:cut], in[cut:cut2], in[cut2:]} {
				if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != Escape(in) {
				t.Fatalf("cut at %d, %d: %q, want %q", cut, cut2, out.String(), Escape(in))
			}
		}
	}
}

// checkShown fails unless s is safe to show: valid UTF-8, no control but
// newline and tab, no format character or separator.
func checkShown(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("output %q is not valid UTF-8", s)
	}
	for i, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f ||
			r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 ||
			r == 0x2028 || r == 0x2029 || r >= 0xe0000 && r <= 0xe007f || r == 0xfeff || r >= 0x200b && r <= 0x200d {
			t.Fatalf("output %q shows %U at byte %d", s, r, i)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]52;c;eA==\x07", "a\rb\x00c", "\u009b\u202e\u2066", "\xff\xc3", `\x{1b}`, "\\\x1b", `\`, "\U000e0041"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, cut int) {
		got := Escape(s)
		checkShown(t, got)
		back, err := Unescape(got)
		if err != nil || back != s {
			t.Fatalf("Unescape(Escape(%q)) = %q, %v", s, back, err)
		}
		if strings.ContainsRune(s, '\n') != strings.ContainsRune(got, '\n') {
			t.Fatalf("Escape(%q) = %q changed the newlines", s, got)
		}
		// Cut into two writes anywhere, a Writer gives the same.
		cut = min(max(cut, 0), len(s))
		var out bytes.Buffer
		w := NewWriter(&out)
		_, _ = w.Write([]byte(s[:cut]))
		_, _ = w.Write([]byte(s[cut:]))
		_ = w.Flush()
		if out.String() != got {
			t.Fatalf("Writer cut at %d: %q, Escape %q", cut, out.String(), got)
		}
		// As a JSON string, the text survives EscapeJSON exactly, with
		// nothing unsafe left raw.
		j, _ := json.Marshal(s)
		ej := EscapeJSON(j)
		checkShown(t, string(ej))
		var want, dec string
		_ = json.Unmarshal(j, &want)
		if err := json.Unmarshal(ej, &dec); err != nil || dec != want {
			t.Fatalf("EscapeJSON(%s) = %s decodes to %q, %v; want %q", j, ej, dec, err, want)
		}
	})
}

func TestNewWriterOnce(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	if NewWriter(w) != w {
		t.Fatal("NewWriter over a Writer made a second layer")
	}
	_, _ = NewWriter(w).Write([]byte("\x1b"))
	if out.String() != `\x{1b}` {
		t.Errorf("got %q, want it escaped once", out.String())
	}
}
