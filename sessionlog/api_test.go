package sessionlog_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

func TestRecordErrorFormats(t *testing.T) {
	inner := sessionlog.ErrCorrupt
	for _, tc := range []struct {
		e    sessionlog.RecordError
		want string
	}{
		{sessionlog.RecordError{File: "a.jsonl", Line: 3, Err: inner}, "a.jsonl:3: sessionlog: corrupt log"},
		{sessionlog.RecordError{File: "a.jsonl", Err: inner}, "a.jsonl: sessionlog: corrupt log"},
		{sessionlog.RecordError{Line: 3, Err: inner}, "line 3: sessionlog: corrupt log"},
		{sessionlog.RecordError{Err: inner}, "sessionlog: corrupt log"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if !errors.Is(&tc.e, sessionlog.ErrCorrupt) {
			t.Errorf("%q does not unwrap to ErrCorrupt", tc.want)
		}
	}
}

func TestEventEncoding(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    sessionlog.Event
		want string
	}{
		{"minimal", sessionlog.Event{Type: "x/y", Seq: 3, Time: 9}, `{"type":"x/y","seq":3,"time":9}`},
		{"append", sessionlog.Event{Type: "user/message", Seq: 1, Time: 2, Data: json.RawMessage(`{}`), SurfaceOp: sessionlog.AppendOp()},
			`{"type":"user/message","seq":1,"time":2,"data":{},"surfaceOp":"append"}`},
		{"replace", sessionlog.Event{Type: "user/message", Seq: 5, Time: 2, Data: json.RawMessage(`{}`), SourceEventSeqs: []int{1, 2}, SurfaceOp: sessionlog.ReplaceOp(1, 2)},
			`{"type":"user/message","seq":5,"time":2,"data":{},"sourceEventSeqs":[1,2],"surfaceOp":{"op":"replace","start":1,"end":2}}`},
		{"empty sources", sessionlog.Event{Type: "assistant/message", Seq: 1, Time: 2, SourceEventSeqs: []int{}},
			`{"type":"assistant/message","seq":1,"time":2,"sourceEventSeqs":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.e)
			if err != nil || string(b) != tc.want {
				t.Fatalf("Marshal = %s, %v; want %s", b, err, tc.want)
			}
			back, err := sessionlog.DecodeEvent(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(back.AppendJSON(nil)); got != tc.want {
				t.Fatalf("decode → encode = %s", got)
			}
		})
	}
}

func TestDecodeEventEnvelope(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{`{"type":"a","seq":0,"time":1} {}`, "sessionlog: invalid event: trailing data after the record"},
		{`{"seq":0,"time":1}`, "sessionlog: invalid event: record has no type"},
		{`{"type":"a","time":1}`, "sessionlog: invalid event: a record has no seq"},
		{`{"type":"a","seq":0}`, "sessionlog: invalid event: seq 0 (a) has no time"},
		{`{"type":"a","seq":0,"time":1,"data":{"x":[1,}}`, "sessionlog: invalid event: invalid character '}' looking for beginning of value"},
		{`{"type":"a","seq":0,"time":1,"surfaceOp":{"op":"replace","start":1}}`, `sessionlog: invalid event: seq 0 (a): surfaceOp {"op":"replace","start":1} is neither "append" nor {"op":"replace","start":S,"end":E}`},
	} {
		_, err := sessionlog.DecodeEvent([]byte(tc.in))
		if err == nil || err.Error() != tc.want || !errors.Is(err, sessionlog.ErrInvalid) {
			t.Errorf("DecodeEvent(%s) = %v, want %q", tc.in, err, tc.want)
		}
	}
	// Insignificant whitespace in data is compacted; null sources are absent.
	e, err := sessionlog.DecodeEvent([]byte(`{"type":"a","seq":0,"time":1,"data":{ "x" : [1, 2] , "s":"a b"},"sourceEventSeqs":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(e.Data) != `{"x":[1,2],"s":"a b"}` || e.SourceEventSeqs != nil {
		t.Fatalf("decoded %s", e.AppendJSON(nil))
	}
	e, err = sessionlog.DecodeEvent([]byte(`{"type":"a","seq":0,"time":1,"data":{"s":"q\"\\"},"sourceEventSeqs":[]}`))
	if err != nil || e.SourceEventSeqs == nil || len(e.SourceEventSeqs) != 0 {
		t.Fatalf("explicit empty sources: %v %v", e.SourceEventSeqs, err)
	}
}

func TestDecodeHeader(t *testing.T) {
	h, err := sessionlog.DecodeHeader([]byte(`{ "type": "session", "version": 0, "id": "x", "createdAt": 5, "cwd": "/w", "extra": [1, 2] }`))
	if err != nil {
		t.Fatal(err)
	}
	if string(h.Raw) != `{"type":"session","version":0,"id":"x","createdAt":5,"cwd":"/w","extra":[1,2]}` || h.Cwd != "/w" || h.CreatedAt != 5 {
		t.Fatalf("header %+v raw %s", h, h.Raw)
	}
	if _, err := sessionlog.DecodeHeader([]byte(`{"type":"session","version":0,"id":"x","createdAt":-1}`)); !errors.Is(err, sessionlog.ErrHeader) {
		t.Fatalf("negative createdAt: %v", err)
	}
	n := sessionlog.NewHeader("id\"<>", 7, "")
	if string(n.Raw) != `{"type":"session","version":0,"id":"id\"<>","createdAt":7}` {
		t.Fatalf("NewHeader raw %s", n.Raw)
	}
}

func TestAppendString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":             `"plain"`,
		"q\"b\\":            `"q\"b\\"`,
		"\n\r\t\b\f":        `"\n\r\t\b\f"`,
		"\x01\x1f":          `"\u0001\u001f"`,
		"<&>\u2028\u2029é":  "\"<&>\u2028\u2029é\"",
		"bad\xffutf8\xc3":   "\"bad\ufffdutf8\ufffd\"",
		"emoji \U0001F600!": "\"emoji \U0001F600!\"",
	} {
		if got := string(sessionlog.AppendString(nil, in)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
		// It is always valid JSON for the same (UTF-8-repaired) string.
		var back string
		if err := json.Unmarshal(sessionlog.AppendString(nil, in), &back); err != nil {
			t.Errorf("AppendString(%q) is not JSON: %v", in, err)
		}
	}
}

func TestMessageHelpers(t *testing.T) {
	m, err := sessionlog.ParseMessage(json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool-call","id":"c"},{"type":"text","text":"b"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Text() != "ab" || strings.Join(m.ToolCallIDs(), ",") != "c" {
		t.Fatalf("Text %q ToolCallIDs %v", m.Text(), m.ToolCallIDs())
	}
	if _, err := sessionlog.ParseMessage(json.RawMessage(`[`)); err == nil {
		t.Fatal("ParseMessage accepted invalid JSON")
	}
	if _, err := sessionlog.ProjectMessage(&sessionlog.Event{Type: "tool/call", Data: json.RawMessage(`{}`)}); !errors.Is(err, sessionlog.ErrInvalid) {
		t.Fatalf("ProjectMessage of a tool/call: %v", err)
	}
	if _, err := sessionlog.ParseRequestHeader(json.RawMessage(`[]`)); err == nil {
		t.Fatal("ParseRequestHeader accepted an array")
	}
	d := sessionlog.HeaderData(sessionlog.RequestHeader{Config: json.RawMessage(" { \"m\" : 1 } "), Tools: json.RawMessage(" [ ] ")}, sessionlog.ReasonChange)
	if string(d) != `{"header":{"config":{"m":1}},"reason":"change"}` {
		t.Fatalf("HeaderData = %s", d)
	}
	d = sessionlog.HeaderData(sessionlog.RequestHeader{Config: json.RawMessage("{bad"), Tools: json.RawMessage(`[{"n":1}]`)}, sessionlog.ReasonSeries)
	if string(d) != `{"header":{"config":{bad,"tools":[{"n":1}]},"reason":"series"}` {
		t.Fatalf("HeaderData with invalid config = %s", d)
	}
}

func TestLogAccessors(t *testing.T) {
	b := conversation(t)
	l := b.log
	if l.Event(-1) != nil || l.Event(l.Len()) != nil || l.Event(2).Type != sessionlog.TypeUserMessage {
		t.Fatal("Event bounds")
	}
	if l.Surface().Len() != len(l.Surface().Seqs()) || l.Surface().Len() != 4 {
		t.Fatalf("surface %v", l.Surface().Seqs())
	}
	req := l.CurrentRequest()
	if len(req.Messages) != 4 || !strings.Contains(string(req.Header), `"system":"sys"`) {
		t.Fatalf("CurrentRequest = %+v", req)
	}
	if err := sessionlog.CheckRequest(l.Header(), l.Events(), req); err != nil {
		t.Fatalf("CheckRequest of the live request: %v", err)
	}
	req.Messages = req.Messages[:3]
	if err := sessionlog.CheckRequest(l.Header(), l.Events(), req); err == nil {
		t.Fatal("CheckRequest accepted a different request")
	}
	bad := append([]sessionlog.Event{}, l.Events()...)
	bad[1].Seq = 7
	if err := sessionlog.CheckRequest(l.Header(), bad, req); err == nil {
		t.Fatal("CheckRequest accepted an invalid prefix")
	}
}

// fakeWriter records what reaches the storage layer.
type fakeWriter struct {
	appended []sessionlog.Event
	syncs    int
	closed   bool
	fail     error
}

func (w *fakeWriter) Append(_ context.Context, events ...sessionlog.Event) error {
	if w.fail != nil {
		return w.fail
	}
	w.appended = append(w.appended, events...)
	return nil
}
func (w *fakeWriter) Sync(context.Context) error { w.syncs++; return nil }
func (w *fakeWriter) Close() error               { w.closed = true; return nil }

func TestSessionWritesOnlyValidEvents(t *testing.T) {
	ctx := context.Background()
	h := sessionlog.NewHeader("s", 1, "")
	good := []sessionlog.Event{
		{Type: sessionlog.TypeTurnStart, Seq: 0, Time: 1, Data: json.RawMessage(`{"turn":1}`)},
		{Type: sessionlog.TypeStepStart, Seq: 1, Time: 1, Data: json.RawMessage(`{"turn":1,"step":1}`)},
	}
	delta := sessionlog.Event{Type: sessionlog.TypeLegacyHeaderDelta, Seq: 2, Time: 1, Data: json.RawMessage(`{}`)}

	w := &fakeWriter{}
	s := sessionlog.NewSession(sessionlog.New(h), w)
	err := s.Append(ctx, append(good, delta)...)
	if !errors.Is(err, sessionlog.ErrLegacy) {
		t.Fatalf("Append with a delta: %v", err)
	}
	if len(w.appended) != 2 || s.Log().Len() != 2 {
		t.Fatalf("valid prefix not written: writer %d, log %d", len(w.appended), s.Log().Len())
	}
	if err := s.Append(ctx, delta); !errors.Is(err, sessionlog.ErrLegacy) || len(w.appended) != 2 {
		t.Fatalf("a lone invalid event reached the writer: %v", err)
	}
	if err := s.Checkpoint(ctx); err != nil || w.syncs != 1 {
		t.Fatal("Checkpoint did not sync")
	}
	if err := s.Close(); err != nil || !w.closed {
		t.Fatal("Close did not close the writer")
	}

	// A writer failure is joined to the validation error.
	boom := errors.New("disk full")
	w2 := &fakeWriter{fail: boom}
	err = sessionlog.NewSession(sessionlog.New(h), w2).Append(ctx, append(good, delta)...)
	if !errors.Is(err, boom) || !errors.Is(err, sessionlog.ErrLegacy) {
		t.Fatalf("joined error = %v", err)
	}
}

func TestLoadRepairsAndLabels(t *testing.T) {
	h := sessionlog.NewHeader("s", 1, "")
	evs := []sessionlog.Event{
		{Type: sessionlog.TypeTurnStart, Seq: 0, Time: 4, Data: json.RawMessage(`{"turn":2}`)},
	}
	l, err := sessionlog.Load("name", h, evs)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Closers) != 1 || string(l.Closers[0].Data) != `{"turn":2,"reason":{"kind":"interrupted"}}` || l.Closers[0].Time != 4 {
		t.Fatalf("closers %v", l.Closers)
	}
	if _, err := sessionlog.Load("name", h, []sessionlog.Event{{Type: "x", Seq: 3}}); err == nil || !strings.HasPrefix(err.Error(), "name: ") {
		t.Fatalf("Load error not labelled: %v", err)
	}
	if c := sessionlog.Repair(nil); c != nil {
		t.Fatalf("Repair(nil) = %v", c)
	}
}
