package agent_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// callsEntry is one model response asking for several tool calls.
func callsEntry(calls ...[3]string) replay.Entry {
	var ch []llm.Chunk
	for i, c := range calls {
		ch = append(ch,
			llm.Chunk{Type: llm.ChunkBlockStart, Index: i, BlockType: llm.BlockToolCall},
			llm.Chunk{Type: llm.ChunkToolCallDelta, Index: i, ID: c[0], Name: c[1], ArgumentsDelta: c[2]},
			llm.Chunk{Type: llm.ChunkBlockEnd, Index: i, Block: &llm.Block{Type: llm.BlockToolCall, ID: c[0], Name: c[1], Arguments: c[2]}})
	}
	ch = append(ch, llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishToolCalls}})
	return replay.Entry{Kind: replay.KindChunks, Chunks: ch}
}

const kettle = `{"todos": [{"content": "watch the kettle boil", "status": "in_progress"}]}`

// TestRepeatReminderCorpus replays the corpus scenario
// repeat-tool-reminder (five identical todo_write calls) and holds the two
// reminders reel enters to the recorded ones, byte for byte, at the same
// places: the gentle one at the start of step 4, after the third call, the
// detailed one at the start of step 6, after the fifth.
func TestRepeatReminderCorpus(t *testing.T) {
	dir := corpustest.Dir(t)
	rec := corpusMessages(t, filepath.Join(dir, "repeat-tool-reminder", "session.jsonl"))
	var script []replay.Entry
	for i := 1; i <= 5; i++ {
		script = append(script, toolEntry(fmt.Sprintf("call_%d", i), "todo_write", kettle))
	}
	te := newTestEngine(t, nil, append(script, textEntry("DONE."))...)
	s, err := te.NewSession(t.Context(), te.dir)
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, s, "Write the todo list 'watch the kettle boil' five times in a row without changing it, then reply DONE.")
	got := injected(t, te.events(t, s))
	if len(got) != 2 {
		t.Fatalf("%d reminders, want 2", len(got))
	}
	for i, want := range []struct{ seq, step int }{{44, 4}, {69, 6}} {
		r := rec[want.seq]
		if !reflect.DeepEqual(got[i].msg.Content, r.Content) || sourceJSON(got[i].msg) != sourceJSON(r) {
			t.Errorf("reminder %d:\n%q %s\nwant the recording's\n%q %s", i, text(got[i].msg), sourceJSON(got[i].msg), text(r), sourceJSON(r))
		}
		if got[i].step != want.step || got[i].after != "step/start" {
			t.Errorf("reminder %d at step %d after %s, want first in step %d", i, got[i].step, got[i].after, want.step)
		}
	}
}

