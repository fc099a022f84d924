package sessionlog

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// Log is a validated, in-memory session log with its incremental surface,
// header fold and message projection cache. Append and Seed share one
// validation path. A Log is not safe for concurrent use.
type Log struct {
	header  Header
	events  []Event
	surface Surface
	// seq of the latest request/header, -1 when none, and its parsed form
	latestHeader int
	latestParsed RequestHeader
	latestRaw    json.RawMessage
	msgs         messageCache
	pairs        pairingCache
	// stored counts the data bytes the log reads from views of its store
	// (useStored) instead of holding them.
	stored int64
	// validData is how many leading events' data their decoder checked
	// to be valid JSON (LoadOwnedValid): DataValid.
	validData int
}

// DataValid reports whether the data of the event seq is known to be
// valid JSON because the decoder that read it checked it (LoadOwnedValid):
// a reader may then take it with a reader that skips the check (such as
// DecodeValidMessageData). Events appended since are not known valid.
func (l *Log) DataValid(seq int) bool { return seq >= 0 && seq < l.validData }

// StoredBytes is how many bytes of event data the log reads from views
// of its store (Session.Checkpoint) instead of holding them itself.
func (l *Log) StoredBytes() int64 { return l.stored }

// New returns an empty log for header h.
func New(h Header) *Log {
	return &Log{header: h, latestHeader: -1}
}

// Seed validates events as if appended one by one and returns the log.
func Seed(h Header, events []Event) (*Log, error) {
	return seed(h, events, false, false)
}

