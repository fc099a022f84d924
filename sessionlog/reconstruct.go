package sessionlog

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Request is what a step sent to the model: the header in force (as logged)
// and the derived messages, in surface order.
type Request struct {
	Header   json.RawMessage   `json:"header"`
	Messages []json.RawMessage `json:"messages"`
}

// StepRequest is a reconstructed request with its position in the log.
type StepRequest struct {
	Turn int `json:"turn"`
	Step int `json:"step"`
	// Seq is the first event of the step's model call (request/context,
	// or the first chunk); the request is the log state just before it.
	Seq     int     `json:"seq"`
	Request Request `json:"request"`
}

// isRequestPoint reports whether e marks a step's model call: reel writes
// request/context right before dispatch; older logs start with a chunk.
func isRequestPoint(t string) bool {
	switch t {
	case TypeRequestContext, TypeAssistantChunk, TypeAssistantMessage, TypeStepEnd, TypeTurnEnd:
		return true
	}
	return false
}

// ReconstructAll rebuilds the request of every step that reached a model
// call, in one pass. Requests share message storage (each is a capped prefix
// while the surface only grows), so the cost is linear in the log.
func ReconstructAll(h Header, events []Event) ([]StepRequest, error) {
	l := New(h)
	l.events = make([]Event, 0, len(events))
	var out []StepRequest
	cur, open, taken := StepData{}, false, false
	for i := range events {
		e := &events[i]
		switch {
		case e.Type == TypeStepStart:
			d, err := DecodeData[StepData](e)
			if err != nil {
				return nil, err
			}
			cur, open, taken = d, true, false
		case open && !taken && isRequestPoint(e.Type):
			taken = true
			if e.Type != TypeStepEnd && e.Type != TypeTurnEnd {
				out = append(out, StepRequest{Turn: cur.Turn, Step: cur.Step, Seq: e.Seq, Request: l.request()})
			}
		}
		if e.Type == TypeStepEnd {
			open = false
		}
		if err := l.Append(*e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// request snapshots the log's current request.
func (l *Log) request() Request {
	_, raw, _, _ := l.LatestHeader()
	return Request{Header: raw, Messages: l.Messages()}
}

// CurrentRequest is the request a model call dispatched now would send.
func (l *Log) CurrentRequest() Request { return l.request() }

// Reconstruct returns the exact request step (turn, step) sent.
func Reconstruct(h Header, events []Event, turn, step int) (Request, error) {
	all, err := ReconstructAll(h, events)
	if err != nil {
		return Request{}, err
	}
	for _, r := range all {
		if r.Turn == turn && r.Step == step {
			return r.Request, nil
		}
	}
	return Request{}, fmt.Errorf("%w: no model call for turn %d step %d", ErrNotFound, turn, step)
}

// CheckRequest is the reconstruction invariant: it rebuilds the request from
// a fresh log over events (the prefix written so far) independently of any
// live cache and compares it byte for byte with want.
func CheckRequest(h Header, events []Event, want Request) error {
	fresh, err := Seed(h, events)
	if err != nil {
		return fmt.Errorf("invariant: log prefix does not validate: %w", err)
	}
	return compareRequest(fresh.request(), want, len(events))
}

// compareRequest is the comparison of CheckRequest: got, rebuilt from the
// first n events, against want, byte for byte when the bytes agree and by
// their encodings otherwise.
func compareRequest(got, want Request, n int) error {
	if sameBytes(got, want) {
		return nil // the common case: equal encodings, no re-encoding
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if !bytes.Equal(a, b) {
		return fmt.Errorf("invariant: request about to be sent differs from the one rebuilt from the log at seq %d:\n rebuilt: %s\n sending: %s", n, a, b)
	}
	return nil
}

// sameBytes reports whether a and b hold the same bytes in every field:
// then their encodings are equal too (the converse need not hold, so a
// false answer is settled by comparing the encodings).
func sameBytes(a, b Request) bool {
	if !bytes.Equal(a.Header, b.Header) || len(a.Messages) != len(b.Messages) {
		return false
	}
	for i := range a.Messages {
		if !bytes.Equal(a.Messages[i], b.Messages[i]) {
			return false
		}
	}
	return true
}
