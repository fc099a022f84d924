package sessionlog_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// TestCheckRequestComparesEveryByte: the reconstruction invariant accepts
// the live request and the same request spaced differently (it compares
// encodings), and refuses one that differs in a single byte of a message
// or of the header, with the message count unchanged.
func TestCheckRequestComparesEveryByte(t *testing.T) {
	l := conversation(t).log
	live := l.CurrentRequest()
	if len(live.Messages) < 2 {
		t.Fatalf("the conversation has %d messages", len(live.Messages))
	}
	edit := func(f func(r *sessionlog.Request)) sessionlog.Request {
		r := sessionlog.Request{Header: slices.Clone(live.Header), Messages: slices.Clone(live.Messages)}
		f(&r)
		return r
	}
	respace := func(raw json.RawMessage) json.RawMessage {
		var out bytes.Buffer
		if err := json.Indent(&out, raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	flip := func(raw json.RawMessage) json.RawMessage {
		out := slices.Clone(raw)
		for i := len(out) - 1; i >= 0; i-- {
			if out[i] >= 'a' && out[i] <= 'y' {
				out[i]++
				return out
			}
		}
		t.Fatalf("no letter to change in %s", raw)
		return nil
	}
	for _, tc := range []struct {
		name string
		req  sessionlog.Request
		ok   bool
	}{
		{"the live request", live, true},
		{"a message spaced differently", edit(func(r *sessionlog.Request) { r.Messages[1] = respace(r.Messages[1]) }), true},
		{"a message with one byte changed", edit(func(r *sessionlog.Request) { r.Messages[1] = flip(r.Messages[1]) }), false},
		{"the last message with one byte changed", edit(func(r *sessionlog.Request) { r.Messages[len(r.Messages)-1] = flip(r.Messages[len(r.Messages)-1]) }), false},
		{"the header with one byte changed", edit(func(r *sessionlog.Request) { r.Header = flip(r.Header) }), false},
		{"two messages swapped", edit(func(r *sessionlog.Request) { r.Messages[0], r.Messages[1] = r.Messages[1], r.Messages[0] }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := sessionlog.CheckRequest(l.Header(), l.Events(), tc.req)
			if (err == nil) != tc.ok {
				t.Errorf("CheckRequest = %v, want accepted: %v", err, tc.ok)
			}
		})
	}
}
