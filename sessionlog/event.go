package sessionlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Version is the only session format version reel reads and writes.
const Version = 0

// Event types reel knows. Anything else is kept verbatim and stays off the surface.
const (
	TypeTurnStart        = "turn/start"
	TypeTurnEnd          = "turn/end"
	TypeStepStart        = "step/start"
	TypeStepEnd          = "step/end"
	TypeUserMessage      = "user/message"
	TypeAssistantChunk   = "assistant/chunk"
	TypeAssistantMessage = "assistant/message"
	TypeToolCall         = "tool/call"
	TypeToolResult       = "tool/result"
	TypeRequestHeader    = "request/header"
	TypeRequestContext   = "request/context"
	TypeSandboxMode      = "sandbox/mode"
	TypeApprovalPolicy   = "approval/policy"
	TypeCompactionStart  = "compaction/start"
	TypeCompactionSum    = "compaction/summary"
	TypeCompactionEnd    = "compaction/end"

	// TypeLegacyHeaderDelta is the removed delta encoding; refused everywhere.
	TypeLegacyHeaderDelta = "request/header-delta"
)

// IsSurfaceType reports whether events of type t produce model messages.
func IsSurfaceType(t string) bool {
	return t == TypeUserMessage || t == TypeAssistantMessage || t == TypeToolResult
}

// Header is the first record of a log. Raw holds the exact header object as
// stored (foreign fields such as delegationDepth included) and is what encoders
// write; the parsed fields are read from it.
type Header struct {
	Version   int
	ID        string
	CreatedAt int64
	Cwd       string
	Raw       json.RawMessage
}

// NewHeader builds a version-0 header for a new session.
func NewHeader(id string, createdAt int64, cwd string) Header {
	b := []byte(`{"type":"session","version":0,"id":`)
	b = AppendString(b, id)
	b = append(b, `,"createdAt":`...)
	b = strconv.AppendInt(b, createdAt, 10)
	if cwd != "" {
		b = append(b, `,"cwd":`...)
		b = AppendString(b, cwd)
	}
	b = append(b, '}')
	return Header{Version: Version, ID: id, CreatedAt: createdAt, Cwd: cwd, Raw: b}
}

