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

// TestRunQueueKeepsPortsApart: a scenario whose web port a running one
// serves on is passed over for a later one, and starts once the port is
// free; none is handed out twice.
func TestRunQueueKeepsPortsApart(t *testing.T) {
	// Scenarios 0, 1 and 2 serve on port 43118, 4 on 43119; 3 serves none.
	q := newRunQueue([]int{0, 1, 2, 3, 4}, map[int]int{0: 43118, 1: 43118, 2: 43118, 4: 43119})
	take := func(want int) {
		t.Helper()
		if _, ok := q.pick(); !ok {
			t.Fatalf("nothing can start; want scenario %d (pending %v, busy %v)", want, q.pending, q.busy)
		}
		if got, _ := q.next(); got != want {
			t.Fatalf("next = %d, want %d (pending %v)", got, want, q.pending)
		}
	}
	take(0)
	take(3) // 1 and 2 wait for port 43118
	take(4)
	if k, ok := q.pick(); ok {
		t.Fatalf("scenario %d can start while port 43118 is busy", q.pending[k])
	}
	q.done(3)
	if _, ok := q.pick(); ok {
		t.Fatal("a scenario without a port ending freed port 43118")
	}
	q.done(0)
	take(1)
	q.done(1)
	take(2)
	q.done(2)
	q.done(4)
	if i, ok := q.next(); ok {
		t.Fatalf("next = %d after every scenario was handed out", i)
	}
}
