package equiv

import (
	"encoding/json"
	"slices"
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
		{Seq: 32, Source: src(`{"kind":"subagent-report"}`), Parts: []string{"report"}},
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
		{"other", "subagent-report/: report"},
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
