package sessionlog_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// builder appends well-formed events with consecutive seqs.
type builder struct {
	t   *testing.T
	log *sessionlog.Log
}

func newBuilder(t *testing.T) *builder {
	return &builder{t: t, log: sessionlog.New(sessionlog.NewHeader("s1", 1000, "/w"))}
}

func (b *builder) add(typ, data string, op *sessionlog.SurfaceOp, src ...int) int {
	b.t.Helper()
	seq := b.log.Len()
	var sources []int
	if src != nil {
		sources = src
	}
	if typ == sessionlog.TypeAssistantMessage && sources == nil {
		sources = []int{}
	}
	if err := b.log.Append(sessionlog.Event{Type: typ, Seq: seq, Time: int64(2000 + seq), Data: json.RawMessage(data), SurfaceOp: op, SourceEventSeqs: sources}); err != nil {
		b.t.Fatalf("append %s: %v", typ, err)
	}
	return seq
}

func userMsg(text string) string {
	return fmt.Sprintf(`{"content":[{"type":"text","text":%q}],"source":{"kind":"user"},"role":"user","id":"u-%s"}`, text, text)
}

func assistantMsg(turn, step int, parts ...string) string {
	return fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"role":"assistant","content":[%s],"id":"a"}}`, turn, step, strings.Join(parts, ","))
}

func toolCallPart(id string) string {
	return fmt.Sprintf(`{"type":"tool-call","id":%q,"name":"bash","arguments":"{}"}`, id)
}

func toolResult(turn, step int, id, text string) string {
	return fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"source":{"kind":"tool","callId":%q},"content":[{"type":"tool-result","toolCallId":%q,"content":[{"type":"text","text":%q}],"isError":false}],"role":"user","id":"r-%s"}}`, turn, step, id, id, text, id)
}

func header(system string) string {
	return fmt.Sprintf(`{"header":{"config":{"provider":"p","model":"m"},"system":%q},"reason":"initial"}`, system)
}

// conversation builds: turn with a user message, an assistant tool call,
// its tool result and a final answer.
func conversation(t *testing.T) *builder {
	b := newBuilder(t)
	ap := sessionlog.AppendOp()
	b.add("turn/start", `{"turn":1}`, nil)
	b.add("step/start", `{"turn":1,"step":1}`, nil)
	b.add("user/message", userMsg("hi"), ap)
	b.add("request/header", header("sys"), nil)
	b.add("request/context", `{"provider":"p","model":"m"}`, nil)
	c := b.add("assistant/chunk", `{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"tool-calls"}}}`, nil)
	b.add("assistant/message", assistantMsg(1, 1, toolCallPart("c1")), ap, c)
	call := b.add("tool/call", `{"turn":1,"step":1,"callId":"c1","name":"bash","arguments":"{}"}`, nil)
	b.add("tool/result", toolResult(1, 1, "c1", "out"), ap, call)
	b.add("step/end", `{"turn":1,"step":1}`, nil)
	b.add("step/start", `{"turn":1,"step":2}`, nil)
	b.add("request/context", `{"provider":"p","model":"m"}`, nil)
	c2 := b.add("assistant/chunk", `{"turn":1,"step":2,"chunk":{"type":"finish","reason":{"kind":"stop"}}}`, nil)
	b.add("assistant/message", assistantMsg(1, 2, `{"type":"text","text":"done"}`), ap, c2)
	b.add("step/end", `{"turn":1,"step":2}`, nil)
	b.add("turn/end", `{"turn":1,"reason":{"kind":"completed"}}`, nil)
	return b
}

func TestSurfaceAppendAndReplace(t *testing.T) {
	b := conversation(t)
	if got, want := b.log.Surface().Seqs(), []int{2, 6, 8, 13}; !reflect.DeepEqual(got, want) {
		t.Fatalf("surface %v, want %v", got, want)
	}
	gen := b.log.Surface().Gen()
	msgs := b.log.Messages()
	if len(msgs) != 4 {
		t.Fatalf("messages: %d", len(msgs))
	}
	// Compaction: replace 2…8 with a summary citing every shadowed seq.
	sum := b.add("user/message", userMsg("summary"), sessionlog.ReplaceOp(2, 8), 2, 6, 8)
	if got, want := b.log.Surface().Seqs(), []int{sum, 13}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after replace %v, want %v", got, want)
	}
	if b.log.Surface().Gen() == gen {
		t.Fatal("replace generation did not move")
	}
	msgs = b.log.Messages()
	if len(msgs) != 2 || !strings.Contains(string(msgs[0]), "summary") {
		t.Fatalf("messages after replace: %s", msgs)
	}
	f, err := sessionlog.FoldSurface(b.log.Events())
	if err != nil {
		t.Fatal(err)
	}
	want := sessionlog.Fold{Seqs: []int{sum, 13}, Replacements: []sessionlog.Replacement{{Seq: sum, Start: 2, End: 8, Shadowed: []int{2, 6, 8}}}}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("fold %+v, want %+v", f, want)
	}
}

