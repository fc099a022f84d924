package sessionlog

import (
	"encoding/json"
	"unicode/utf8"
)

// DecodeMessage is json.Unmarshal of raw into a Message: the same message,
// and an error exactly when json.Unmarshal fails. A message of the shapes
// the engine writes (keys as written, strings, text and tool parts) is
// read by hand in one pass after one check of the JSON; anything else —
// a key in another case or with escapes, a member twice, a null, an
// image's attachment, a value of the wrong type — is left to
// json.Unmarshal. A loaded session's retelling decoded every message with
// encoding/json's reflection: a seventh of session/load's CPU.
// message_decode_internal_test.go and FuzzDecodeMessage hold it to
// json.Unmarshal.
func DecodeMessage(raw []byte) (Message, error) {
	if validJSON(raw) {
		var m Message
		if i := skipWS(raw, 0); i < len(raw) && raw[i] == '{' {
			if _, ok := fastMessage(raw, i, &m); ok {
				return m, nil
			}
		}
	}
	var m Message
	err := json.Unmarshal(raw, &m)
	return m, err
}

// fastMessage reads the message object at b[i] (b valid JSON); ok false
// when it is not of a shape read by hand. It returns the object's end.
func fastMessage(b []byte, i int, m *Message) (int, bool) {
	var seen uint8
	return fastObject(b, i, func(key string, v int) (int, bool) {
		var bit uint8
		var end int
		ok := true
		switch key {
		case "role":
			bit = 1
			m.Role, end, ok = fastString(b, v)
		case "content":
			bit = 2
			m.Content, end, ok = fastParts(b, v)
		case "id":
			bit = 4
			m.ID, end, ok = fastString(b, v)
		case "source":
			bit = 8
			end, ok = valueEnd(b, v)
			if ok {
				m.Source = json.RawMessage(append([]byte(nil), b[v:end]...))
			}
		default:
			if foldsTo(key, "role", "content", "id", "source") {
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

// fastParts reads an array of parts at b[i]; a null or anything but an
// array is not read by hand.
func fastParts(b []byte, i int) ([]Part, int, bool) {
	parts := []Part{}
	end, ok := walkObjectArray(b, i, func(i int) (int, bool) {
		var p Part
		end, ok := fastPart(b, i, &p)
		parts = append(parts, p)
		return end, ok
	})
	if !ok {
		return nil, 0, false
	}
	return parts, end, true
}

// walkObjectArray walks the array of objects at b[i] (b valid JSON),
// handing the start of each element to elem, which returns its end; ok
// false when b[i] is not an array, an element is not an object or elem
// refuses. It returns the array's end.
func walkObjectArray(b []byte, i int, elem func(i int) (int, bool)) (int, bool) {
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
		end, ok := elem(i)
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

// fastPart reads a part object at b[i].
func fastPart(b []byte, i int, p *Part) (int, bool) {
	var seen uint8
	return fastObject(b, i, func(key string, v int) (int, bool) {
		var bit uint8
		var end int
		ok := true
		switch key {
		case "type":
			bit = 1
			p.Type, end, ok = fastString(b, v)
		case "text":
			bit = 2
			p.Text, end, ok = fastString(b, v)
		case "id":
			bit = 4
			p.ID, end, ok = fastString(b, v)
		case "name":
			bit = 8
			p.Name, end, ok = fastString(b, v)
		case "arguments":
			bit = 16
			p.Arguments, end, ok = fastString(b, v)
		case "toolCallId":
			bit = 32
			p.ToolCallID, end, ok = fastString(b, v)
		case "isError":
			bit = 64
			p.IsError, end, ok = boolAt(b, v)
		case "content":
			bit = 128
			p.Content, end, ok = fastParts(b, v)
		default:
			// An attachment, or a key another case of a field's, is
			// json.Unmarshal's to read.
			if foldsTo(key, "type", "text", "id", "name", "arguments", "toolCallId", "isError", "content", "attachment") {
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

// fastObject walks the members of the object at b[i] (b valid JSON),
// handing each plain key and the start of its value to member, which
// returns the value's end; ok false when a key has escapes or member
// refuses. It returns the object's end.
func fastObject(b []byte, i int, member func(key string, v int) (int, bool)) (int, bool) {
	return walkObject(b, i, func(key []byte, v int) (int, bool) { return member(string(key), v) })
}

// walkObject is fastObject with each key as the bytes of b.
func walkObject(b []byte, i int, member func(key []byte, v int) (int, bool)) (int, bool) {
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	// b is valid JSON; the checks of progress and bounds only keep a
	// scanning bug from looping or reading past b.
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

// boolAt reads the JSON boolean at b[i]: its value and end; ok false for
// any other value.
func boolAt(b []byte, i int) (v bool, end int, ok bool) {
	switch {
	case hasWord(b, i, "true"):
		return true, i + 4, true
	case hasWord(b, i, "false"):
		return false, i + 5, true
	}
	return false, 0, false
}

// foldsTo reports whether key matches one of names as encoding/json
// matches a field (keys here are ASCII).
func foldsTo(key string, names ...string) bool {
	for _, n := range names {
		if len(n) == len(key) && keyMatches([]byte(`"`+key+`"`), n) {
			return true
		}
	}
	return false
}

// fastString decodes the string at b[i] (valid JSON): without a \u escape
// or a byte past ASCII its escapes are undone by hand; ok false for
// anything else (a null, a non-string, a \u escape, UTF-8).
func fastString(b []byte, i int) (string, int, bool) {
	if b[i] != '"' {
		return "", 0, false
	}
	end, ok := stringEnd(b, i)
	if !ok {
		return "", 0, false
	}
	in := b[i+1 : end-1]
	plain := true
	for _, c := range in {
		if c == '\\' {
			plain = false
		} else if c >= utf8.RuneSelf {
			return "", 0, false
		}
	}
	if plain {
		return knownString(in), end, true
	}
	out := make([]byte, 0, len(in))
	for k := 0; k < len(in); k++ {
		c := in[k]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if k++; k == len(in) {
			return "", 0, false
		}
		switch in[k] {
		case '"', '\\', '/':
			out = append(out, in[k])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default: // \u: surrogates and all
			return "", 0, false
		}
	}
	return string(out), end, true
}

// DecodeMessageData is json.Unmarshal of an assistant/message's or a
// tool/result's data into a struct of its "message" (a Message) and
// "meta" (json.RawMessage) members: the same two, and an error exactly
// when json.Unmarshal fails. data is checked once, the message read as
// DecodeMessage reads it.
func DecodeMessageData(data []byte) (m Message, meta json.RawMessage, err error) {
	return decodeMessageData(data, false)
}

// DecodeValidMessageData is DecodeMessageData of data known to be valid
// JSON (Log.DataValid says so of a loaded event's data): the data is not
// checked again. Of data that is not valid JSON its result is undefined
// (reads stay within data).
func DecodeValidMessageData(data []byte) (m Message, meta json.RawMessage, err error) {
	return decodeMessageData(data, true)
}

// decodeMessageData is DecodeMessageData; valid says data is known to be
// valid JSON.
func decodeMessageData(data []byte, valid bool) (m Message, meta json.RawMessage, err error) {
	var v [2]json.RawMessage
	var found bool
	if valid {
		found = objectMembersValid(data, []string{"message", "meta"}, v[:])
	} else {
		found = ObjectMembers(data, []string{"message", "meta"}, v[:])
	}
	if !found {
		// Not an object, or a member twice: encoding/json's to read.
		var d struct {
			Message Message         `json:"message"`
			Meta    json.RawMessage `json:"meta"`
		}
		err := json.Unmarshal(data, &d)
		return d.Message, d.Meta, err
	}
	if v[0] != nil {
		if v[0][0] != '{' || !fastMessageOK(v[0], &m) {
			m = Message{}
			if err := json.Unmarshal(v[0], &m); err != nil {
				return m, nil, err
			}
		}
	}
	if v[1] != nil {
		meta = append(json.RawMessage(nil), v[1]...)
	}
	return m, meta, nil
}

// fastMessageOK is fastMessage of the object b (valid JSON).
func fastMessageOK(b []byte, m *Message) bool {
	_, ok := fastMessage(b, 0, m)
	return ok
}

// knownString is in as a string, a constant (no copy) for the roles and
// part types every message repeats.
func knownString(in []byte) string {
	switch string(in) {
	case "text":
		return "text"
	case "reasoning":
		return "reasoning"
	case "tool-call":
		return "tool-call"
	case "tool-result":
		return "tool-result"
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	case "tool":
		return "tool"
	// The chunk types (ChunkHead), named by the model layer.
	case "block-start":
		return "block-start"
	case "block-end":
		return "block-end"
	case "text-delta":
		return "text-delta"
	case "reasoning-delta":
		return "reasoning-delta"
	case "tool-call-delta":
		return "tool-call-delta"
	case "usage":
		return "usage"
	case "finish":
		return "finish"
	}
	return string(in)
}
