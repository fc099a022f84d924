package sessionlog

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers branch on them with errors.Is; the concrete error
// is usually an *EventError or *RecordError that says where.
var (
	// ErrVersion reports a header whose format version is not 0.
	ErrVersion = errors.New("sessionlog: unsupported session format version")
	// ErrLegacy reports a request/header-delta event or a fallback header,
	// both removed from format version 0 and refused without migration.
	ErrLegacy = errors.New("sessionlog: legacy request-header encoding refused")
	// ErrInvalid reports an event that breaks a log rule.
	ErrInvalid = errors.New("sessionlog: invalid event")
	// ErrHeader reports a missing or malformed header record.
	ErrHeader = errors.New("sessionlog: invalid header")
	// ErrBadID reports a string that cannot be a session id, given to a
	// Store's Create (as Header.ID), Open or Inspect: empty, longer than
	// 200 bytes, starting with '.' (so "." and ".." too), or holding '/',
	// '\', NUL or another control character (bytes below 0x20, and 0x7f).
	// Every backend refuses such an id before touching storage; the error
	// names the id. It is the caller's mistake, not a damaged log (it
	// does not match ErrHeader).
	ErrBadID = errors.New("sessionlog: invalid session id")
	// ErrCorrupt reports damage (an unparsable record, a seq gap) before the
	// last complete turn/end, which repair may not paper over.
	ErrCorrupt = errors.New("sessionlog: corrupt log")
	// ErrNotFound reports a turn/step or session that does not exist.
	ErrNotFound = errors.New("sessionlog: not found")
)

// EventError is a rule violation at one event.
type EventError struct {
	Seq  int    // seq of the offending event
	Type string // its event type
	Err  error  // a sentinel (ErrInvalid, ErrLegacy, …) wrapped with detail
}

func (e *EventError) Error() string {
	return fmt.Sprintf("seq %d (%s): %v", e.Seq, e.Type, e.Err)
}

func (e *EventError) Unwrap() error { return e.Err }

// RecordError locates an error in a stored log: file and 1-based line (or row).
type RecordError struct {
	File string // path of the log, or "" when unknown
	Line int    // 1-based physical line/row; 0 when unknown
	Err  error
}

func (e *RecordError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	case e.File != "":
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return e.Err.Error()
}

func (e *RecordError) Unwrap() error { return e.Err }

func invalidf(e *Event, format string, args ...any) error {
	return &EventError{Seq: e.Seq, Type: e.Type, Err: fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)}
}

func legacyf(e *Event, format string, args ...any) error {
	return &EventError{Seq: e.Seq, Type: e.Type, Err: fmt.Errorf("%w: "+format, append([]any{ErrLegacy}, args...)...)}
}
