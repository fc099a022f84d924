package sessionlog

import (
	"bytes"
	"strconv"
)

// envelopeFields are the raw members of one record's top-level object.
type envelopeFields struct {
	typ, seq, time, data, surfaceOp, sources []byte
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the end of the JSON value starting at i: strings are
// skipped with their escapes, objects and arrays by bracket depth, scalars
// up to the next delimiter. Full syntax is checked separately (validJSON).
func valueEnd(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				e, ok := stringEnd(b, i)
				if !ok {
					return 0, false
				}
				i = e
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j, j > i
}

func stringEnd(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		j = skipPlain(b, j)
		if j >= len(b) {
			break
		}
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// fastDecodeEvent is DecodeEvent's fast path for well-formed records; ok is
// false when the record needs the strict path (which reports errors).
func fastDecodeEvent(raw []byte) (Event, bool) {
	f, compact, ok := scanRecord(raw)
	if !ok || f.typ == nil || f.seq == nil || f.time == nil {
		return Event{}, false
	}
	if !isPlainString(f.typ) || len(f.typ) == 2 {
		return Event{}, false
	}
	typ := knownType(f.typ[1 : len(f.typ)-1])
	seq, err := strconv.Atoi(string(f.seq))
	if err != nil {
		return Event{}, false
	}
	t, err := strconv.ParseInt(string(f.time), 10, 64)
	if err != nil {
		return Event{}, false
	}
	e := Event{Type: typ, Seq: seq, Time: t}
	if f.data != nil {
		if !compact && !isCompact(f.data) {
			return Event{}, false
		}
		e.Data = f.data
	}
	if f.surfaceOp != nil {
		op, err := parseSurfaceOp(f.surfaceOp)
		if err != nil {
			return Event{}, false
		}
		e.SurfaceOp = op
	}
	if f.sources != nil {
		src, ok := intArray(f.sources)
		if !ok {
			return Event{}, false
		}
		e.SourceEventSeqs = src
	}
	return e, true
}

// scanRecord is validJSON(raw) and scanEnvelope(raw) in one pass over the
// record: its envelope's members as scanEnvelope finds them, ok false for
// invalid JSON or what scanEnvelope refuses. compact says no whitespace
// stands between the record's tokens (so none in its data either).
// scan_internal_test.go and FuzzScanRecord hold it to the two.
func scanRecord(raw []byte) (f envelopeFields, compact, ok bool) {
	var top topMembers
	v := validator{b: raw, top: &top}
	if !v.valid() || top.over {
		return f, false, false
	}
	if i := skipWS(raw, 0); raw[i] != '{' {
		return f, false, false
	}
	for k := range top.n {
		key := raw[top.key[k][0]+1 : top.key[k][1]-1]
		val := raw[top.val[k][0]:top.val[k][1]]
		var slot *[]byte
		switch string(key) {
		case "type":
			slot = &f.typ
		case "seq":
			slot = &f.seq
		case "time":
			slot = &f.time
		case "data":
			slot = &f.data
		case "surfaceOp":
			slot = &f.surfaceOp
		case "sourceEventSeqs":
			slot = &f.sources
		default:
			return f, false, false // an unknown key, or one with escapes
		}
		if *slot != nil {
			return f, false, false
		}
		*slot = val
	}
	return f, !v.ws, true
}

// knownType is typ as a string, the package's constant (no copy) when it
// names a type the engine writes often: a loaded log's hundred thousand
// events share a dozen strings.
func knownType(typ []byte) string {
	switch string(typ) {
	case TypeTurnStart:
		return TypeTurnStart
	case TypeTurnEnd:
		return TypeTurnEnd
	case TypeStepStart:
		return TypeStepStart
	case TypeStepEnd:
		return TypeStepEnd
	case TypeUserMessage:
		return TypeUserMessage
	case TypeAssistantChunk:
		return TypeAssistantChunk
	case TypeAssistantMessage:
		return TypeAssistantMessage
	case TypeToolCall:
		return TypeToolCall
	case TypeToolResult:
		return TypeToolResult
	case TypeRequestHeader:
		return TypeRequestHeader
	case TypeRequestContext:
		return TypeRequestContext
	case TypeSessionTitle:
		return TypeSessionTitle
	}
	return string(typ)
}

// isPlainString reports whether b is a JSON string without escapes.
func isPlainString(b []byte) bool {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return false
	}
	for _, c := range b[1 : len(b)-1] {
		if c == '\\' || c == '"' || c < 0x20 {
			return false
		}
	}
	return true
}

// intArray decodes a JSON array of integers.
func intArray(b []byte) ([]int, bool) {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, false
	}
	out := make([]int, 0, bytes.Count(b, []byte{','})+1)
	i := skipWS(b, 1)
	if i == len(b)-1 {
		return out, true
	}
	for {
		j := i
		for j < len(b)-1 && b[j] != ',' && b[j] != ' ' {
			j++
		}
		n, err := strconv.Atoi(string(b[i:j]))
		if err != nil {
			return nil, false
		}
		out = append(out, n)
		i = skipWS(b, j)
		if i == len(b)-1 {
			return out, true
		}
		if b[i] != ',' {
			return nil, false
		}
		i = skipWS(b, i+1)
	}
}
