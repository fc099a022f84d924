package skills

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// FuzzFrontmatter: the parser never panics, and it treats CRLF line ends
// as LF: a file without "\r" and its CRLF twin parse to the same header,
// or fail on the same line. The seed corpus is testdata/fuzz/FuzzFrontmatter.
func FuzzFrontmatter(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: D\n---\nbody\n",
		"---\nname: \"a\\u00e9\"\ndescription: >-\n  folded\n  text\n---\n",
		"---\nname: a\ndescription: 'it''s'\nmetadata:\n  k: [1, {a: b}]\n---\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if len(raw) > 1<<16 {
			return
		}
		h, err := parseHeader(raw)
		s, body, serr := parseSkill(raw)
		if err != nil && (serr == nil || serr.Error() != err.Error()) {
			t.Fatalf("parseHeader: %v; parseSkill: %v", err, serr)
		}
		if serr == nil {
			if !ValidName(s.Name) || s.Description == "" {
				t.Fatalf("accepted skill %+v", s)
			}
			if !strings.Contains(strings.ToValidUTF8(raw, "\uFFFD"), body) {
				t.Fatalf("body %q is not from the file", body)
			}
		}
		if strings.Contains(raw, "\r") {
			return
		}
		crlf := strings.ReplaceAll(raw, "\n", "\r\n")
		h2, err2 := parseHeader(crlf)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("LF: %v; CRLF: %v", err, err2)
		}
		if err != nil {
			if err.Error() != err2.Error() {
				t.Fatalf("LF error %q, CRLF error %q", err, err2)
			}
			return
		}
		if !sameValues(h, h2) {
			t.Fatalf("LF %+v\nCRLF %+v", h.vals, h2.vals)
		}
	})
}

func sameValues(a, b header) bool {
	if !reflect.DeepEqual(a.keys, b.keys) {
		return false
	}
	for k, va := range a.vals {
		vb := b.vals[k]
		if va.kind == kindNumber && math.IsNaN(va.num) && math.IsNaN(vb.num) {
			continue
		}
		if va != vb {
			return false
		}
	}
	return true
}
