package replay

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestOverrideDocTable keeps docs/scenarios.md's table of override kinds,
// with each kind's required and optional members, equal to entryFields,
// the table ParseOverride dispatches on.
func TestOverrideDocTable(t *testing.T) {
	const path = "../../../docs/scenarios.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the scenario format documentation is missing: %v", err)
	}
	_, rest, ok := strings.Cut(string(raw), "<!-- override kinds")
	body, _, ok2 := strings.Cut(rest, "<!-- end override kinds -->")
	if !ok || !ok2 {
		t.Fatalf("%s: no override kinds table between markers", path)
	}
	names := func(cell string) []string {
		var out []string
		for _, part := range strings.Split(cell, ",") {
			if part = strings.Trim(strings.TrimSpace(part), "`"); part != "" && part != "—" {
				out = append(out, part)
			}
		}
		slices.Sort(out)
		return out
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 4 || !strings.HasPrefix(strings.TrimSpace(cells[0]), "`") {
			continue // the marker's rest, header, separator
		}
		kind := names(cells[0])[0]
		seen[kind] = true
		fs, ok := entryFields[kind]
		if !ok {
			t.Errorf("%s documents kind %q, which ParseOverride refuses", path, kind)
			continue
		}
		var optional []string
		for _, f := range fs.Allowed {
			if f != "kind" && !slices.Contains(fs.Required, f) {
				optional = append(optional, f)
			}
		}
		slices.Sort(optional)
		if got, want := names(cells[1]), slices.Sorted(slices.Values(fs.Required)); !slices.Equal(got, want) {
			t.Errorf("%s: kind %q: required %q, the parser requires %q", path, kind, got, want)
		}
		if got := names(cells[2]); !slices.Equal(got, optional) {
			t.Errorf("%s: kind %q: optional %q, the parser also accepts %q", path, kind, got, optional)
		}
	}
	for kind := range entryFields {
		if !seen[kind] {
			t.Errorf("ParseOverride accepts kind %q, which %s does not document", kind, path)
		}
	}
}
