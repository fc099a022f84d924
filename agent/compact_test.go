package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// surfaceBuilder appends surface events to a log: prompts, assistant
// messages with tool calls, and results.
type surfaceBuilder struct {
	t   *testing.T
	log *sessionlog.Log
}

func newSurface(t *testing.T) *surfaceBuilder {
	return &surfaceBuilder{t: t, log: sessionlog.New(sessionlog.NewHeader("s", 1, "/w"))}
}

func (b *surfaceBuilder) add(typ string, p sessionlog.Payload, src []int) int {
	b.t.Helper()
	seq := b.log.Len()
	if err := b.log.Append(sessionlog.Event{Type: typ, Seq: seq, Data: p.AppendJSON(nil), SurfaceOp: sessionlog.AppendOp(), SourceEventSeqs: src}); err != nil {
		b.t.Fatal(err)
	}
	return seq
}

func (b *surfaceBuilder) prompt(text string) int {
	m := sessionlog.UserMessage{Content: []sessionlog.ContentPart{sessionlog.TextPart(text)}, Source: sessionlog.UserSource()}
	return b.add(sessionlog.TypeUserMessage, m, nil)
}

func (b *surfaceBuilder) calls(ids ...string) int {
	var parts []sessionlog.ContentPart
	for _, id := range ids {
		parts = append(parts, sessionlog.ToolCallPart(id, "bash", "{}"))
	}
	return b.add(sessionlog.TypeAssistantMessage, sessionlog.AssistantMessageData{Turn: 1, Step: 1, Message: sessionlog.AssistantMessage{Content: parts}}, []int{})
}

func (b *surfaceBuilder) result(id string, cite int, text string) int {
	return b.add(sessionlog.TypeToolResult, sessionlog.NewToolResult(1, 1, id, text, false, "r-"+id), []int{cite})
}

func (b *surfaceBuilder) answer(text string) int {
	return b.add(sessionlog.TypeAssistantMessage, sessionlog.AssistantMessageData{Turn: 1, Step: 2, Message: sessionlog.AssistantMessage{Content: []sessionlog.ContentPart{sessionlog.TextPart(text)}}}, []int{})
}

func TestRecentCutNeverSplitsToolPairs(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *surfaceBuilder)
		keep  int
		want  int // surface position of the cut
	}{
		{"keeps the last turn", func(b *surfaceBuilder) {
			b.prompt("one")
			b.answer("a")
			b.prompt("two")
			b.answer("b")
		}, 1, 2},
		{"keeps two turns", func(b *surfaceBuilder) {
			b.prompt("one")
			b.answer("a")
			b.prompt("two")
			b.answer("b")
			b.prompt("three")
		}, 2, 2},
		{"a prompt answered while calls are open moves the cut before the calls", func(b *surfaceBuilder) {
			b.prompt("one")
			a := b.calls("x", "y")
			b.result("x", a, "1")
			b.prompt("interjection") // a user message between results
			b.result("y", a, "2")
			b.answer("done")
		}, 1, 1},
		{"parallel calls settled before the last turn", func(b *surfaceBuilder) {
			b.prompt("one")
			a := b.calls("x", "y")
			b.result("x", a, "1")
			b.result("y", a, "2")
			b.answer("done")
			b.prompt("two")
		}, 1, 5},
		{"too few turns", func(b *surfaceBuilder) {
			b.prompt("one")
			b.answer("a")
		}, 2, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newSurface(t)
			c.build(b)
			seqs := b.log.Surface().Seqs()
			got := recentCut(b.log, seqs, c.keep)
			if got != c.want {
				t.Fatalf("cut %d, want %d (balance %v)", got, c.want, b.log.PairingBalance())
			}
			if bal := b.log.PairingBalance(); bal[got] != 0 {
				t.Fatalf("cut %d separates a call from its result (balance %v)", got, bal)
			}
		})
	}
}

func TestChainPreStepsKeepsSeriesDeclarations(t *testing.T) {
	declare := func(context.Context, StepInfo) (PreStepResult, error) { return PreStepResult{NewSeries: true}, nil }
	quiet := func(context.Context, StepInfo) (PreStepResult, error) { return PreStepResult{}, nil }
	boom := errors.New("boom")
	failing := func(context.Context, StepInfo) (PreStepResult, error) { return PreStepResult{}, boom }
	cases := []struct {
		name   string
		hooks  []PreStep
		series bool
		err    error
	}{
		{"none", nil, false, nil},
		{"inner declares", []PreStep{quiet, declare, quiet}, true, nil},
		{"wrapped twice", []PreStep{ChainPreSteps(quiet, ChainPreSteps(declare)), quiet}, true, nil},
		{"nil hooks are skipped", []PreStep{nil, quiet}, false, nil},
		{"declaration survives a later failure", []PreStep{declare, failing}, true, boom},
	}
	for _, c := range cases {
		r, err := ChainPreSteps(c.hooks...)(context.Background(), StepInfo{})
		if r.NewSeries != c.series || !errors.Is(err, c.err) {
			t.Errorf("%s: got %+v, %v; want series %v, err %v", c.name, r, err, c.series, c.err)
		}
	}
}

func TestTrimmedDataKeepsEverythingButContent(t *testing.T) {
	b := newSurface(t)
	b.prompt("go")
	a := b.calls("x")
	big := strings.Repeat("line\n", 3000)
	r := b.result("x", a, big)
	e := b.log.Event(r)
	trimmed, err := trimmedData(e)
	if err != nil {
		t.Fatal(err)
	}
	data := trimmed.AppendJSON(nil)
	// The log accepts it as a single-entry replacement (which requires every
	// data field but content to be unchanged) …
	if err := b.log.Append(sessionlog.Event{Type: sessionlog.TypeToolResult, Seq: b.log.Len(), Data: data, SurfaceOp: sessionlog.ReplaceOp(r, r), SourceEventSeqs: []int{r}}); err != nil {
		t.Fatalf("trim rejected: %v", err)
	}
	// … and the content is the note, not the output.
	if strings.Contains(string(data), "line\\n") || !strings.Contains(string(data), fmt.Sprintf("seq %d", r)) {
		t.Fatalf("trimmed data: %s", data)
	}
	var d map[string]json.RawMessage
	_ = json.Unmarshal(data, &d)
	if string(d["turn"]) != "1" || string(d["step"]) != "1" {
		t.Fatalf("fields lost: %s", data)
	}
}

func BenchmarkRecentCut100k(b *testing.B) {
	for _, n := range []int{50000, 100000} {
		b.Run(fmt.Sprintf("surface=%d", n), func(b *testing.B) {
			sb := newSurface(&testing.T{})
			for sb.log.Surface().Len() < n {
				sb.prompt("q")
				a := sb.calls("c")
				sb.result("c", a, "out")
				sb.answer("a")
			}
			seqs := sb.log.Surface().Seqs()
			sb.log.PairingBalance() // the cache is built incrementally by the live log
			b.ResetTimer()
			for b.Loop() {
				recentCut(sb.log, seqs, 1)
			}
		})
	}
}
