package sandbox

import (
	"slices"
	"testing"
)

// TestWarmCommandMalformed: a body that is not what encodeCommand makes is
// refused, never guessed at.
func TestWarmCommandMalformed(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"empty", ""},
		{"no final NUL", "/w\x001\x00true"},
		{"no argv count", "/w\x00"},
		{"count not a number", "/w\x00x\x00true\x00"},
		{"count zero", "/w\x000\x00"},
		{"count negative", "/w\x00-1\x00true\x00"},
		{"count past the fields", "/w\x003\x00true\x00"},
		{"empty program", "/w\x001\x00\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c, ok := decodeCommand([]byte(tc.body)); ok {
				t.Errorf("decodeCommand(%q) = %+v, want a refusal", tc.body, c)
			}
		})
	}
}

// FuzzWarmCommand: decodeCommand never panics, and what encodeCommand
// makes decodes to the same directory, argv and environment.
func FuzzWarmCommand(f *testing.F) {
	f.Add([]byte("/w\x002\x00bash\x00-c\x00PATH=/bin\x00"), "/w", "bash", "-c", "A=1")
	f.Add([]byte("\x00\x00"), "", "x", "", "")
	f.Fuzz(func(t *testing.T, body []byte, dir, prog, arg, env string) {
		decodeCommand(body) // must not panic
		argv := []string{prog, arg}
		p, ok := encodeCommand(dir, argv, []string{env})
		if !ok {
			return // a NUL in a string: refused before it is sent
		}
		c, ok := decodeCommand(p[8:])
		if prog == "" {
			if ok {
				t.Fatalf("an empty program decoded: %+v", c)
			}
			return
		}
		if !ok || c.dir != dir || !slices.Equal(c.argv, argv) || !slices.Equal(c.env, []string{env}) {
			t.Fatalf("encode/decode of (%q, %q, %q) gave %+v, %v", dir, argv, env, c, ok)
		}
	})
}