// DecodeHeader parses and checks a header record: type "session", version 0,
// a non-empty string id and a non-negative integer createdAt.
func DecodeHeader(raw []byte) (Header, error) {
	var h struct {
		Type      *string          `json:"type"`
		Version   *json.RawMessage `json:"version"`
		ID        *string          `json:"id"`
		CreatedAt *json.RawMessage `json:"createdAt"`
		Cwd       string           `json:"cwd"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return Header{}, fmt.Errorf("%w: %v", ErrHeader, err)
	}
	if h.Type == nil || *h.Type != "session" {
		return Header{}, fmt.Errorf("%w: first record must have \"type\":\"session\"", ErrHeader)
	}
	if h.Version == nil {
		return Header{}, fmt.Errorf("%w: header has no version", ErrHeader)
	}
	if string(*h.Version) != "0" {
		return Header{}, fmt.Errorf("%w %s (reel reads version 0 only)", ErrVersion, *h.Version)
	}
	if h.ID == nil || *h.ID == "" {
		return Header{}, fmt.Errorf("%w: header has no id", ErrHeader)
	}
	if h.CreatedAt == nil {
		return Header{}, fmt.Errorf("%w: header has no createdAt", ErrHeader)
	}
	created, err := strconv.ParseInt(string(*h.CreatedAt), 10, 64)
	if err != nil || created < 0 {
		return Header{}, fmt.Errorf("%w: createdAt %s is not a non-negative integer", ErrHeader, *h.CreatedAt)
	}
	compact := raw
	if !isCompact(raw) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return Header{}, fmt.Errorf("%w: %v", ErrHeader, err)
		}
		compact = buf.Bytes()
	}
	return Header{Version: Version, ID: *h.ID, CreatedAt: created, Cwd: h.Cwd, Raw: bytes.Clone(compact)}, nil
}

// SurfaceOp is an event's surface operation: append, or replace of the
// inclusive surface range Start…End.
type SurfaceOp struct {
	Replace    bool
	Start, End int
}

// Append is the append surface operation.
var appendOp = SurfaceOp{}

// AppendOp returns the append surface operation.
func AppendOp() *SurfaceOp { op := appendOp; return &op }

// ReplaceOp returns a replace surface operation over start…end.
func ReplaceOp(start, end int) *SurfaceOp { return &SurfaceOp{Replace: true, Start: start, End: end} }

// AppendJSON appends the canonical encoding of op.
func (op SurfaceOp) AppendJSON(b []byte) []byte {
	if !op.Replace {
		return append(b, `"append"`...)
	}
	b = append(b, `{"op":"replace","start":`...)
	b = strconv.AppendInt(b, int64(op.Start), 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendInt(b, int64(op.End), 10)
	return append(b, '}')
}

func parseSurfaceOp(raw json.RawMessage) (*SurfaceOp, error) {
	if string(raw) == `"append"` {
		return AppendOp(), nil
	}
	var r struct {
		Op    string `json:"op"`
		Start *int   `json:"start"`
		End   *int   `json:"end"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || r.Op != "replace" || r.Start == nil || r.End == nil {
		return nil, fmt.Errorf("surfaceOp %s is neither \"append\" nor {\"op\":\"replace\",\"start\":S,\"end\":E}", raw)
	}
	return ReplaceOp(*r.Start, *r.End), nil
}

// Event is one logical record. Data is raw JSON, decoded on demand.
// SourceEventSeqs is nil when absent; a non-nil empty slice is an explicit
// empty list (allowed only on assistant/message).
type Event struct {
	Type            string
	Seq             int
	Time            int64
	Data            json.RawMessage
	SurfaceOp       *SurfaceOp
	SourceEventSeqs []int
}

// AppendJSON appends the canonical single-line encoding of e:
// type, seq, time, data, sourceEventSeqs, surfaceOp, in that order.
func (e *Event) AppendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = AppendString(b, e.Type)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, int64(e.Seq), 10)
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, e.Time, 10)
	if e.Data != nil {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	if e.SourceEventSeqs != nil {
		b = append(b, `,"sourceEventSeqs":`...)
		b = AppendInts(b, e.SourceEventSeqs)
	}
	if e.SurfaceOp != nil {
		b = append(b, `,"surfaceOp":`...)
		b = e.SurfaceOp.AppendJSON(b)
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler with the canonical encoding.
func (e Event) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// AppendInts appends a JSON array of integers.
func AppendInts(b []byte, xs []int) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

// envelope is the wire shape of one event record.
type envelope struct {
	Type            *string         `json:"type"`
	Seq             *int            `json:"seq"`
	Time            json.RawMessage `json:"time"`
	Data            json.RawMessage `json:"data"`
	SurfaceOp       json.RawMessage `json:"surfaceOp"`
	SourceEventSeqs *[]int          `json:"sourceEventSeqs"`
}

// DecodeEvent parses one event record. It checks the envelope only (fields,
// types, integer time); the log rules are checked by Log.Append. Unknown
// envelope fields are refused rather than silently dropped.
func DecodeEvent(raw []byte) (Event, error) {
	if e, ok := fastDecodeEvent(raw); ok {
		// Keep nothing that aliases the caller's buffer.
		if e.Data != nil {
			e.Data = append(json.RawMessage(nil), e.Data...)
		}
		return e, nil
	}
	return decodeEventStrict(raw)
}

// DecodeEventOwned is DecodeEvent for a buffer the caller hands over: the
// event's Data may alias raw, which must not be modified afterwards. Log
// readers that allocate each line anyway use it to skip a copy.
func DecodeEventOwned(raw []byte) (Event, error) {
	if e, ok := fastDecodeEvent(raw); ok {
		return e, nil
	}
	return decodeEventStrict(raw)
}

// decodeEventStrict is the strict path: precise errors for anything the
// fast path does not recognise.
func decodeEventStrict(raw []byte) (Event, error) {
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if dec.More() {
		return Event{}, fmt.Errorf("%w: trailing data after the record", ErrInvalid)
	}
	if env.Type == nil || *env.Type == "" {
		return Event{}, fmt.Errorf("%w: record has no type", ErrInvalid)
	}
	if env.Seq == nil {
		return Event{}, fmt.Errorf("%w: %s record has no seq", ErrInvalid, *env.Type)
	}
	e := Event{Type: *env.Type, Seq: *env.Seq}
	if env.Time == nil {
		return Event{}, fmt.Errorf("%w: seq %d (%s) has no time", ErrInvalid, e.Seq, e.Type)
	}
	t, err := strconv.ParseInt(string(env.Time), 10, 64)
	if err != nil {
		return Event{}, fmt.Errorf("%w: seq %d (%s): time %s is not an integer", ErrInvalid, e.Seq, e.Type, env.Time)
	}
	e.Time = t
	if env.Data != nil {
		if !isCompact(env.Data) {
			var buf bytes.Buffer
			if err := json.Compact(&buf, env.Data); err != nil {
				return Event{}, fmt.Errorf("%w: seq %d (%s): %v", ErrInvalid, e.Seq, e.Type, err)
			}
			env.Data = buf.Bytes()
		} else {
			env.Data = bytes.Clone(env.Data)
		}
		e.Data = env.Data
	}
	if env.SurfaceOp != nil {
		op, err := parseSurfaceOp(env.SurfaceOp)
		if err != nil {
			return Event{}, fmt.Errorf("%w: seq %d (%s): %v", ErrInvalid, e.Seq, e.Type, err)
		}
		e.SurfaceOp = op
	}
	if env.SourceEventSeqs != nil {
		e.SourceEventSeqs = *env.SourceEventSeqs
		if e.SourceEventSeqs == nil {
			e.SourceEventSeqs = []int{}
		}
	}
	return e, nil
}

// IsCompact reports whether raw has no insignificant whitespace outside
// strings (the form records are stored in). It does not check syntax.
func IsCompact(raw []byte) bool { return isCompact(raw) }

// isCompact reports whether raw has no insignificant whitespace outside strings.
func isCompact(raw []byte) bool {
	in := false
	esc := false
	for _, c := range raw {
		if in {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return true
}

// AppendString appends s as a JSON string the way JavaScript's JSON.stringify
// writes it (the recording system's encoder): only '"', '\\' and control
// characters are escaped; '<', '>', '&', U+2028 and U+2029 stay raw. Invalid
// UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b = append(b, '\\', '"')
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
