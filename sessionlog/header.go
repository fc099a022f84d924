package sessionlog

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Request-header reasons.
const (
	ReasonInitial = "initial"
	ReasonResume  = "resume"
	ReasonChange  = "change"
	ReasonSeries  = "series"

	reasonFallback = "fallback" // removed with the delta codec; refused
)

// RequestHeader is everything in a model request that is not history: the
// call config (provider, model, options), the rendered system prompt and the
// tool schemas.
type RequestHeader struct {
	Config json.RawMessage `json:"config"`
	System string          `json:"system,omitempty"`
	Tools  json.RawMessage `json:"tools,omitempty"`

	// canon caches Canonical for a header that will not change (the log's
	// latest snapshot).
	canon []byte
}

// RequestHeaderData is the data of a request/header event.
type RequestHeaderData struct {
	Header json.RawMessage `json:"header"`
	Reason string          `json:"reason"`
}

// Canonical returns the canonical encoding of h: compact config, then the
// system prompt and the tools, each absent when empty.
func (h RequestHeader) Canonical() []byte {
	b := []byte(`{"config":`)
	b = appendCompact(b, h.Config, "{}")
	if h.System != "" {
		b = append(b, `,"system":`...)
		b = AppendString(b, h.System)
	}
	if !emptyJSON(h.Tools) {
		b = append(b, `,"tools":`...)
		b = appendCompact(b, h.Tools, "")
	}
	return append(b, '}')
}

// Equal reports whether two headers have the same canonical form.
func (h RequestHeader) Equal(o RequestHeader) bool {
	return bytes.Equal(h.canonical(), o.canonical())
}

func (h RequestHeader) canonical() []byte {
	if h.canon != nil {
		return h.canon
	}
	return h.Canonical()
}

func emptyJSON(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return true
	}
	if string(t) != "null" && len(bytes.Trim(t, " \t\r\n[]\"")) > 0 {
		return false // something besides brackets, quotes and spaces: not empty
	}
	var buf bytes.Buffer
	if json.Compact(&buf, t) == nil {
		t = buf.Bytes() // "[ ]" is as empty as "[]"
	}
	return string(t) == "null" || string(t) == "[]" || string(t) == `""`
}

func appendCompact(b []byte, raw json.RawMessage, def string) []byte {
	if len(bytes.TrimSpace(raw)) == 0 {
		return append(b, def...)
	}
	if isCompact(raw) && validJSON(raw) {
		return append(b, raw...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(b, raw...)
	}
	return append(b, buf.Bytes()...)
}

// HeaderData builds the data of a request/header event for h.
func HeaderData(h RequestHeader, reason string) json.RawMessage {
	b := []byte(`{"header":`)
	b = append(b, h.Canonical()...)
	b = append(b, `,"reason":`...)
	b = AppendString(b, reason)
	return append(b, '}')
}

// Snapshot is the request/header payload of h with reason: HeaderData's
// bytes, written without re-parsing a header that is already a struct
// (RequestHeaderData's encoder parses its raw header first).
func (h RequestHeader) Snapshot(reason string) Payload { return headerSnapshot{h, reason} }

type headerSnapshot struct {
	h      RequestHeader
	reason string
}

// AppendJSON implements Payload.
func (s headerSnapshot) AppendJSON(b []byte) []byte { return append(b, HeaderData(s.h, s.reason)...) }

// OwedHeader decides which request/header a step owes before its model call.
// latest is the header in force (nil when the log has none); firstOfInstance
// is true for the first step of a loop instance; newSeries is true when the
// step begins a declared message series or follows a surface replacement.
// It returns the reason to write, or "" when the step inherits the latest
// snapshot.
func OwedHeader(latest *RequestHeader, assembled RequestHeader, firstOfInstance, newSeries bool) string {
	switch {
	case latest == nil:
		return ReasonInitial
	case firstOfInstance:
		return ReasonResume
	case !latest.Equal(assembled):
		return ReasonChange
	case newSeries:
		return ReasonSeries
	}
	return ""
}

// ParseRequestHeader decodes a logged header object.
func ParseRequestHeader(raw json.RawMessage) (RequestHeader, error) {
	var h RequestHeader
	if err := json.Unmarshal(raw, &h); err != nil {
		return h, fmt.Errorf("request header: %w", err)
	}
	return h, nil
}

func checkHeaderEvent(e *Event) error {
	d, err := DecodeData[RequestHeaderData](e)
	if err != nil {
		return err
	}
	switch d.Reason {
	case ReasonInitial, ReasonResume, ReasonChange, ReasonSeries:
	case reasonFallback:
		return legacyf(e, "header reason \"fallback\" belongs to the removed delta codec")
	case "":
		return invalidf(e, "request header has no reason")
	default:
		return invalidf(e, "unknown request header reason %q", d.Reason)
	}
	if len(d.Header) == 0 || d.Header[0] != '{' {
		return invalidf(e, "request header snapshot is missing or not an object")
	}
	var h struct {
		Config json.RawMessage `json:"config"`
		System *string         `json:"system"`
		Tools  json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(d.Header, &h); err != nil {
		return invalidf(e, "request header: %v", err)
	}
	if h.Config == nil {
		return invalidf(e, "request header has no config")
	}
	if h.System != nil && *h.System == "" {
		return invalidf(e, "request header is not canonical: empty system must be absent")
	}
	if h.Tools != nil && emptyJSON(h.Tools) {
		return invalidf(e, "request header is not canonical: empty tools must be absent")
	}
	return nil
}