// seed is Seed; owned, the log keeps events' backing array (each event
// is appended onto its own slot) instead of copying it.
func seed(h Header, events []Event, owned, valid bool) (*Log, error) {
	l := New(h)
	if valid {
		l.validData = len(events)
	}
	if owned {
		l.events = events[:0]
	} else {
		l.events = make([]Event, 0, len(events))
	}
	for i := range events {
		if err := l.Append(events[i]); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Header returns the session header.
func (l *Log) Header() Header { return l.header }

// Len is the number of events; the next event's seq.
func (l *Log) Len() int { return len(l.events) }

// Events returns all events. The slice is shared: do not modify it.
func (l *Log) Events() []Event { return l.events }

// Event returns the event with the given seq, or nil.
func (l *Log) Event(seq int) *Event {
	if seq < 0 || seq >= len(l.events) {
		return nil
	}
	return &l.events[seq]
}

// Surface returns the live surface (read-only).
func (l *Log) Surface() *Surface { return &l.surface }

// LatestHeader returns the request header in force and the seq of its
// snapshot; ok is false when the log has none. The returned header carries
// a cached canonical form that Equal uses: compare it, do not modify it.
func (l *Log) LatestHeader() (h RequestHeader, raw json.RawMessage, seq int, ok bool) {
	if l.latestHeader < 0 {
		return RequestHeader{}, nil, -1, false
	}
	return l.latestParsed, l.latestRaw, l.latestHeader, true
}

// useStored makes event v.Seq read its data from v.Data, the stored bytes
// of the same data (Session.Checkpoint), so that the log lets its own
// copy go. A view of another length is ignored. A cached projection of
// the event is dropped with the copy it shares.
func (l *Log) useStored(v StoredData) {
	if v.Seq < 0 || v.Seq >= len(l.events) {
		return
	}
	e := &l.events[v.Seq]
	if len(e.Data) != len(v.Data) {
		return
	}
	e.Data = v.Data
	l.stored += int64(len(v.Data))
	if e.SurfaceOp != nil {
		l.msgs.valid = false
	}
}

// Append validates e against every log rule and appends it. On error the log
// is unchanged.
func (l *Log) Append(e Event) error {
	if err := l.check(&e); err != nil {
		return err
	}
	l.events = append(l.events, e)
	ev := &l.events[len(l.events)-1]
	switch {
	case ev.Type == TypeRequestHeader:
		d, _ := DecodeData[RequestHeaderData](ev) // validated by check
		h, _ := ParseRequestHeader(d.Header)
		h.canon = h.Canonical()
		l.latestHeader, l.latestParsed, l.latestRaw = ev.Seq, h, d.Header
	case ev.SurfaceOp != nil && !ev.SurfaceOp.Replace:
		l.surface.push(ev.Seq)
	case ev.SurfaceOp != nil:
		i, j, _ := l.surface.span(ev.SurfaceOp.Start, ev.SurfaceOp.End) // checked
		l.surface.replace(i, j, ev.Seq)
	}
	return nil
}

var turnEndKinds = map[string]bool{
	EndCompleted: true, EndAborted: true, EndBlocked: true,
	EndError: true, EndMaxTokens: true, EndInterrupted: true,
}

// check is the single validation path for Append and Seed.
func (l *Log) check(e *Event) error {
	if e.Seq != len(l.events) {
		return invalidf(e, "seq %d out of order: expected %d", e.Seq, len(l.events))
	}
	if e.Type == "" {
		return invalidf(e, "event has no type")
	}
	if e.Type == TypeLegacyHeaderDelta {
		return legacyf(e, "request/header-delta events were removed; headers are full snapshots")
	}
	if e.Time < 0 {
		return invalidf(e, "time %d is negative", e.Time)
	}
	surface := IsSurfaceType(e.Type)
	if surface && e.SurfaceOp == nil {
		return invalidf(e, "surface event has no surfaceOp")
	}
	if !surface && e.SurfaceOp != nil {
		return invalidf(e, "only user/message, assistant/message and tool/result may carry a surfaceOp")
	}
	if err := l.checkSources(e, surface); err != nil {
		return err
	}
	switch e.Type {
	case TypeRequestHeader:
		return checkHeaderEvent(e)
	case TypeTurnEnd:
		d, err := DecodeData[TurnEndData](e)
		if err != nil {
			return err
		}
		if !turnEndKinds[d.Reason.Kind] {
			return invalidf(e, "unknown turn end reason kind %q", d.Reason.Kind)
		}
	case TypeTurnStart, TypeStepStart, TypeStepEnd, TypeToolCall, TypeAssistantChunk, TypeSandboxMode, TypeApprovalPolicy:
		if len(e.Data) == 0 || e.Data[0] != '{' {
			return invalidf(e, "data must be a JSON object")
		}
	}
	if !surface {
		return nil
	}
	if _, err := projectMessage(e, l.DataValid(e.Seq)); err != nil {
		return err
	}
	if e.SurfaceOp.Replace {
		return l.checkReplace(e)
	}
	if e.Type == TypeToolResult {
		cites := false
		for _, s := range e.SourceEventSeqs {
			if t := l.events[s].Type; t == TypeToolCall || t == TypeAssistantMessage {
				cites = true
			}
		}
		if !cites {
			return invalidf(e, "tool/result must cite its tool/call seq in sourceEventSeqs")
		}
	}
	return nil
}

func (l *Log) checkSources(e *Event, surface bool) error {
	src := e.SourceEventSeqs
	if src == nil {
		if e.Type == TypeAssistantMessage {
			return invalidf(e, "assistant/message must cite its chunk seqs in sourceEventSeqs")
		}
		return nil
	}
	if len(src) == 0 && e.Type != TypeAssistantMessage {
		return invalidf(e, "sourceEventSeqs is empty (only assistant/message may cite nothing)")
	}
	_ = surface
	increasing := true
	for i, s := range src {
		if s < 0 || s >= e.Seq {
			return invalidf(e, "sourceEventSeqs cites %d, which is not an earlier event", s)
		}
		if i > 0 && s <= src[i-1] {
			increasing = false
		}
	}
	if increasing {
		return nil // the usual order: no seq can repeat
	}
	// Linear in the citations (after a sort), never a scan per citation:
	// an assistant/message may cite a million chunks.
	if s, ok := repeated(src); ok {
		return invalidf(e, "sourceEventSeqs cites %d twice", s)
	}
	return nil
}

// repeated returns a seq that src holds more than once: the first such in
// src's order.
func repeated(src []int) (int, bool) {
	seen := make(map[int]bool, len(src))
	for _, s := range src {
		if seen[s] {
			return s, true
		}
		seen[s] = true
	}
	return 0, false
}

func (l *Log) checkReplace(e *Event) error {
	op := e.SurfaceOp
	i, j, err := l.surface.span(op.Start, op.End)
	if err != nil {
		return invalidf(e, "%v", err)
	}
	cited := e.SourceEventSeqs
	if !slices.IsSorted(cited) {
		cited = slices.Sorted(slices.Values(cited))
	}
	for _, s := range l.surface.seqs[i : j+1] {
		if _, ok := slices.BinarySearch(cited, s); !ok {
			return invalidf(e, "replace shadows seq %d but sourceEventSeqs does not cite it", s)
		}
	}
	if i != j {
		return nil
	}
	old := &l.events[l.surface.seqs[i]]
	if old.Type != TypeToolResult {
		return nil
	}
	if e.Type != TypeToolResult {
		return invalidf(e, "a single tool/result (seq %d) may only be replaced by a tool/result", old.Seq)
	}
	a, err1 := withoutContent(old.Data)
	b, err2 := withoutContent(e.Data)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
		return invalidf(e, "a single tool/result replacement must keep every data field of seq %d except content", old.Seq)
	}
	return nil
}

// withoutContent decodes tool/result data and drops message.content (and a
// top-level content, if any).
func withoutContent(data json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	delete(m, "content")
	msg, ok := m["message"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no message")
	}
	delete(msg, "content")
	return m, nil
}
