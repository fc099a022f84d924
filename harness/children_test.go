package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
)

// writeHeader writes a one-line log holding only a header.
func writeHeader(t *testing.T, dir, file, header string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(header+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestChildSessionsOrder harvests a state dir: only logs whose header
// names a parentSession are children, ordered by createdAt, then id, as
// fixtures number them; a log not named after its id is refused.
func TestChildSessionsOrder(t *testing.T) {
	dir := t.TempDir()
	top := `{"type":"session","version":0,"id":"%s","createdAt":%d,"cwd":"/w"}`
	child := `{"type":"session","version":0,"id":"%s","createdAt":%d,"cwd":"/w","parentSession":"%s","origin":"subagent","delegationDepth":1}`
	writeHeader(t, dir, "p.jsonl", fmt.Sprintf(top, "p", 5))
	writeHeader(t, dir, "q.jsonl", fmt.Sprintf(top, "q", 1))
	// Written in an order unlike both file-name and creation order.
	writeHeader(t, dir, "a.jsonl", fmt.Sprintf(child, "a", 30, "p"))
	writeHeader(t, dir, "z.jsonl", fmt.Sprintf(child, "z", 10, "p"))
	writeHeader(t, dir, "m.jsonl", fmt.Sprintf(child, "m", 30, "q"))
	writeHeader(t, dir, "b.jsonl", fmt.Sprintf(child, "b", 30, "z")) // a grandchild
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a log"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := childSessions(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID+"<"+c.Parent)
	}
	if want := []string{"z<p", "a<p", "b<z", "m<q"}; !slices.Equal(ids, want) {
		t.Errorf("children %v, want %v (createdAt, then id)", ids, want)
	}

	writeHeader(t, dir, "x.jsonl", fmt.Sprintf(child, "y", 40, "p"))
	if _, err := childSessions(dir); err == nil || !strings.Contains(err.Error(), "x.jsonl holds session y") {
		t.Errorf("a log not named after its id: %v", err)
	}
}

// TestReplayOrder orders a process's --replay logs: by creation, the
// script's order among equals; a loaded session (created earlier) first.
func TestReplayOrder(t *testing.T) {
	info := []sessionInfo{
		{ID: "s0", CreatedAt: 100},
		{ID: "s1", CreatedAt: 300},
		{ID: "c1", CreatedAt: 200, Parent: "s0"},
		{ID: "c2", CreatedAt: 200, Parent: "s0"},
		{ID: "c3", CreatedAt: 400, Parent: "s1"},
	}
	tests := []struct {
		opens, children, want []int
	}{
		{[]int{0}, nil, []int{0}},
		{[]int{0}, []int{2, 3}, []int{0, 2, 3}},
		// s1 is created after s0's two children and before its own.
		{[]int{0, 1}, []int{2, 3, 4}, []int{0, 2, 3, 1, 4}},
		// A session the fixture lacks keeps its place at the front: the
		// start reports it.
		{[]int{7}, nil, []int{7}},
	}
	for _, tt := range tests {
		if got := replayOrder(info, tt.opens, tt.children); !slices.Equal(got, tt.want) {
			t.Errorf("replayOrder(%v, %v) = %v, want %v", tt.opens, tt.children, got, tt.want)
		}
	}
}

// TestChildrenBySegment gives each child to the first process that opens
// the top-level session it descends from.
func TestChildrenBySegment(t *testing.T) {
	info := []sessionInfo{
		{ID: "s0"}, {ID: "s1"},
		{ID: "c1", Parent: "s1"}, {ID: "c2", Parent: "s0"}, {ID: "g", Parent: "c1"},
	}
	got, err := childrenBySegment(info, [][]int{{0}, {1}, {0}})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{3}, {2, 4}, nil}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("childrenBySegment = %v, want %v", got, want)
	}
	for _, tt := range []struct {
		info []sessionInfo
		want string
	}{
		{[]sessionInfo{{ID: "s0"}, {ID: "c", Parent: "nobody"}}, "the parent nobody of child session c is none of the fixture's sessions"},
		{[]sessionInfo{{ID: "s0"}, {ID: "a", Parent: "b"}, {ID: "b", Parent: "a"}}, "form a cycle"},
		{[]sessionInfo{{ID: "s0"}, {ID: "s1"}, {ID: "c", Parent: "s1"}}, "descends from session.1.jsonl, which the script never opens"},
	} {
		if _, err := childrenBySegment(tt.info, [][]int{{0}}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("childrenBySegment(%v) = %v, want %q", tt.info, err, tt.want)
		}
	}
}

// TestSubagentEligibility pins what the corpus check says of each
// subagent recording: the foreground and background (continuable) ones
// are eligible — a background child and the waitForSubagentTurnEnd step
// are within reel — and each other one names what reel lacks first: the
// reference's fault switches, its reference-only tools.
func TestSubagentEligibility(t *testing.T) {
	root := corpustest.Dir(t)
	tests := []struct{ name, first string }{
		{"subagent-multi", ""},
		{"subagent-fork-in-process", ""},
		{"subagent-mixed", ""},
		{"product-subagent-codex", ""},
		{"subagent-continuable-inheritance", ""},
		{"subagent-report", ""},
		{"subagent-list-agents", ""},
		{"subagent-continuable", ""},
		{"subagent-published-run-failure", ""},
		{"workflow-run", "uses tool workflow"},
		{"advanced-toolchain", "uses tool cordis_define"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, missing, err := Eligible(filepath.Join(root, tt.name))
			if err != nil {
				t.Fatal(err)
			}
			// Nothing of a continuable child counts as missing, wherever
			// one is used.
			for _, m := range missing {
				if strings.Contains(m, "background") || strings.Contains(m, "continuable children") || strings.Contains(m, "waitForSubagentTurnEnd") ||
					slices.ContainsFunc([]string{"subagent", "send_message", "list_agents", "report", "interrupt_agent"}, func(tool string) bool { return m == "uses tool "+tool }) {
					t.Errorf("missing names %q, which reel has", m)
				}
			}
			if tt.first == "" {
				if c == nil {
					t.Fatalf("ineligible: %q", missing)
				}
				return
			}
			if c != nil || len(missing) == 0 || !strings.HasPrefix(missing[0], tt.first) {
				t.Fatalf("missing %q, want first %q", missing, tt.first)
			}
		})
	}
}
