package sessionlog

import (
	"encoding/json"
	"unicode/utf8"
)

// PlainPart is a content part of a message read without decoding its
// strings (ValidMessageParts): what a loaded session's retelling writes
// into its update frames, straight from the log's bytes.
type PlainPart struct {
	// Type is the part's type ("text", "reasoning", "tool-call",
	// "tool-result", …).
	Type string
	// Text and ToolCallID are the part's members as they stand in the
	// data: JSON strings, quotes and escapes included (nil when absent).
	// Each is a string Unquote reads.
	Text, ToolCallID []byte
	// IsError is the part's isError.
	IsError bool
	// In is the index, in the parts ValidMessageParts returns, of the part
	// whose content holds this one; -1 for a part of the message.
	In int
}

// ValidMessageParts reads the content parts of the message of an
// assistant/message's or a tool/result's data known to be valid JSON
// (Log.DataValid), appended to parts in document order (a part's content
// after it), and the data's meta member as it stands (nil when absent).
// It reads exactly the messages DecodeValidMessageData reads by hand (the
// engine's shapes: plain keys, strings without \u escapes or bytes past
// ASCII), and of those the same parts: a part's Text, unquoted, is the
// Part's Text. ok is false for any other data (then DecodeValidMessageData
// reads it). message_raw_internal_test.go and FuzzValidMessageParts hold
// it to DecodeValidMessageData.
func ValidMessageParts(data []byte, parts []PlainPart) (_ []PlainPart, meta []byte, ok bool) {
	var v [2]json.RawMessage
	if !objectMembersValid(data, []string{"message", "meta"}, v[:]) || v[0] == nil || v[0][0] != '{' {
		return parts, nil, false
	}
	r := rawReader{b: v[0], parts: parts}
	if end, ok := r.message(0); !ok || end != len(v[0]) {
		return parts, nil, false
	}
	return r.parts, v[1], true
}

// rawReader reads a message as fastMessage does, keeping its parts'
// strings raw.
type rawReader struct {
	b     []byte
	parts []PlainPart
}

// message reads the message object at b[i] (fastMessage); it returns the
// object's end.
func (r *rawReader) message(i int) (int, bool) {
	b := r.b
	var seen uint8
	return r.object(i, func(key []byte, v int) (int, bool) {
		var bit uint8
		var end int
		ok := true
		switch string(key) {
		case "role":
			bit = 1
			_, end, ok = rawString(b, v)
		case "content":
			bit = 2
			end, ok = r.partList(v, -1)
		case "id":
			bit = 4
			_, end, ok = rawString(b, v)
		case "source":
			bit = 8
			end, ok = valueEnd(b, v)
		default:
			if foldsTo(string(key), "role", "content", "id", "source") {
				return 0, false
			}
			end, ok = valueEnd(b, v)
		}
		if !ok || seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		return end, true
	})
}

// partList reads an array of parts at b[i] (fastParts), each held by the
// part at index in.
func (r *rawReader) partList(i, in int) (int, bool) {
	b := r.b
	if b[i] != '[' {
		return 0, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '{' {
			return 0, false
		}
		end, ok := r.part(i, in)
		if !ok || end <= i {
			return 0, false
		}
		i = skipWS(b, end)
		if i >= len(b) {
			return 0, false
		}
		if b[i] == ']' {
			return i + 1, true
		}
		if b[i] != ',' {
			return 0, false
		}
		i = skipWS(b, i+1)
	}
}

// part reads a part object at b[i] (fastPart), held by the part at index
// in.
func (r *rawReader) part(i, in int) (int, bool) {
	b := r.b
	at := len(r.parts)
	r.parts = append(r.parts, PlainPart{In: in})
	var seen uint8
	return r.object(i, func(key []byte, v int) (int, bool) {
		var bit uint8
		var end int
		ok := true
		p := &r.parts[at] // parts may grow under a nested content
		switch string(key) {
		case "type":
			bit = 1
			var s []byte
			if s, end, ok = rawString(b, v); ok {
				// A type with escapes is fastPart's to read.
				for _, c := range s {
					ok = ok && c != '\\'
				}
				p.Type = knownString(s[1 : len(s)-1])
			}
		case "text":
			bit = 2
			p.Text, end, ok = rawString(b, v)
		case "id":
			bit = 4
			_, end, ok = rawString(b, v)
		case "name":
			bit = 8
			_, end, ok = rawString(b, v)
		case "arguments":
			bit = 16
			_, end, ok = rawString(b, v)
		case "toolCallId":
			bit = 32
			p.ToolCallID, end, ok = rawString(b, v)
		case "isError":
			bit = 64
			switch {
			case hasWord(b, v, "true"):
				p.IsError, end = true, v+4
			case hasWord(b, v, "false"):
				p.IsError, end = false, v+5
			default:
				ok = false
			}
		case "content":
			bit = 128
			end, ok = r.partList(v, at)
		default:
			if foldsTo(string(key), "type", "text", "id", "name", "arguments", "toolCallId", "isError", "content", "attachment") {
				return 0, false
			}
			end, ok = valueEnd(b, v)
		}
		if !ok || seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		return end, true
	})
}

// object walks the members of the object at b[i] as fastObject does.
func (r *rawReader) object(i int, member func(key []byte, v int) (int, bool)) (int, bool) {
	b := r.b
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		kend, ok := stringEnd(b, i)
		if !ok {
			return 0, false
		}
		key := b[i+1 : kend-1]
		for _, c := range key {
			if c == '\\' || c >= utf8.RuneSelf {
				return 0, false
			}
		}
		i = skipWS(b, kend)
		i = skipWS(b, i+1) // the colon
		if i >= len(b) {
			return 0, false
		}
		end, ok := member(key, i)
		if !ok || end <= i {
			return 0, false
		}
		i = skipWS(b, end)
		if i >= len(b) {
			return 0, false
		}
		if b[i] == '}' {
			return i + 1, true
		}
		if b[i] != ',' {
			return 0, false
		}
		i = skipWS(b, i+1)
	}
}

// rawString is the string at b[i] (valid JSON), quotes included, when
// fastString reads it (no \u escape, no byte past ASCII); ok false for
// anything else.
func rawString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	end, ok := stringEnd(b, i)
	if !ok {
		return nil, 0, false
	}
	s := b[i:end:end]
	for k := 1; k < len(s)-1; k++ {
		switch c := s[k]; {
		case c >= utf8.RuneSelf:
			return nil, 0, false
		case c == '\\':
			k++
			if s[k] == 'u' {
				return nil, 0, false
			}
		}
	}
	return s, end, true
}

// Unquote is the string a PlainPart's member holds (its escapes undone); ""
// for nil.
func Unquote(raw []byte) string {
	if raw == nil {
		return ""
	}
	s, _, _ := fastString(raw, 0)
	return s
}
