package acpserver

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeCursor: the session/list cursor parser never panics; a cursor
// it accepts is exactly the one encodeCursor makes of the id it returns
// (one spelling per position), and every id round-trips.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{"", "x", "!!!", encodeCursor("S1"), encodeCursor("01JABC"),
		base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix)), base64.StdEncoding.EncodeToString([]byte(cursorPrefix + "a")),
		encodeCursor("a") + "A", strings.Repeat("A", 2000), encodeCursor("a/../b")} {
		f.Add(s)
	}
	// A cursor whose last character differs only in its unused low bits.
	c := encodeCursor("a")
	f.Add(c[:len(c)-1] + string(c[len(c)-1]+1))
	f.Fuzz(func(t *testing.T, c string) {
		id, err := decodeCursor(c)
		if err != nil {
			if !strings.Contains(err.Error(), "cursor") {
				t.Errorf("error %q does not name the cursor", err)
			}
			return
		}
		if id == "" {
			t.Fatalf("cursor %q accepted with an empty id", c)
		}
		if got := encodeCursor(id); got != c {
			t.Errorf("cursor %q accepted, but the id %q encodes as %q", c, id, got)
		}
		if utf8.ValidString(c) {
			if back, err := decodeCursor(encodeCursor(c)); err != nil || back != c {
				t.Errorf("id %q does not round-trip: %q, %v", c, back, err)
			}
		}
	})
}
