package equiv

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// fixture loads one of reel's committed scenarios as a Side: its log and
// its golden transcript.
func fixture(t *testing.T, name string) *Side {
	t.Helper()
	l, err := LoadLog(filepath.Join("..", "..", "fixtures", name, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	wire, err := os.ReadFile(filepath.Join("..", "..", "snapshots", "transcripts", name+"_1.snap.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return &Side{Label: "want", Logs: []*Log{l}, Wire: wire}
}

// clone deep-copies a side, relabelled "got".
func clone(s *Side) *Side {
	c := &Side{Label: "got", Wire: bytes.Clone(s.Wire), Temp: slices.Clone(s.Temp)}
	for _, l := range s.Logs {
		evs := make([]sessionlog.Event, len(l.Events))
		for i, e := range l.Events {
			e.Data = bytes.Clone(e.Data)
			evs[i] = e
		}
		c.Logs = append(c.Logs, &Log{Name: l.Name, Header: l.Header, Events: evs})
	}
	return c
}

// edit rewrites the data of the first event of type typ (after skip
// others) through f on its decoded JSON.
func edit(t *testing.T, s *Side, typ string, skip int, f func(d map[string]any)) {
	t.Helper()
	for i := range s.Logs[0].Events {
		e := &s.Logs[0].Events[i]
		if e.Type != typ {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		f(d)
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		e.Data = b
		return
	}
	t.Fatalf("no %s event to edit", typ)
}

// resultPart returns the tool-result part of a tool/result's data.
func resultPart(d map[string]any) map[string]any {
	return d["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
}

// setResultText sets a tool/result's text.
func setResultText(text string) func(map[string]any) {
	return func(d map[string]any) {
		resultPart(d)["content"] = []any{map[string]any{"type": "text", "text": text}}
	}
}

// editWire rewrites the transcript line by line (a nil result drops it).
func editWire(s *Side, f func(line string) []string) {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(s.Wire), "\n"), "\n") {
		out = append(out, f(l)...)
	}
	s.Wire = []byte(strings.Join(out, "\n") + "\n")
}

// TestCompare mutates a committed fixture in one way at a time and checks
// the verdict and which checks report it.
func TestCompare(t *testing.T) {
	cases := []struct {
		name    string
		fixture string
		mutate  func(t *testing.T, s *Side)
		verdict Verdict
		checks  []string // checks that must report a difference
	}{
		{"identical", "tool-call-turn", func(*testing.T, *Side) {}, Equivalent, nil},
		{"identical with permission", "escalation-approved", func(*testing.T, *Side) {}, Equivalent, nil},
		{"outcome flipped", "tool-call-turn", func(t *testing.T, s *Side) {
			edit(t, s, "tool/result", 0, func(d map[string]any) { resultPart(d)["isError"] = true })
		}, Different, []string{"tool result"}},
		{"output changed", "tool-call-turn", func(t *testing.T, s *Side) {
			edit(t, s, "tool/result", 0, setResultText("TERMINAL_KO\n"))
		}, Different, []string{"tool result"}},
		{"garbage read", "read-edit-diff", func(t *testing.T, s *Side) {
			edit(t, s, "tool/result", 0, setResultText("garbage"))
		}, Different, []string{"tool result"}},
		{"arguments changed", "tool-call-turn", func(t *testing.T, s *Side) {
			edit(t, s, "tool/call", 0, func(d map[string]any) { d["arguments"] = `{"command":"echo OTHER"}` })
		}, Different, []string{"tool calls"}},
		{"results shifted", "parallel-tool-calls", func(t *testing.T, s *Side) {
			var texts []string
			f := extractOrFatal(t, s)
			for _, c := range f.calls {
				texts = append(texts, c.Result.Text)
			}
			if len(texts) < 2 {
				t.Fatal("the fixture has fewer than two results")
			}
			for k := range texts {
				edit(t, s, "tool/result", k, setResultText(texts[(k+len(texts)-1)%len(texts)]))
			}
		}, Different, []string{"tool result"}},
		{"prompt changed", "tool-call-turn", func(t *testing.T, s *Side) {
			edit(t, s, "user/message", 0, func(d map[string]any) {
				d["content"] = []any{map[string]any{"type": "text", "text": "another prompt"}}
			})
		}, Different, []string{"messages"}},
		{"message class changed", "tool-call-turn", func(t *testing.T, s *Side) {
			edit(t, s, "user/message", 0, func(d map[string]any) {
				d["source"] = map[string]any{"kind": "plugin", "plugin": "repeat-tool-reminder", "summary": "bash × 3"}
			})
		}, Different, []string{"messages", "requests"}},
		{"assistant text changed", "tool-call-turn", func(t *testing.T, s *Side) {
			edit(t, s, "assistant/message", 1, func(d map[string]any) {
				d["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "NOT DONE"}}
			})
		}, Different, []string{"assistant text"}},
		{"turn end changed", "tool-call-turn", func(t *testing.T, s *Side) {
			edit(t, s, "turn/end", 0, func(d map[string]any) { d["reason"] = map[string]any{"kind": "error"} })
		}, Different, []string{"turn ends"}},
		{"mode changed", "tool-call-turn", func(t *testing.T, s *Side) {
			edit(t, s, "sandbox/mode", 0, func(d map[string]any) { d["mode"] = "danger-full-access" })
		}, Different, []string{"settings"}},
		{"stop reason changed", "tool-call-turn", func(t *testing.T, s *Side) {
			editWire(s, func(l string) []string {
				return []string{strings.Replace(l, `"stopReason":"end_turn"`, `"stopReason":"refusal"`, 1)}
			})
		}, Different, []string{"wire answers"}},
		{"error code changed", "provider-error", func(t *testing.T, s *Side) {
			editWire(s, func(l string) []string { return []string{strings.Replace(l, `"code":-32603`, `"code":-32000`, 1)} })
		}, Different, []string{"wire answers"}},
		{"permission not asked", "escalation-approved", func(t *testing.T, s *Side) {
			editWire(s, func(l string) []string {
				if strings.Contains(l, "session/request_permission") {
					return nil
				}
				return []string{l}
			})
		}, Different, []string{"permission requests"}},
		{"permission kinds changed", "escalation-approved", func(t *testing.T, s *Side) {
			editWire(s, func(l string) []string {
				return []string{strings.Replace(l, `"kind":"reject_once"`, `"kind":"reject_always"`, 1)}
			})
		}, Different, []string{"permission requests"}},
		{"stray stdout line", "tool-call-turn", func(t *testing.T, s *Side) {
			s.Wire = append([]byte("debug: hello\n"), s.Wire...)
		}, Different, []string{"wire"}},
		{"wire text changed", "tool-call-turn", func(t *testing.T, s *Side) {
			editWire(s, func(l string) []string { return []string{strings.Replace(l, `"text":"DONE"`, `"text":"NOPE"`, 1)} })
		}, Different, []string{"wire text"}},
		{"identical program", "code-mode-program", func(*testing.T, *Side) {}, Equivalent, nil},
		{"program output changed", "code-mode-program", func(t *testing.T, s *Side) {
			edit(t, s, "tool/result", 0, setResultText("lines: 4"))
		}, Different, []string{"tool result"}},
		{"program call's output changed", "code-mode-program", func(t *testing.T, s *Side) {
			edit(t, s, "tool/code-dispatch", 1, func(d map[string]any) {
				d["content"] = []any{map[string]any{"type": "text", "text": "beta\n"}}
			})
		}, Different, []string{"program tool result"}},
		{"program call's outcome flipped", "code-mode-program", func(t *testing.T, s *Side) {
			edit(t, s, "tool/code-dispatch", 2, func(d map[string]any) { d["isError"] = false })
		}, Different, []string{"program tool result"}},
		{"program call's arguments changed", "code-mode-program", func(t *testing.T, s *Side) {
			edit(t, s, "tool/code-dispatch", 0, func(d map[string]any) { d["arguments"] = map[string]any{"file_path": "other.txt"} })
		}, Different, []string{"program tool calls"}},
		{"program call dropped", "code-mode-program", func(t *testing.T, s *Side) {
			// The program's second call never ran: its record is some
			// other (unknown) event, keeping the log's seqs.
			for i := range s.Logs[0].Events {
				if e := &s.Logs[0].Events[i]; e.Type == "tool/code-dispatch" && strings.Contains(string(e.Data), `"subCallId":"call_program:code:2"`) {
					e.Type = "x/not-a-dispatch"
				}
			}
		}, Different, []string{"program tool calls"}},
		{"no transcript", "tool-call-turn", func(t *testing.T, s *Side) { s.Wire = nil }, Partial, nil},
		{"result answers another call", "tool-call-turn", func(t *testing.T, s *Side) {
			edit(t, s, "tool/result", 0, func(d map[string]any) { resultPart(d)["toolCallId"] = "call_other" })
		}, Different, []string{"requests"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := fixture(t, c.fixture)
			got := clone(want)
			c.mutate(t, got)
			r := Compare(want, got, Options{})
			if v := r.Verdict(); v != c.verdict {
				t.Errorf("verdict %s, want %s\n%s", v, c.verdict, r)
			}
			for _, check := range c.checks {
				if !slices.ContainsFunc(r.Diffs, func(d Diff) bool { return d.Check == check }) {
					t.Errorf("no %q difference reported:\n%s", check, r)
				}
			}
			for _, l := range r.Lines() {
				if !strings.Contains(l, "want") && !strings.Contains(l, "got") {
					t.Errorf("a difference names neither side: %s", l)
				}
			}
		})
	}
}

func extractOrFatal(t *testing.T, s *Side) *facts {
	t.Helper()
	f, err := extract(s.Logs[0], s.Temp)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCompareSessions checks that a missing session log is a difference.
func TestCompareSessions(t *testing.T) {
	want := fixture(t, "tool-call-turn")
	got := clone(want)
	got.Logs = nil
	r := Compare(want, got, Options{})
	if r.Verdict() != Different || r.Diffs[0].Check != "sessions" {
		t.Errorf("a run without its log: %s\n%s", r.Verdict(), r)
	}
}

// TestEnvironmentLines drops a test environment's line from the expected
// side only.
func TestEnvironmentLines(t *testing.T) {
	notice := "runner: partial enforcement"
	want := fixture(t, "tool-call-turn")
	got := clone(want)
	edit(t, want, "tool/result", 0, setResultText("[stderr]\n"+notice+"\n"))
	edit(t, got, "tool/result", 0, setResultText("(no output)"))
	setWireResult(t, got, "(no output)")
	if r := Compare(want, got, Options{}); r.Verdict() != Different {
		t.Errorf("without the option the notice is content: %s\n%s", r.Verdict(), r)
	}
	if r := Compare(want, got, Options{EnvironmentLines: []string{notice}}); r.Verdict() != Equivalent {
		t.Errorf("with the option: %s\n%s", r.Verdict(), r)
	}
	// Only the expected side is forgiven.
	if r := Compare(got, want, Options{EnvironmentLines: []string{notice}}); r.Verdict() != Different {
		t.Errorf("the notice on the side under test: %s\n%s", r.Verdict(), r)
	}
}

// TestPathsNormalized: the same result written under two working
// directories is equivalent once each log's cwd is {{cwd}}.
func TestPathsNormalized(t *testing.T) {
	want := fixture(t, "tool-call-turn")
	got := clone(want)
	got.Logs[0].Header.Cwd = "/tmp/run-7/cwd"
	got.Temp = []string{"/tmp/run-7"}
	edit(t, want, "tool/result", 0, setResultText("{{cwd}}/a\n{{tmp}}/spill\n"))
	edit(t, got, "tool/result", 0, setResultText("/tmp/run-7/cwd/a\n/tmp/run-7/spill\n"))
	setWireResult(t, got, "/tmp/run-7/cwd/a\n/tmp/run-7/spill\n")
	if r := Compare(want, got, Options{}); r.Verdict() != Equivalent {
		t.Errorf("%s\n%s", r.Verdict(), r)
	}
}
