package sessionquery_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/sessionquery"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// fakeHistory is a log held in memory.
type fakeHistory struct {
	id, title string
	events    []sessionlog.Event
}

func (h fakeHistory) SessionID() string { return h.id }
func (h fakeHistory) Title() string     { return h.title }
func (h fakeHistory) Window(from, to int) ([]sessionlog.Event, int) {
	n := len(h.events)
	from, to = max(from, 0), min(to, n-1)
	if from > to {
		return nil, n
	}
	return h.events[from : to+1], n
}

func ev(seq int, typ, data string) sessionlog.Event {
	return sessionlog.Event{Type: typ, Seq: seq, Time: 1785730422266 + int64(seq), Data: json.RawMessage(data)}
}

// TestEventReadText holds the result text to the reference's layout: the
// session line, the target as indented JSON in a fence, and the
// neighbours' summary lines with their semantic text; and its refusals.
func TestEventReadText(t *testing.T) {
	h := fakeHistory{id: "S", events: []sessionlog.Event{
		ev(0, "turn/start", `{"turn":1}`),
		ev(1, "user/message", `{"content":[{"type":"text","text":"hello\nworld \u001b[2J"}],"role":"user"}`),
		ev(2, "tool/call", `{"turn":1,"step":1,"callId":"c","name":"bash","arguments":"{\"command\":\"ls\"}"}`),
		ev(3, "turn/end", `{"turn":1,"reason":{"kind":"error","error":{"message":"boom"}}}`),
	}}
	h.events[1].SurfaceOp = sessionlog.AppendOp()
	env := &tools.Env{History: h}
	run := func(args string) tools.Result {
		t.Helper()
		r, err := sessionquery.EventRead{}.Run(context.Background(), env, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	got := run(`{"seq":1,"before":5,"after":2}`).Text
	want := "Session S — untitled\nTarget event seq 1:\n```json\n{\n  \"type\": \"user/message\",\n  \"seq\": 1,\n  \"time\": 1785730422267,\n  \"data\": {\n" +
		"    \"content\": [\n      {\n        \"type\": \"text\",\n        \"text\": \"hello\\nworld \\u001b[2J\"\n      }\n    ],\n    \"role\": \"user\"\n  },\n  \"surfaceOp\": \"append\"\n}\n```\n\n" +
		"Before:\n- seq 0 | turn/start | 2026-08-03T04:13:42.266Z | (no semantic text)\n\n" +
		"After:\n- seq 2 | tool/call | 2026-08-03T04:13:42.268Z\n  bash\n  {\"command\":\"ls\"}\n- seq 3 | turn/end | 2026-08-03T04:13:42.269Z\n  error\n  boom"
	if got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	if got := run(`{"seq":0}`).Text; !strings.HasPrefix(got, "Session S — untitled\nTarget event seq 0:\n") || strings.Contains(got, "Before:") || strings.Contains(got, "After:") {
		t.Errorf("target only: %q", got)
	}
	h.title = "A title"
	env.History = h
	if got := run(`{"seq":0,"after":1}`).Text; !strings.HasPrefix(got, "Session S — A title\n") || !strings.Contains(got, "\n  hello\n  world \\u001b[2J") {
		t.Errorf("titled, with an escaped neighbour: %q", got)
	}
	for args, want := range map[string]string{
		`{"seq":4}`:                     `Error: session "S" has no event at seq 4`,
		`{"seq":9007199254740991}`:      `Error: session "S" has no event at seq 9007199254740991`,
		`{"session_id":"T","seq":0}`:    "Error: session target is outside the caller workspace",
		`{"session_id":"S/..","seq":0}`: "Error: session target is outside the caller workspace",
	} {
		if r := run(args); !r.IsError || r.Text != want {
			t.Errorf("%s: (isError %v) %q, want %q", args, r.IsError, r.Text, want)
		}
	}
	if r := run(`{"session_id":"S","seq":3}`); r.IsError {
		t.Errorf("own id named: %q", r.Text)
	}
	env.History = nil
	if r := run(`{"seq":0}`); !r.IsError {
		t.Errorf("no history: %q", r.Text)
	}
}
