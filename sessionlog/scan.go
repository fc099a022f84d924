package sessionlog

import (
	"strconv"
)

// envelopeFields are the raw members of one record's top-level object.
type envelopeFields struct {
	typ, seq, time, data, surfaceOp, sources []byte
}

// scanEnvelope splits a compact or loosely spaced JSON object into its
// known top-level members without decoding them. It returns ok=false for
// anything it does not fully recognise (an unknown or escaped key, a
// duplicate key, malformed syntax); callers then take the strict, slower
// path that produces a precise error.
func scanEnvelope(raw []byte) (f envelopeFields, ok bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return f, false
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return f, skipWS(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return f, false
		}
		j := i + 1
		for j < len(raw) && raw[j] != '"' && raw[j] != '\\' {
			j++
		}
		if j >= len(raw) || raw[j] != '"' {
			return f, false
		}
		key := raw[i+1 : j]
		i = skipWS(raw, j+1)
		if i >= len(raw) || raw[i] != ':' {
			return f, false
		}
		i = skipWS(raw, i+1)
		end, vok := valueEnd(raw, i)
		if !vok {
			return f, false
		}
		val := raw[i:end]
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
			return f, false
		}
		if *slot != nil {
			return f, false
		}
		*slot = val
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
			continue
		}
		if i < len(raw) && raw[i] == '}' {
			return f, skipWS(raw, i+1) == len(raw)
		}
		return f, false
	}
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
	if !validJSON(raw) {
		return Event{}, false
	}
	f, ok := scanEnvelope(raw)
	if !ok || f.typ == nil || f.seq == nil || f.time == nil {
		return Event{}, false
	}
	typ, ok := plainString(f.typ)
	if !ok || typ == "" {
		return Event{}, false
	}
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
		if !isCompact(f.data) {
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

// plainString decodes a JSON string without escapes.
func plainString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	for _, c := range b[1 : len(b)-1] {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
	}
	return string(b[1 : len(b)-1]), true
}

// intArray decodes a JSON array of integers.
func intArray(b []byte) ([]int, bool) {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, false
	}
	out := []int{}
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
