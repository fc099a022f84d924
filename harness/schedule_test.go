package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLongestFirst: the suite starts the scenarios with the most recorded
// events first (summed over their session logs), ties in name order.
func TestLongestFirst(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name string
		logs []int // lines per session log
	}{
		{"a-short", []int{3}},
		{"b-none", nil},
		{"c-long", []int{40}},
		{"d-two-logs", []int{20, 25}},
		{"e-short-too", []int{3}},
	} {
		dir := filepath.Join(root, tc.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, n := range tc.logs {
			name := "session.jsonl"
			if i > 0 {
				name = "session." + string(rune('0'+i)) + ".jsonl"
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat("{}\n", n)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*"))
	var got []string
	for _, i := range longestFirst(dirs) {
		got = append(got, filepath.Base(dirs[i]))
	}
	want := []string{"d-two-logs", "c-long", "a-short", "e-short-too", "b-none"}
	if !slices.Equal(got, want) {
		t.Errorf("run order %v, want %v", got, want)
	}
}