func TestReplaceRules(t *testing.T) {
	cases := []struct {
		name string
		typ  string
		data string
		op   *sessionlog.SurfaceOp
		src  []int
		want string
	}{
		{"start not on surface", "user/message", userMsg("s"), sessionlog.ReplaceOp(3, 8), []int{3, 8}, "replace start 3 is not on the surface"},
		{"end before start", "user/message", userMsg("s"), sessionlog.ReplaceOp(8, 2), []int{2, 8}, "replace start 8 comes after end 2"},
		{"sources miss a shadowed seq", "user/message", userMsg("s"), sessionlog.ReplaceOp(2, 8), []int{2, 8}, "replace shadows seq 6 but sourceEventSeqs does not cite it"},
		{"single tool result by other type", "user/message", userMsg("s"), sessionlog.ReplaceOp(8, 8), []int{8}, "may only be replaced by a tool/result"},
		{"single tool result changes a field", "tool/result", toolResult(1, 2, "c1", "trimmed"), sessionlog.ReplaceOp(8, 8), []int{8}, "must keep every data field of seq 8 except content"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := conversation(t)
			err := b.log.Append(sessionlog.Event{Type: c.typ, Seq: b.log.Len(), Time: 1, Data: json.RawMessage(c.data), SurfaceOp: c.op, SourceEventSeqs: c.src})
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, sessionlog.ErrInvalid) {
				t.Fatalf("got %v, want error containing %q", err, c.want)
			}
		})
	}
	t.Run("trim keeps all but content", func(t *testing.T) {
		b := conversation(t)
		b.add("tool/result", toolResult(1, 1, "c1", "[trimmed]"), sessionlog.ReplaceOp(8, 8), 8)
		if got := b.log.Surface().Seqs(); !reflect.DeepEqual(got, []int{2, 6, 16, 13}) {
			t.Fatalf("surface %v", got)
		}
	})
}

