package sessionlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// RequestChecker is CheckRequest for a log that grows by appends, at the
// cost of what is new: it keeps a shadow log built only from the events it
// has been shown (New and Append of each, exactly what Seed does), and on
// each check appends just the events added since. Whenever the events it is
// shown are not an extension of the ones it validated (a different header,
// fewer events, or any earlier event differing in any field or data byte,
// as after a rewind, a fork or a swapped log), it starts again from
// scratch. The shadow holds its own copies of the events, so a check sees
// the same bytes a from-scratch Seed would, and its verdict is CheckRequest's.
//
// The zero value is ready to use. A RequestChecker is not safe for
// concurrent use; it belongs to one session.
type RequestChecker struct {
	header Header
	// shadow is the log seeded from the copies of the events seen (nil
	// before the first check or after a reset).
	shadow *Log
	// proj memoizes the message projection of the shadow's event seq
	// (nil: not projected yet). The shadow's events never change, so
	// neither do their projections; the shadow's own message cache (which
	// the live log shares the code of) is not used.
	proj []json.RawMessage
}

// Check is CheckRequest(h, events, want): it rebuilds the request from the
// validated events independently of any live cache and compares it with
// want, returning the same verdict and error.
func (c *RequestChecker) Check(h Header, events []Event, want Request) error {
	if !c.extends(h, events) {
		c.header, c.shadow, c.proj = h, New(h), nil
	}
	for i := c.shadow.Len(); i < len(events); i++ {
		if err := c.shadow.Append(cloneEvent(&events[i])); err != nil {
			return fmt.Errorf("invariant: log prefix does not validate: %w", err)
		}
	}
	return compareRequest(c.request(), want, len(events))
}

// extends reports whether the shadow was built from a prefix of events
// under the same header.
func (c *RequestChecker) extends(h Header, events []Event) bool {
	if c.shadow == nil || !sameHeader(c.header, h) || len(events) < c.shadow.Len() {
		return false
	}
	for i := range c.shadow.events {
		if !sameEvent(&c.shadow.events[i], &events[i]) {
			return false
		}
	}
	return true
}

// request is the shadow's request, its messages projected from the
// shadow's events.
func (c *RequestChecker) request() Request {
	l := c.shadow
	if n := len(l.events); len(c.proj) < n {
		c.proj = append(c.proj, make([]json.RawMessage, n-len(c.proj))...)
	}
	msgs := make([]json.RawMessage, 0, len(l.surface.seqs))
	for _, seq := range l.surface.seqs {
		if c.proj[seq] == nil {
			c.proj[seq], _ = ProjectMessage(&l.events[seq]) // validated at append
		}
		msgs = append(msgs, c.proj[seq])
	}
	_, raw, _, _ := l.LatestHeader()
	return Request{Header: raw, Messages: msgs}
}

// cloneEvent copies e with its data, sources and surface op, so that the
// shadow's events share no memory with the log it checks.
func cloneEvent(e *Event) Event {
	c := *e
	c.Data = bytes.Clone(e.Data)
	c.SourceEventSeqs = slices.Clone(e.SourceEventSeqs)
	if e.SurfaceOp != nil {
		op := *e.SurfaceOp
		c.SurfaceOp = &op
	}
	return c
}

// sameEvent reports whether a and b agree in every field and data byte;
// a nil slice and an empty one count as different (a reset costs a
// rebuild, a false match would cost the invariant).
func sameEvent(a, b *Event) bool {
	if a.Type != b.Type || a.Seq != b.Seq || a.Time != b.Time ||
		(a.Data == nil) != (b.Data == nil) || !bytes.Equal(a.Data, b.Data) ||
		(a.SourceEventSeqs == nil) != (b.SourceEventSeqs == nil) || !slices.Equal(a.SourceEventSeqs, b.SourceEventSeqs) ||
		(a.SurfaceOp == nil) != (b.SurfaceOp == nil) {
		return false
	}
	return a.SurfaceOp == nil || *a.SurfaceOp == *b.SurfaceOp
}

// sameHeader reports whether a and b agree in every field and raw byte.
func sameHeader(a, b Header) bool {
	return a.Version == b.Version && a.ID == b.ID && a.CreatedAt == b.CreatedAt && a.Cwd == b.Cwd &&
		(a.Raw == nil) == (b.Raw == nil) && bytes.Equal(a.Raw, b.Raw)
}
