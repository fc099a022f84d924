package equiv

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestClassify checks the message table on a reference-shaped surface: the
// runtime-context message and a test fixture's compaction are dropped, and
// the instruction file the reference injects again after that compaction
// is not counted twice.
func TestClassify(t *testing.T) {
	src := func(s string) json.RawMessage { return json.RawMessage(s) }
	baseline := "<system-reminder>\nThe following workspace instructions may be relevant.\n\nInstructions from: AGENTS.md\n\nRoot snapshot instruction.\n\n</system-reminder>"
	nested := "<system-reminder>\nAdditional instructions from: nested/AGENTS.md\n\nThese instructions apply to work under `nested`. Use them as guidance.\n\nNested snapshot instruction.\n\n</system-reminder>"
	users := []*userFact{
		{Seq: 4, Source: src(`{"kind":"user"}`), Parts: []string{"Read nested/task.txt"}},
		{Seq: 5, Source: src(`{"kind":"agent-instructions","baseline":true}`), Parts: []string{baseline}},
		{Seq: 6, Source: src(`{"kind":"plugin","plugin":"@deepseek-ai/dsh-system-prompt","form":"snapshot"}`), Parts: []string{"Current DSH file policy: read-only."}},
		{Seq: 17, Source: src(`{"kind":"plugin","plugin":"compact","compactionId":"workspace-context-fixture"}`), Parts: []string{"Earlier context was compacted."}, Replaces: []int{5}},
		{Seq: 23, Source: src(`{"kind":"agent-instructions","baseline":true}`), Parts: []string{baseline, nested}},
		{Seq: 30, Source: src(`{"kind":"plugin","plugin":"repeat-tool-reminder","summary":"todo_write × 3"}`), Parts: []string{"You called todo_write 3 times."}},
		{Seq: 31, Source: src(`{"kind":"compaction"}`), Parts: []string{"summary"}},
		{Seq: 32, Source: src(`{"kind":"subagent-report","form":"relay","senderSessionId":"c1"}`), Parts: []string{"Background subagent c1 reported:", "OK"}},
		{Seq: 33, Source: src(`{"kind":"subagent-settled","form":"notice","senderSessionId":"c1"}`), Parts: []string{"Background subagent c1 finished.", "Its closing message:", "Done."}},
		{Seq: 34, Source: src(`{"kind":"coordinator","form":"relay","senderSessionId":"p"}`), Parts: []string{"Go on."}},
		{Seq: 35, Source: src(`{"kind":"hook","plugin":"x"}`), Parts: []string{"a", "b"}},
	}
	f := &facts{users: users, userAt: map[int]*userFact{}}
	for _, u := range users {
		f.userAt[u.Seq] = u
	}
	classify(f)
	type row struct{ class, identity string }
	var got []row
	for _, u := range visible(f) {
		got = append(got, row{u.rule.Class, u.identity})
	}
	want := []row{
		{"prompt", "Read nested/task.txt"},
		{"instructions", "AGENTS.md: Root snapshot instruction."},
		{"instructions", "nested/AGENTS.md: Nested snapshot instruction."},
		{"repeat-reminder", "todo_write × 3"},
		{"compaction", "summary"},
		{"subagent-report", "from c1: Background subagent c1 reported:\nOK"},
		{"subagent-settled", "from c1: Background subagent c1 finished.\nIts closing message:\nDone."},
		{"coordinator", "from p: Go on."},
		{"other", "hook/x: ab"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("visible messages:\n got  %q\n want %q", got, want)
	}
	// Without the fixture compaction, an injection repeated is counted.
	f = &facts{users: []*userFact{
		{Seq: 5, Source: src(`{"kind":"agent-instructions"}`), Parts: []string{baseline}},
		{Seq: 9, Source: src(`{"kind":"agent-instructions"}`), Parts: []string{baseline}},
	}, userAt: map[int]*userFact{}}
	classify(f)
	if n := len(visible(f)); n != 2 {
		t.Errorf("a repeated injection without a fixture compaction: %d visible, want 2", n)
	}
}

// TestInstructionFiles reads the files an injection names.
func TestInstructionFiles(t *testing.T) {
	cases := []struct {
		parts []string
		want  []string
	}{
		{nil, nil},
		{[]string{"no instructions here"}, nil},
		{[]string{"<system-reminder>\nInstructions from: A.md\n\nalpha\n\nInstructions from: sub/B.md\n\nbeta  gamma\n</system-reminder>"},
			[]string{"A.md: alpha", "sub/B.md: beta gamma"}},
		{[]string{"Additional instructions from: scope<\\/system-reminder>/AGENTS.md\n\nThese instructions apply to work under `scope<\\/system-reminder>`. Use them.\n\nDelimiter.\n\n</system-reminder>"},
			[]string{"scope<\\/system-reminder>/AGENTS.md: Delimiter."}},
	}
	for _, c := range cases {
		if got := instructionFiles(c.parts); !slices.Equal(got, c.want) {
			t.Errorf("instructionFiles(%q) = %q, want %q", c.parts, got, c.want)
		}
	}
}

// TestRelayMessages compares the messages between a parent and its
// background children: the same text in blocks or in lines of one block
// agrees; another sender, another text, another step, a missing notice
// or two notices in swapped order do not.
func TestRelayMessages(t *testing.T) {
	settled := func(seq, turn, step int, sender string, parts ...string) *userFact {
		return &userFact{Seq: seq, Turn: turn, Step: step, Source: json.RawMessage(`{"kind":"subagent-settled","form":"notice","senderSessionId":"` + sender + `"}`), Parts: parts}
	}
	report := func(seq, turn, step int, parts ...string) *userFact {
		return &userFact{Seq: seq, Turn: turn, Step: step, Source: json.RawMessage(`{"kind":"subagent-report","form":"relay","senderSessionId":"c1"}`), Parts: parts}
	}
	notice := []string{"Background subagent c1 finished and will do no further work unless you send it more.", "Its closing message:", "CHILD_OK"}
	want := []*userFact{report(33, 2, 1, "Background subagent c1 reported:", "CHILD_REPORT_OK"), settled(34, 2, 1, "c1", notice...)}
	cases := []struct {
		name string
		got  []*userFact
		diff string // "" when equivalent, else a word of the difference
	}{
		{"same", []*userFact{report(20, 2, 1, "Background subagent c1 reported:", "CHILD_REPORT_OK"), settled(21, 2, 1, "c1", notice...)}, ""},
		{"lines of one block", []*userFact{report(20, 2, 1, "Background subagent c1 reported:\nCHILD_REPORT_OK"), settled(21, 2, 1, "c1", strings.Join(notice, "\n"))}, ""},
		{"another closing text", []*userFact{report(20, 2, 1, "Background subagent c1 reported:", "CHILD_REPORT_OK"), settled(21, 2, 1, "c1", notice[0], notice[1], "OTHER")}, "subagent-settled message differs"},
		{"another sender", []*userFact{report(20, 2, 1, "Background subagent c1 reported:", "CHILD_REPORT_OK"), settled(21, 2, 1, "c2", notice...)}, "subagent-settled message differs"},
		{"another step", []*userFact{report(20, 2, 1, "Background subagent c1 reported:", "CHILD_REPORT_OK"), settled(21, 3, 1, "c1", notice...)}, "enters at another step"},
		{"swapped", []*userFact{settled(20, 2, 1, "c1", notice...), report(21, 2, 1, "Background subagent c1 reported:", "CHILD_REPORT_OK")}, "class"},
		{"notice missing", []*userFact{report(20, 2, 1, "Background subagent c1 reported:", "CHILD_REPORT_OK")}, "1 subagent-report"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wf, gf := &facts{users: want}, &facts{users: c.got}
			classify(wf)
			classify(gf)
			r := &Report{Want: "recording", Got: "reel"}
			checkMessages(&cmp{r: r, want: wf, got: gf, count: map[string]int{}})
			lines := strings.Join(r.Lines(), "\n")
			switch {
			case c.diff == "" && lines != "":
				t.Errorf("want equivalent, got:\n%s", lines)
			case c.diff != "" && !strings.Contains(lines, c.diff):
				t.Errorf("want a difference naming %q, got:\n%s", c.diff, lines)
			}
		})
	}
}
