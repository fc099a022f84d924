package askuser_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/askuser"
)

func ptr(s string) *string { return &s }

// TestCheck: an answer reaches the model only when it fits the questions.
func TestCheck(t *testing.T) {
	qs := []askuser.Question{
		{ID: "a", Question: "A?", Options: []askuser.Option{{Label: "x"}, {Label: "y"}}},
		{ID: "b", Question: "B?", Options: []askuser.Option{{Label: "x"}, {Label: "y"}}, MultiSelect: true},
		{ID: "c", Question: "C?"},
	}
	tests := []struct {
		name    string
		answers []askuser.Answer
		want    string // rendered, or the error
	}{
		{"all skipped", nil, `{"answers":[{"id":"a","selected":[]},{"id":"b","selected":[]},{"id":"c","selected":[]}]}`},
		{"answered", []askuser.Answer{{ID: "c", Custom: ptr("<ok> & done")}, {ID: "a", Selected: []string{"y"}}, {ID: "b", Selected: []string{"y", "x"}, Custom: ptr("z")}},
			`{"answers":[{"id":"a","selected":["y"]},{"id":"b","selected":["y","x"],"custom":"z"},{"id":"c","selected":[],"custom":"<ok> & done"}]}`},
		{"unknown id", []askuser.Answer{{ID: "d"}}, `the answer names "d", which is not the id of a question asked`},
		{"twice", []askuser.Answer{{ID: "a"}, {ID: "a"}}, `question "a" is answered twice`},
		{"label not offered", []askuser.Answer{{ID: "a", Selected: []string{"z"}}}, `chooses "z", which is not one of its options`},
		{"label twice", []askuser.Answer{{ID: "b", Selected: []string{"x", "x"}}}, `chooses "x" twice`},
		{"two of single", []askuser.Answer{{ID: "a", Selected: []string{"x", "y"}}}, `chooses 2 options of a single-select question`},
		{"choice and custom of single", []askuser.Answer{{ID: "a", Selected: []string{"x"}, Custom: ptr("w")}}, `both chooses an option and types a custom answer`},
		{"blank custom", []askuser.Answer{{ID: "c", Custom: ptr("  ")}}, `blank custom answer`},
		{"control in custom", []askuser.Answer{{ID: "c", Custom: ptr("a\x1b[2J")}}, `holds the control character U+001B`},
		{"long custom", []askuser.Answer{{ID: "c", Custom: ptr(strings.Repeat("a", askuser.MaxTextBytes+1))}}, `at most 4096`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := askuser.Check(qs, tc.answers)
			text := ""
			if err != nil {
				text = err.Error()
			} else {
				text = askuser.Render(got)
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("got %s\nwant %s", text, tc.want)
			}
		})
	}
}

// FuzzParseArgs: any arguments either fail with an error naming a member
// or parse into questions within every bound, all clean text, with unique
// ids and labels; a parse is stable (the same input, the same questions).
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		`{"questions":[{"id":"a","question":"Q?","options":[{"label":"x","description":"d"}],"multi_select":true}]}`,
		`{"questions":[{"id":"a","question":"Q\u001b?"}]}`,
		`{"questions":[{"id":"a","question":"Q","Options":[]}]}`,
		`{"questions":[]}`, `{"questions":null}`, `[]`, `{"questions":[{"id":"a","question":"x","header":"h","detail":"d\n\tx"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := askuser.ParseArgs(json.RawMessage(raw))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if len(a.Questions) == 0 || len(a.Questions) > askuser.MaxQuestions {
			t.Fatalf("%d questions", len(a.Questions))
		}
		ids := map[string]bool{}
		for _, q := range a.Questions {
			if ids[q.ID] || strings.TrimSpace(q.ID) == "" || strings.TrimSpace(q.Question) == "" {
				t.Fatalf("bad id or question %+v", q)
			}
			ids[q.ID] = true
			for _, s := range []string{q.ID, q.Header} {
				if askuser.CleanText(s, true) != nil || !utf8.ValidString(s) {
					t.Fatalf("unclean line %q", s)
				}
			}
			for _, s := range []string{q.Question, q.Detail} {
				if askuser.CleanText(s, false) != nil || len(s) > askuser.MaxTextBytes {
					t.Fatalf("unclean text %q", s)
				}
			}
			labels := map[string]bool{}
			for _, o := range q.Options {
				if labels[o.Label] || askuser.CleanText(o.Label, true) != nil || len(o.Label) > askuser.MaxLabelBytes {
					t.Fatalf("bad label %q", o.Label)
				}
				labels[o.Label] = true
			}
			if len(q.Options) > askuser.MaxOptions || q.MultiSelect && len(q.Options) == 0 {
				t.Fatalf("bad options %+v", q)
			}
		}
		b, _ := askuser.ParseArgs(json.RawMessage(raw))
		if len(b.Questions) != len(a.Questions) {
			t.Fatal("unstable parse")
		}
	})
}
