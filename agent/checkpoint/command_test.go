package checkpoint

import (
	"regexp"
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    Request
		ok, err bool
	}{
		{"hello", Request{}, false, false},
		{"", Request{}, false, false},
		{"/undo", Request{}, true, false},
		{"/undo force", Request{Force: true}, true, false},
		{"/rewind 3 dry-run", Request{Turn: 3, DryRun: true}, true, false},
		{"/rewind 2 force dry-run", Request{Turn: 2, Force: true, DryRun: true}, true, false},
		{"/rewind", Request{}, true, true},
		{"/rewind 0", Request{}, true, true},
		{"/rewind x", Request{}, true, true},
		{"/rewind 1 now", Request{Turn: 1}, true, true},
		{"/checkpoints", Request{List: true}, true, false},
	} {
		got, ok, err := ParseCommand(c.in)
		if ok != c.ok || (err != nil) != c.err || (err == nil && got != c.want) {
			t.Errorf("ParseCommand(%q) = %+v, %v, %v; want %+v, %v, error %v", c.in, got, ok, err, c.want, c.ok, c.err)
		}
	}
}

// TestStoreName: a plain id names its store as it is (the rule the engine
// held as a regular expression), anything else by a hash.
func TestStoreName(t *testing.T) {
	plain := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	for _, id := range []string{"abc", "6e619461-3994-4136-b9f0-849908ba1320", "a.b_c-d", ".hidden", "-x", "../x", "a/b", "", "é", strings.Repeat("a", 128), strings.Repeat("a", 129), "a\x00"} {
		got := StoreName(id)
		if plain.MatchString(id) != (got == id+".git") {
			t.Errorf("StoreName(%q) = %q: plain %v", id, got, plain.MatchString(id))
		}
		if strings.ContainsAny(strings.TrimSuffix(got, ".git"), "/.\x00") && got != id+".git" {
			t.Errorf("StoreName(%q) = %q holds a path character", id, got)
		}
	}
}
