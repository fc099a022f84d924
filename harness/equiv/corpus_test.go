package equiv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
)

// TestCorpusRecordings compares every corpus recording with itself: the
// engine reads each one, finds no difference, and recognizes every
// successful result of a tool the table has a rule for — a reference
// presentation the table misses would make a corpus run partial.
func TestCorpusRecordings(t *testing.T) {
	root := corpustest.Dir(t)
	dirs, err := filepath.Glob(filepath.Join(root, "*", "session.jsonl"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no corpus recordings under %s (%v)", root, err)
	}
	for _, p := range dirs {
		dir := filepath.Dir(p)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			s, err := LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			r := Compare(s, s, Options{})
			for _, l := range r.Lines() {
				t.Errorf("a recording differs from itself: %s", l)
			}
			for _, u := range r.Unchecked {
				if !strings.Contains(u, "no rule in the tool table") && !strings.Contains(u, automationOnlyNote) {
					t.Errorf("unchecked: %s", u)
				}
			}
		})
	}
}

// TestCorpusInstructions checks the message table on the recording whose
// surface a test fixture rewrites (agent-instructions).
func TestCorpusInstructions(t *testing.T) {
	dir := filepath.Join(corpustest.Dir(t), "agent-instructions")
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	s, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := extract(s.Logs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range visible(f) {
		got = append(got, u.rule.Class+" "+u.identity)
	}
	want := []string{
		"prompt Read nested/task.txt, then read scope</system-reminder>/task.txt with the read tool, then reply DONE.",
		"instructions AGENTS.md: Root snapshot instruction.",
		"instructions nested/AGENTS.md: Nested snapshot instruction.",
		"instructions scope<\\/system-reminder>/AGENTS.md: Delimiter path snapshot instruction.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("visible messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
