package sessionlog_test

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// fixtureLogs reads every recorded session log of the fixture suite.
func fixtureLogs(t *testing.T) map[string]*jsonl.Decoded {
	t.Helper()
	paths, err := filepath.Glob("../fixtures/*/session*.jsonl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixture logs: %v", err)
	}
	logs := map[string]*jsonl.Decoded{}
	for _, p := range paths {
		d, err := jsonl.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		logs[p] = d
	}
	return logs
}

// agree checks that the incremental checker returns CheckRequest's verdict
// and error for the prefix events and the request want.
func agree(t *testing.T, c *sessionlog.RequestChecker, h sessionlog.Header, events []sessionlog.Event, want sessionlog.Request, what string) error {
	t.Helper()
	scratch := sessionlog.CheckRequest(h, events, want)
	inc := c.Check(h, events, want)
	if (scratch == nil) != (inc == nil) || (scratch != nil && scratch.Error() != inc.Error()) {
		t.Fatalf("%s at %d events: incremental check %v, from scratch %v", what, len(events), inc, scratch)
	}
	return inc
}

// flipped returns r with the last letter of its last message (or of its
// header when it has none) changed.
func flipped(r sessionlog.Request) sessionlog.Request {
	out := sessionlog.Request{Header: r.Header, Messages: slices.Clone(r.Messages)}
	raw := &out.Header
	if len(out.Messages) > 0 {
		raw = &out.Messages[len(out.Messages)-1]
	}
	b := bytes.Clone(*raw)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] >= 'a' && b[i] <= 'y' {
			b[i]++
			break
		}
	}
	*raw = b
	return out
}

// TestRequestCheckerMatchesCheckRequest is the differential test of the
// incremental reconstruction invariant: over every recorded fixture log,
// at every step's model call (the prefix the engine checks), one checker
// per log and one shared by all logs agree with CheckRequest on the true
// request and on a request one byte off; and after the log is cut back
// (a rewind), after an earlier event's data is damaged in place or
// replaced with other valid data, and on a longer prefix again.
func TestRequestCheckerMatchesCheckRequest(t *testing.T) {
	logs := fixtureLogs(t)
	var shared sessionlog.RequestChecker
	steps := 0
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range logs {
			if !yield(p) {
				return
			}
		}
	}) {
		d := logs[p]
		h, events := d.Header, d.Events
		reqs, err := sessionlog.ReconstructAll(h, events)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var own sessionlog.RequestChecker
		for _, r := range reqs {
			steps++
			prefix := events[:r.Seq]
			for _, c := range []*sessionlog.RequestChecker{&own, &shared} {
				if err := agree(t, c, h, prefix, r.Request, p); err != nil {
					t.Fatalf("%s turn %d step %d: %v", p, r.Turn, r.Step, err)
				}
				if agree(t, c, h, prefix, flipped(r.Request), p+" (one byte off)") == nil {
					t.Fatalf("%s turn %d step %d: a request one byte off passes", p, r.Turn, r.Step)
				}
			}
		}
		if len(reqs) < 2 {
			continue
		}
		// A rewind: back to the first step, then forward to the last.
		first, last := reqs[0], reqs[len(reqs)-1]
		agree(t, &own, h, events[:first.Seq], first.Request, p+" (cut back)")
		agree(t, &own, h, events[:last.Seq], last.Request, p+" (forward again)")
		// An earlier event changed in place: damaged (invalid), repaired,
		// then changed in a letter (valid; the request differs
		// unless the event has left the surface).
		mut := slices.Clone(events[:last.Seq])
		at := -1
		for i := range mut[:first.Seq] {
			if mut[i].Type == sessionlog.TypeUserMessage || mut[i].Type == sessionlog.TypeRequestHeader {
				at = i
				break
			}
		}
		if at < 0 {
			continue
		}
		data := bytes.Clone(mut[at].Data)
		mut[at].Data = data
		agree(t, &own, h, mut, last.Request, p+" (before damage)")
		data[0] = '[' // the very bytes the checker saw, changed
		if agree(t, &own, h, mut, last.Request, p+" (damaged in place)") == nil {
			t.Fatalf("%s: an event damaged in place passes", p)
		}
		data[0] = '{'
		agree(t, &own, h, mut, last.Request, p+" (repaired)")
		if i := bytes.LastIndexAny(data, "abcdefghijklmnopqrstuvwxy"); i >= 0 {
			data[i]++ // still valid, but not what the request was built from
			agree(t, &own, h, mut, last.Request, p+" (changed in place)")
		}
	}
	if steps < 100 {
		t.Fatalf("only %d steps checked", steps)
	}
	t.Logf("%d fixture logs, %d steps", len(logs), steps)
}
