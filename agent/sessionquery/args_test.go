package sessionquery_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/sessionquery"
	"github.com/reel-agent/reel/agent/tools"
)

// TestParseEventReadArgs holds the parse to the reference's bounds: seq
// required, every integer a non-negative safe integer, the window at most
// 50, names exact and given once.
func TestParseEventReadArgs(t *testing.T) {
	cases := []struct {
		in   string
		want sessionquery.EventReadArgs
		err  string // "" when accepted
	}{
		{`{"seq":5}`, sessionquery.EventReadArgs{Seq: 5}, ""},
		{`{"seq":0,"before":50,"after":50}`, sessionquery.EventReadArgs{Before: 50, After: 50}, ""},
		{`{"seq":5.0}`, sessionquery.EventReadArgs{Seq: 5}, ""},
		{`{"seq":9007199254740991}`, sessionquery.EventReadArgs{Seq: 9007199254740991}, ""},
		{`{"session_id":"s","seq":1,"before":null}`, sessionquery.EventReadArgs{SessionID: "s", Seq: 1}, ""},
		{`{"seq":9007199254740992}`, sessionquery.EventReadArgs{}, "non-negative safe integer"},
		{`{"seq":-1}`, sessionquery.EventReadArgs{}, "non-negative safe integer"},
		{`{"seq":1.5}`, sessionquery.EventReadArgs{}, "non-negative safe integer"},
		{`{"seq":1e400}`, sessionquery.EventReadArgs{}, "non-negative safe integer"},
		{`{"seq":"1"}`, sessionquery.EventReadArgs{}, "non-negative safe integer"},
		{`{"seq":true}`, sessionquery.EventReadArgs{}, "non-negative safe integer"},
		{`{"seq":1,"before":51}`, sessionquery.EventReadArgs{}, "between 0 and 50"},
		{`{"seq":1,"after":-1}`, sessionquery.EventReadArgs{}, "non-negative safe integer"},
		{`{"seq":1,"session_id":5}`, sessionquery.EventReadArgs{}, "want a string"},
		{`{"Seq":1}`, sessionquery.EventReadArgs{}, "case-sensitive"},
		{`{"seq":1,"seq":2}`, sessionquery.EventReadArgs{}, "more than once"},
		{`{"seq":1,"path":"x"}`, sessionquery.EventReadArgs{}, "unknown argument"},
		{`{}`, sessionquery.EventReadArgs{}, "missing"},
		{`{"seq":null}`, sessionquery.EventReadArgs{}, "missing"},
		{``, sessionquery.EventReadArgs{}, "missing"},
		{`[1]`, sessionquery.EventReadArgs{}, "JSON object"},
		{`{"seq":1`, sessionquery.EventReadArgs{}, "malformed"},
	}
	for _, c := range cases {
		got, err := sessionquery.ParseEventReadArgs(json.RawMessage(c.in))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.in, err)
		case c.err == "" && got != c.want:
			t.Errorf("%s = %+v, want %+v", c.in, got, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one holding %q", c.in, err, c.err)
		case c.err != "":
			var ae *tools.ArgError
			if !errors.As(err, &ae) {
				t.Errorf("%s: %T is no *tools.ArgError", c.in, err)
			}
		}
	}
}

// FuzzParseEventReadArgs: any input is accepted within the bounds or
// refused with an argument error; it never panics.
func FuzzParseEventReadArgs(f *testing.F) {
	for _, s := range []string{`{"seq":5}`, `{"seq":1,"before":50,"after":0,"session_id":"x"}`, `{"seq":-0}`, `{"seq":1e3}`, `{"Seq":1}`, `[]`, `{"seq":1,"seq":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := sessionquery.ParseEventReadArgs(json.RawMessage(s))
		if err != nil {
			var ae *tools.ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("%q: %T is no *tools.ArgError", s, err)
			}
			return
		}
		if a.Seq < 0 || a.Seq > 1<<53-1 || a.Before < 0 || a.Before > sessionquery.MaxWindow || a.After < 0 || a.After > sessionquery.MaxWindow {
			t.Fatalf("%q accepted out of bounds: %+v", s, a)
		}
	})
}