// TestRepeatReminderChain holds the chain to the reference's rules: the
// key is the tool name and the canonical arguments (key order and spacing
// do not matter), another call starts a new run, every call counts (a
// failing one too, and calls of one response in order), a user prompt
// starts a new chain, reminders come at 3 (gentle), 5 and 8 (detailed)
// and never past the last.
func TestRepeatReminderChain(t *testing.T) {
	a := [3]string{"", "bash", `{"command":"echo a","description":"x"}`}
	aReordered := [3]string{"", "bash", `{ "description": "x", "command": "echo a" }`}
	b := [3]string{"", "bash", `{"command":"echo b"}`}
	missing := [3]string{"", "read", `{"file_path":"missing.txt"}`}
	call := func(c [3]string, id int) replay.Entry {
		return toolEntry(fmt.Sprintf("c%d", id), c[1], c[2])
	}
	type turn []replay.Entry
	cases := []struct {
		name  string
		turns []turn
		// want is each reminder as "turn.step:summary".
		want []string
	}{
		{"three in a row", []turn{{call(a, 1), call(a, 2), call(a, 3), textEntry("ok")}}, []string{"1.4:bash × 3"}},
		{"key order does not matter", []turn{{call(a, 1), call(aReordered, 2), call(a, 3), textEntry("ok")}}, []string{"1.4:bash × 3"}},
		{"another call starts a new run", []turn{{call(a, 1), call(a, 2), call(b, 3), call(a, 4), call(a, 5), textEntry("ok")}}, nil},
		{"failing calls count", []turn{{call(missing, 1), call(missing, 2), call(missing, 3), textEntry("ok")}}, []string{"1.4:read × 3"}},
		{"calls of one response", []turn{{callsEntry([3]string{"p1", a[1], a[2]}, [3]string{"p2", a[1], a[2]}, [3]string{"p3", a[1], a[2]}), textEntry("ok")}}, []string{"1.2:bash × 3"}},
		{"a prompt starts a new chain", []turn{{call(a, 1), call(a, 2), textEntry("ok")}, {call(a, 3), textEntry("ok")}}, nil},
		{"3, 5, 8 and no further", []turn{{call(a, 1), call(a, 2), call(a, 3), call(a, 4), call(a, 5), call(a, 6), call(a, 7), call(a, 8), call(a, 9), call(a, 10), textEntry("ok")}},
			[]string{"1.4:bash × 3", "1.6:bash × 5", "1.9:bash × 8"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var script []replay.Entry
			for _, tr := range tc.turns {
				script = append(script, tr...)
			}
			te := newTestEngine(t, nil, script...)
			s, err := te.NewSession(t.Context(), te.dir)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.turns {
				prompt(t, s, fmt.Sprintf("turn %d", i+1))
			}
			var got []string
			for _, m := range injected(t, te.events(t, s)) {
				var src struct{ Summary string }
				if err := json.Unmarshal(m.msg.Source.AppendJSON(nil), &src); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%d.%d:%s", m.turn, m.step, src.Summary))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("reminders %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRepeatReminderPreview: the detailed reminder quotes the canonical
// arguments, cut at 500 characters with the count of the rest.
func TestRepeatReminderPreview(t *testing.T) {
	long := strings.Repeat("z", 600)
	args := `{"command":"` + long + `"}`
	var script []replay.Entry
	for i := range 5 {
		script = append(script, toolEntry(fmt.Sprintf("c%d", i), "bash", args))
	}
	te := newTestEngine(t, nil, append(script, textEntry("ok"))...)
	s, err := te.NewSession(t.Context(), te.dir)
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, s, "go")
	got := injected(t, te.events(t, s))
	if len(got) != 2 {
		t.Fatalf("%d reminders", len(got))
	}
	canonical := `{"command":"` + long + `"}`
	want := "Repeated tool call detected:\n- tool: bash\n- consecutive_calls: 5\n- arguments: " + canonical[:500] +
		fmt.Sprintf("… (+%d more chars)", len(canonical)-500) +
		"\nThe repeated calls are not making progress. Do not call this tool with these exact arguments again. " +
		"Inspect the latest result and choose a different action, different arguments, or finish the task if enough evidence has been gathered."
	if text(got[1].msg) != want {
		t.Errorf("detailed reminder\n%q\nwant\n%q", text(got[1].msg), want)
	}
}

// TestRepeatReminderConfig: reminders can be turned off, thresholds set,
// and a bad threshold list is refused when the engine is made.
func TestRepeatReminderConfig(t *testing.T) {
	script := func() []replay.Entry {
		var s []replay.Entry
		for i := range 3 {
			s = append(s, toolEntry(fmt.Sprintf("c%d", i), "bash", `{"command":"true"}`))
		}
		return append(s, textEntry("ok"))
	}
	for _, tc := range []struct {
		name string
		mut  func(*agent.Config)
		want int
	}{
		{"off", func(c *agent.Config) { c.DisableRepeatReminders = true }, 0},
		{"at 2", func(c *agent.Config) { c.RepeatThresholds = []int{2} }, 1},
		{"at 2 and 3", func(c *agent.Config) { c.RepeatThresholds = []int{3, 2} }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEngine(t, tc.mut, script()...)
			s, err := te.NewSession(t.Context(), te.dir)
			if err != nil {
				t.Fatal(err)
			}
			prompt(t, s, "go")
			if got := injected(t, te.events(t, s)); len(got) != tc.want {
				t.Errorf("%d reminders, want %d", len(got), tc.want)
			}
		})
	}
	store, err := jsonl.Open(t.TempDir(), jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, bad := range [][]int{{}, {1}, {3, 3}, {0, 5}} {
		cfg := agent.Config{Store: store, Models: agent.SharedModels{}, RepeatThresholds: bad}
		if _, err := agent.New(cfg); err == nil || !strings.Contains(strings.ToLower(err.Error()), "threshold") {
			t.Errorf("RepeatThresholds %v: %v, want a threshold error", bad, err)
		}
	}
}
