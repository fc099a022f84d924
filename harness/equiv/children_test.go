package equiv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
)

// childScenarios are the corpus recordings with foreground children.
var childScenarios = []string{"subagent-multi", "subagent-fork-in-process", "subagent-mixed"}

// TestChildLogsSelf compares each recording with foreground children with
// itself: every child log is paired, the subagent results have a rule
// (nothing is left unchecked), and nothing differs.
func TestChildLogsSelf(t *testing.T) {
	for _, name := range childScenarios {
		t.Run(name, func(t *testing.T) {
			s, err := LoadDir(filepath.Join(corpustest.Dir(t), name))
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Logs) < 2 {
				t.Fatalf("%s has %d log(s), want a parent and children", name, len(s.Logs))
			}
			r := Compare(s, s, Options{})
			// The recording's wire as the side under test cannot show its
			// session updates (its transport sends none).
			if r.Verdict() != Partial || len(r.Unchecked) != 1 || !strings.Contains(r.Unchecked[0], automationOnlyNote) {
				t.Errorf("a recording is not equivalent to itself:\n%s", r)
			}
		})
	}
}

// tamper copies a corpus scenario and rewrites one of its files: old (which
// must occur) becomes new; new "" with drop removes the file.
func tamper(t *testing.T, name, file, old, new string, drop bool) *Side {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(corpustest.Dir(t), name))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, file)
	if drop {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	} else {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), old) {
			t.Fatalf("%s does not contain %q", file, old)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Label = "tampered"
	return s
}

// TestChildLogsTampered changes one fact of a child (or of the parent's
// view of it) in a copy of a recording and checks that the comparison
// with the original finds it, naming the child, and finds nothing else.
func TestChildLogsTampered(t *testing.T) {
	const childText = `{"type":"text","text":"ALPHA"}],"source":{"kind":"model"`
	tests := []struct {
		name, scenario, file, old, new string
		drop                           bool
		// want are substrings of one difference each; none others may be
		// reported unless extra is set.
		want  []string
		extra bool
	}{
		{name: "the child's final text", scenario: "subagent-multi", file: "session.1.jsonl", old: childText, new: strings.Replace(childText, "ALPHA", "OMEGA", 1),
			want: []string{`assistant text, child 1: turn 1 step 1`}},
		{name: "the child's result in the parent", scenario: "subagent-multi", file: "session.jsonl", old: `"content":[{"type":"text","text":"ALPHA"}`, new: `"content":[{"type":"text","text":"OMEGA"}`,
			want: []string{`tool result, session 0: call 1 subagent`}},
		{name: "the child's turn end", scenario: "subagent-multi", file: "session.2.jsonl", old: `"reason":{"kind":"completed"}`, new: `"reason":{"kind":"error"}`,
			want: []string{`turn ends, child 2: turn 1`}},
		{name: "a child log dropped", scenario: "subagent-multi", file: "session.2.jsonl", drop: true,
			want: []string{`sessions: recording has 2 child (subagent) session log(s), tampered 1`}},
		{name: "the child's delegation depth", scenario: "subagent-multi", file: "session.1.jsonl", old: `"delegationDepth":1`, new: `"delegationDepth":2`,
			want: []string{`lineage, child 1: header: delegationDepth: recording 1, tampered 2`}},
		{name: "the child's parent", scenario: "subagent-multi", file: "session.1.jsonl", old: `"parentSession":"14dda109`, new: `"parentSession":"99dda109`,
			want: []string{`lineage, child 1: header: parentSession: recording a child of session.jsonl, tampered a child of 99dda109-5728-45ba-a002-7db9543fe50e, which is none of the side's sessions`}},
		{name: "a fork seed that is not the parent's", scenario: "subagent-fork-in-process", file: "session.1.jsonl", old: "Remember this fact for later", new: "Forget this fact for later",
			want: []string{`lineage, child 1: seed: tampered: seed event 0 (seq 0 agent/inbox/spliced) is not the parent's`}, extra: true},
		{name: "a fork without its seed", scenario: "subagent-fork-in-process", file: "session.1.jsonl", old: `"seedLength":42`, new: `"seedLength":0`,
			want: []string{`lineage, child 1: header: seedLength (the events copied from the parent): recording 42 (the parent's turns through turn 1), tampered 0 (none)`}, extra: true},
		{name: "a fork's own answer", scenario: "subagent-mixed", file: "session.2.jsonl", old: `{"type":"text","text":"SAFFRON"}],"source":{"kind":"model"`, new: `{"type":"text","text":"SAFFRoN"}],"source":{"kind":"model"`,
			want: []string{`assistant text, child 2: turn 2 step 1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := LoadDir(filepath.Join(corpustest.Dir(t), tt.scenario))
			if err != nil {
				t.Fatal(err)
			}
			want.Label = "recording"
			got := tamper(t, tt.scenario, tt.file, tt.old, tt.new, tt.drop)
			r := Compare(want, got, Options{})
			lines := r.Lines()
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					found = found || strings.Contains(l, w)
				}
				if !found {
					t.Errorf("no difference contains %q; the report:\n%s", w, r)
				}
			}
			if !tt.extra && len(lines) != len(tt.want) {
				t.Errorf("%d difference(s), want %d:\n%s", len(lines), len(tt.want), r)
			}
		})
	}
}

// TestForkSeedIsNotTheChildsOwn reads a fork child: its facts are its own
// turn's (turn 2), not the copied turn 1 of its parent, while its requests
// still carry the inherited history.
func TestForkSeedIsNotTheChildsOwn(t *testing.T) {
	s, err := LoadDir(filepath.Join(corpustest.Dir(t), "subagent-fork-in-process"))
	if err != nil {
		t.Fatal(err)
	}
	child := s.Logs[1]
	if n := seedEnd(child); n != 42 {
		t.Fatalf("seedEnd = %d, want 42", n)
	}
	f, err := extract(child, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ends) != 1 || f.ends[0].Turn != 2 {
		t.Errorf("turn ends %+v, want turn 2 only", f.ends)
	}
	for _, x := range f.texts {
		if x.Turn != 2 {
			t.Errorf("assistant text of turn %d (seq %d) counted as the child's", x.Turn, x.Seq)
		}
	}
	for _, u := range visible(f) {
		if u.Seq < 42 {
			t.Errorf("message seq %d of the seed counted as the child's (%q)", u.Seq, u.identity)
		}
	}
	if len(f.steps) == 0 {
		t.Fatal("no requests")
	}
	for _, r := range f.steps {
		if r.Turn != 2 {
			t.Errorf("request of turn %d step %d counted as the child's", r.Turn, r.Step)
		}
	}
	// The first own request carries turn 1's prompt from the seed.
	sh := shape(f, child, f.steps[0])
	if len(sh) == 0 || sh[0].label != "user prompt" || sh[0].seq >= 42 {
		t.Errorf("the first own request's history %v does not start with the inherited prompt", labels(sh))
	}
	// The parent's facts are unchanged: turns 1 and 2.
	pf, err := extract(s.Logs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pf.ends) != 2 {
		t.Errorf("parent turn ends %+v, want two", pf.ends)
	}
}
