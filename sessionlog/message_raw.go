package sessionlog

import (
	"bytes"
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
	// One walk of the data: its members found as objectMembersValid finds
	// "message" and "meta" (a key that matches one only in another case,
	// or a member twice, is left to DecodeValidMessageData), the message
	// read where it stands.
	r := rawReader{b: data, parts: parts}
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return parts, nil, false
	}
	var message, metaSeen bool
	_, ok = walkObject(data, i, func(key []byte, v int) (int, bool) {
		switch string(key) {
		case "message":
			if message || data[v] != '{' {
				return 0, false
			}
			message = true
			return r.message(v)
		case "meta":
			if metaSeen {
				return 0, false
			}
			metaSeen = true
			end, ok := valueEnd(data, v)
			meta = data[v:end:end]
			return end, ok
		}
		if bytes.EqualFold(key, []byte("message")) || bytes.EqualFold(key, []byte("meta")) {
			return 0, false // the member in another case: json.Unmarshal's to read
		}
		return valueEnd(data, v)
	})
	if !ok || !message {
		return parts, nil, false
	}
	return r.parts, meta, true
}

// ValidMessage reads a message known to be valid JSON (a user/message's
// data, Log.DataValid) as ValidMessageParts reads the message of an
// assistant/message: its parts onto parts, and its source member as it
// stands (nil when absent). It reads exactly the messages DecodeMessage
// reads by hand, and of those the same parts and source
// (message_raw_internal_test.go, FuzzValidMessageParts).
func ValidMessage(data []byte, parts []PlainPart) (_ []PlainPart, source []byte, ok bool) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return parts, nil, false
	}
	r := rawReader{b: data, parts: parts}
	end, ok := r.message(i)
	if !ok || skipWS(data, end) != len(data) {
		return parts, nil, false
	}
	return r.parts, r.source, true
}

// rawReader reads a message as fastMessage does, keeping its parts'
// strings raw.
type rawReader struct {
	b      []byte
	parts  []PlainPart
	source []byte // the message's source member (message)
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
			if end, ok = valueEnd(b, v); ok {
				r.source = b[v:end:end]
			}
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
	return walkObjectArray(r.b, i, func(i int) (int, bool) { return r.part(i, in) })
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
			p.IsError, end, ok = boolAt(b, v)
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
	return walkObject(r.b, i, member)
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
