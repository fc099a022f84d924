package jsrules_test

import (
	"slices"
	"sort"
	"testing"

	"github.com/reel-agent/reel/internal/jsrules"
)

// The want columns are what node prints for the same input.
func TestKeyOrder(t *testing.T) {
	in := []string{"b", "10", "a", "2", "01", "4294967295", "4294967294", "-1", "é", "Z"}
	// Object.keys(Object.fromEntries(in.map(k => [k, 0])))
	if got, want := jsrules.OwnKeys(slices.Clone(in)), []string{"2", "10", "4294967294", "b", "a", "01", "4294967295", "-1", "é", "Z"}; !slices.Equal(got, want) {
		t.Errorf("OwnKeys = %q, want %q", got, want)
	}
	// Object.keys(Object.fromEntries([...in].sort().map(k => [k, 0])))
	sorted := slices.Clone(in)
	sort.Slice(sorted, func(i, j int) bool { return jsrules.CompareKeys(sorted[i], sorted[j]) < 0 })
	if want := []string{"2", "10", "4294967294", "-1", "01", "4294967295", "Z", "a", "b", "é"}; !slices.Equal(sorted, want) {
		t.Errorf("CompareKeys order = %q, want %q", sorted, want)
	}
}

func TestUTF16(t *testing.T) {
	for _, c := range []struct {
		s      string
		n      int
		len    int
		prefix string
	}{
		{"abc", 2, 3, "ab"}, {"a😀b", 2, 4, "a"}, {"a😀b", 3, 4, "a😀"}, {"héllo", 10, 5, "héllo"}, {"", 1, 0, ""},
	} {
		if got := jsrules.UTF16Len(c.s); got != c.len {
			t.Errorf("UTF16Len(%q) = %d, want %d", c.s, got, c.len)
		}
		if got, _ := jsrules.UTF16Prefix(c.s, c.n); got != c.prefix {
			t.Errorf("UTF16Prefix(%q, %d) = %q, want %q", c.s, c.n, got, c.prefix)
		}
	}
}