func TestOwedHeader(t *testing.T) {
	h := sessionlog.RequestHeader{Config: json.RawMessage(`{"provider":"p","model":"m"}`), System: "a"}
	changed := h
	changed.System = "b"
	cases := []struct {
		name          string
		latest        *sessionlog.RequestHeader
		assembled     sessionlog.RequestHeader
		first, series bool
		want          string
	}{
		{"no snapshot yet", nil, h, true, false, sessionlog.ReasonInitial},
		{"no snapshot, later step", nil, h, false, false, sessionlog.ReasonInitial},
		{"new loop instance, unchanged", &h, h, true, false, sessionlog.ReasonResume},
		{"new instance, changed", &h, changed, true, false, sessionlog.ReasonResume},
		{"changed inside instance", &h, changed, false, false, sessionlog.ReasonChange},
		{"changed and new series", &h, changed, false, true, sessionlog.ReasonChange},
		{"unchanged new series", &h, h, false, true, sessionlog.ReasonSeries},
		{"unchanged", &h, h, false, false, ""},
	}
	for _, c := range cases {
		if got := sessionlog.OwedHeader(c.latest, c.assembled, c.first, c.series); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCanonicalHeader(t *testing.T) {
	h := sessionlog.RequestHeader{Config: json.RawMessage(`{ "provider": "p" }`), Tools: json.RawMessage(`[]`)}
	if got, want := string(h.Canonical()), `{"config":{"provider":"p"}}`; got != want {
		t.Fatalf("canonical %s, want %s", got, want)
	}
	h.System = "x<y>"
	h.Tools = json.RawMessage(`[{"name":"bash"}]`)
	if got, want := string(h.Canonical()), `{"config":{"provider":"p"},"system":"x<y>","tools":[{"name":"bash"}]}`; got != want {
		t.Fatalf("canonical %s, want %s", got, want)
	}
	if !h.Equal(sessionlog.RequestHeader{Config: json.RawMessage(`{"provider":"p"}`), System: "x<y>", Tools: json.RawMessage(`[ {"name":"bash"} ]`)}) {
		t.Fatal("equal headers compare unequal")
	}
}

func TestReconstruct(t *testing.T) {
	b := conversation(t)
	l := b.log
	all, err := sessionlog.ReconstructAll(l.Header(), l.Events())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("requests: %d", len(all))
	}
	r, err := sessionlog.Reconstruct(l.Header(), l.Events(), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Messages) != 3 || !strings.Contains(string(r.Header), `"system":"sys"`) {
		t.Fatalf("step 2 request: %s / %d messages", r.Header, len(r.Messages))
	}
	if _, err := sessionlog.Reconstruct(l.Header(), l.Events(), 1, 3); !errors.Is(err, sessionlog.ErrNotFound) {
		t.Fatalf("missing step: %v", err)
	}
	// The invariant accepts the true request and rejects a different one.
	prefix := l.Events()[:11]
	want, _ := sessionlog.Reconstruct(l.Header(), l.Events(), 1, 2)
	if err := sessionlog.CheckRequest(l.Header(), prefix, want); err != nil {
		t.Fatalf("invariant on the true request: %v", err)
	}
	bad := want
	bad.Messages = bad.Messages[:2]
	if err := sessionlog.CheckRequest(l.Header(), prefix, bad); err == nil {
		t.Fatal("invariant accepted a request missing a message")
	}
}

func TestRepair(t *testing.T) {
	b := newBuilder(t)
	ap := sessionlog.AppendOp()
	b.add("turn/start", `{"turn":1}`, nil)
	b.add("step/start", `{"turn":1,"step":1}`, nil)
	b.add("user/message", userMsg("hi"), ap)
	c := b.add("assistant/chunk", `{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"tool-calls"}}}`, nil)
	am := b.add("assistant/message", assistantMsg(1, 1, toolCallPart("c1"), toolCallPart("c2")), ap, c)
	call := b.add("tool/call", `{"turn":1,"step":1,"callId":"c1","name":"bash","arguments":"{}"}`, nil)
	closers := sessionlog.Repair(b.log.Events())
	var types []string
	for _, e := range closers {
		types = append(types, e.Type)
		if err := b.log.Append(e); err != nil {
			t.Fatalf("closer %s does not validate: %v", e.Type, err)
		}
	}
	if want := []string{"tool/result", "tool/result", "step/end", "turn/end"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("closers %v, want %v", types, want)
	}
	if !reflect.DeepEqual(closers[0].SourceEventSeqs, []int{call}) || !reflect.DeepEqual(closers[1].SourceEventSeqs, []int{am}) {
		t.Fatalf("closer citations %v %v", closers[0].SourceEventSeqs, closers[1].SourceEventSeqs)
	}
	if !strings.Contains(string(closers[3].Data), `"interrupted"`) {
		t.Fatalf("turn end %s", closers[3].Data)
	}
	if again := sessionlog.Repair(b.log.Events()); again != nil {
		t.Fatalf("repair of a repaired log: %v", again)
	}
	if c := sessionlog.Repair(conversation(t).log.Events()); c != nil {
		t.Fatalf("repair of a balanced log: %v", c)
	}
}

func TestPairingBalance(t *testing.T) {
	b := newBuilder(t)
	ap := sessionlog.AppendOp()
	b.add("user/message", userMsg("a"), ap)
	b.add("assistant/message", assistantMsg(1, 1, toolCallPart("x"), toolCallPart("y")), ap)
	b.add("tool/call", `{"turn":1,"step":1,"callId":"x","name":"bash","arguments":"{}"}`, nil)
	b.add("tool/result", toolResult(1, 1, "x", "1"), ap, 2)
	if got, want := b.log.PairingBalance(), []int{0, 0, 2, 1}; !reflect.DeepEqual(got, want) {
		t.Fatalf("balance %v, want %v", got, want)
	}
	b.add("tool/call", `{"turn":1,"step":1,"callId":"y","name":"bash","arguments":"{}"}`, nil)
	b.add("tool/result", toolResult(1, 1, "y", "2"), ap, 4)
	b.add("user/message", userMsg("b"), ap)
	if got, want := b.log.PairingBalance(), []int{0, 0, 2, 1, 0, 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("balance %v, want %v", got, want)
	}
}

func TestLegacyRefused(t *testing.T) {
	for _, c := range []struct{ typ, data string }{
		{"request/header-delta", `{"system":{"op":"keep"}}`},
		{"request/header", `{"header":{"config":{}},"reason":"fallback"}`},
	} {
		b := newBuilder(t)
		b.add("turn/start", `{"turn":1}`, nil)
		err := b.log.Append(sessionlog.Event{Type: c.typ, Seq: 1, Time: 1, Data: json.RawMessage(c.data)})
		if !errors.Is(err, sessionlog.ErrLegacy) || !strings.Contains(err.Error(), "seq 1 ("+c.typ+")") {
			t.Fatalf("%s: got %v", c.typ, err)
		}
	}
}

func ExampleOwedHeader() {
	h := sessionlog.RequestHeader{Config: json.RawMessage(`{"provider":"deepseek","model":"deepseek-chat"}`), System: "mode: workspace-write"}
	switched := h
	switched.System = "mode: read-only"
	fmt.Println(sessionlog.OwedHeader(nil, h, true, false))
	fmt.Println(sessionlog.OwedHeader(&h, h, false, false) == "")
	fmt.Println(sessionlog.OwedHeader(&h, switched, false, false))
	// Output:
	// initial
	// true
	// change
}
