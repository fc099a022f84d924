package acpserver

import (
	"context"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

// A session/update frame is encoded here once and written to the
// connection, not handed to the SDK: its SessionNotification goes through
// encoding/json's reflection three times per update (the variant, a map
// copy of it, then the whole message again around the params), and every
// frame the SDK writes is probed for an id on its way out. The bytes are
// the SDK's exactly (updateframe_test.go checks them against it): the
// updates reel sends most (text chunks, tool calls and their updates) are
// written directly, keys sorted as the SDK's map copy sorts them; any other
// update is marshalled once and wrapped.

// notifyPrefix opens every session/update frame, as the SDK writes it.
const notifyPrefix = `{"jsonrpc":"2.0","method":"session/update","params":`

// frameBatch collects session/update frames to be written as one (a
// loaded session's retold history); flush writes them.
type frameBatch struct {
	buf []byte
}

// batchFlush is the size past which a batch is written out.
const batchFlush = 64 << 10

// sendUpdate writes the session/update frame of u on session — or, with
// batch, appends it to batch, written once the batch is large. Without a
// frame writer (no Serve) it goes through the SDK.
func (srv *Server) sendUpdate(ctx context.Context, batch *frameBatch, session string, u acp.SessionUpdate) error {
	if srv.out == nil {
		return srv.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: acp.SessionId(session), Update: u})
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if batch == nil {
		frame, err := appendUpdateFrame(nil, session, u)
		if err != nil {
			return err
		}
		return srv.out.writeNotifications(frame)
	}
	buf, err := appendUpdateFrame(batch.buf, session, u)
	if err != nil {
		return err
	}
	batch.buf = buf
	if len(batch.buf) >= batchFlush {
		return srv.flush(batch)
	}
	return nil
}

// flush writes what batch holds.
func (srv *Server) flush(batch *frameBatch) error {
	if batch == nil || len(batch.buf) == 0 {
		return nil
	}
	err := srv.out.writeNotifications(batch.buf)
	batch.buf = batch.buf[:0]
	return err
}

// appendUpdateFrame appends the session/update notification frame of u on
// session, newline included, to b.
func appendUpdateFrame(b []byte, session string, u acp.SessionUpdate) ([]byte, error) {
	start := len(b)
	b = append(b, notifyPrefix...)
	b = append(b, `{"sessionId":`...)
	b = appendJSONString(b, session, false)
	b = append(b, `,"update":`...)
	if nb, ok := appendUpdate(b, &u); ok {
		return append(nb, "}}\n"...), nil
	}
	params, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(session), Update: u})
	if err != nil {
		return b[:start], err
	}
	b = append(b[:start], notifyPrefix...)
	b = append(b, params...)
	return append(b, "}\n"...), nil
}

// appendUpdate appends u as the SDK encodes it when it is one of the
// shapes written directly; ok false (b unusable) for any other.
func appendUpdate(b []byte, u *acp.SessionUpdate) (_ []byte, ok bool) {
	// The SDK encodes the first variant set, in this order.
	switch {
	case u.UserMessageChunk != nil:
		c := u.UserMessageChunk
		return appendChunk(b, c.Meta, c.MessageId, &c.Content, "user_message_chunk")
	case u.AgentMessageChunk != nil:
		c := u.AgentMessageChunk
		return appendChunk(b, c.Meta, c.MessageId, &c.Content, "agent_message_chunk")
	case u.AgentThoughtChunk != nil:
		c := u.AgentThoughtChunk
		return appendChunk(b, c.Meta, c.MessageId, &c.Content, "agent_thought_chunk")
	case u.ToolCall != nil:
		return appendToolCall(b, u.ToolCall)
	case u.ToolCallUpdate != nil:
		return appendToolCallUpdate(b, u.ToolCallUpdate)
	}
	return b, false
}

// appendChunk appends a message chunk holding a text block.
func appendChunk(b []byte, meta map[string]any, messageID *string, c *acp.ContentBlock, kind string) ([]byte, bool) {
	if meta != nil {
		return b, false
	}
	b = append(b, `{"content":`...)
	b, ok := appendTextBlock(b, c)
	if !ok {
		return b, false
	}
	if messageID != nil {
		b = append(b, `,"messageId":`...)
		b = appendJSONString(b, *messageID, true)
	}
	b = append(b, `,"sessionUpdate":"`...)
	b = append(b, kind...)
	return append(b, `"}`...), true
}

// appendTextBlock appends a text content block (the SDK keeps only its
// text and type).
func appendTextBlock(b []byte, c *acp.ContentBlock) ([]byte, bool) {
	if c.Text == nil {
		return b, false
	}
	b = append(b, `{"text":`...)
	b = appendJSONString(b, c.Text.Text, true)
	return append(b, `,"type":"text"}`...), true
}

// appendToolCall appends a tool_call without meta or raw output.
func appendToolCall(b []byte, c *acp.SessionUpdateToolCall) ([]byte, bool) {
	if c.Meta != nil || c.RawOutput != nil {
		return b, false
	}
	var rawInput []byte
	if c.RawInput != nil {
		raw, isRaw := c.RawInput.(json.RawMessage)
		if !isRaw || len(raw) == 0 {
			return b, false
		}
		// The SDK's map copy decodes the input to Go values: keys come
		// out sorted and numbers as float64 write them. An object of
		// plain strings, keys sorted, comes out as it went in.
		if plainSortedObject(raw) {
			rawInput = raw
		} else {
			var v any
			if json.Unmarshal(raw, &v) != nil {
				return b, false
			}
			enc, err := json.Marshal(v)
			if err != nil {
				return b, false
			}
			rawInput = enc
		}
	}
	b = append(b, '{')
	b, ok := appendContents(b, c.Content)
	if !ok {
		return b, false
	}
	if c.Kind != "" {
		b = append(b, `"kind":`...)
		b = appendJSONString(b, string(c.Kind), true)
		b = append(b, ',')
	}
	if len(c.Locations) > 0 {
		if b, ok = appendLocations(b, c.Locations); !ok {
			return b, false
		}
	}
	if rawInput != nil {
		b = append(b, `"rawInput":`...)
		b = append(b, rawInput...)
		b = append(b, ',')
	}
	b = append(b, `"sessionUpdate":"tool_call",`...)
	if c.Status != "" {
		b = append(b, `"status":`...)
		b = appendJSONString(b, string(c.Status), true)
		b = append(b, ',')
	}
	b = append(b, `"title":`...)
	b = appendJSONString(b, c.Title, true)
	b = append(b, `,"toolCallId":`...)
	b = appendJSONString(b, string(c.ToolCallId), true)
	return append(b, '}'), true
}

// plainSortedObject reports whether raw is exactly {"k":"v",…}: no
// whitespace, keys in strictly increasing byte order, keys and values of
// printable ASCII that encoding/json writes as it is (no quote, backslash,
// '<', '>' or '&'). Such an object is its own encoding after a decode into
// Go values and an encode (the SDK's map copy of a tool call's input).
func plainSortedObject(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return false
	}
	if len(raw) == 2 {
		return true
	}
	var prev []byte
	i := 1
	for k := 0; ; k++ {
		key, next, ok := plainQuoted(raw, i)
		if !ok || (k > 0 && string(key) <= string(prev)) || next >= len(raw) || raw[next] != ':' {
			return false
		}
		prev = key
		if _, next, ok = plainQuoted(raw, next+1); !ok || next >= len(raw) {
			return false
		}
		switch {
		case raw[next] == ',':
			i = next + 1
		case next == len(raw)-1:
			return true
		default:
			return false
		}
	}
}

// plainQuoted reads a string of plain characters (plainSortedObject) at
// raw[i]: its content and the index after its closing quote.
func plainQuoted(raw []byte, i int) ([]byte, int, bool) {
	if i >= len(raw) || raw[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '"':
			return raw[i+1 : j], j + 1, true
		case c < 0x20 || c > 0x7e || c == '\\' || c == '<' || c == '>' || c == '&':
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// appendToolCallUpdate appends a tool_call_update that sets only its
// status, content and a raw output as a finished call's (rawOutput).
func appendToolCallUpdate(b []byte, c *acp.SessionToolCallUpdate) ([]byte, bool) {
	if c.Meta != nil || c.Kind != nil || len(c.Locations) > 0 || c.RawInput != nil || c.Title != nil {
		return b, false
	}
	b = append(b, '{')
	b, ok := appendContents(b, c.Content)
	if !ok {
		return b, false
	}
	if c.RawOutput != nil {
		if b, ok = appendRawOutput(b, c.RawOutput); !ok {
			return b, false
		}
	}
	b = append(b, `"sessionUpdate":"tool_call_update",`...)
	if c.Status != nil {
		b = append(b, `"status":`...)
		b = appendJSONString(b, string(*c.Status), true)
		b = append(b, ',')
	}
	b = append(b, `"toolCallId":`...)
	b = appendJSONString(b, string(c.ToolCallId), true)
	return append(b, '}'), true
}

// appendRawOutput appends `"rawOutput":{…},` for the raw output of a
// finished call, {"output": text} with "isError": true when it failed
// (rawOutput in turns.go), keys sorted as the SDK's map copy sorts them
// and its strings as that copy writes them again; ok false for any other
// value.
func appendRawOutput(b []byte, v any) ([]byte, bool) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return b, false
	}
	text, isText := m["output"].(string)
	if !isText {
		return b, false
	}
	failed := false
	switch len(m) {
	case 1:
	case 2:
		if f, isBool := m["isError"].(bool); !isBool || !f {
			return b, false
		}
		failed = true
	default:
		return b, false
	}
	b = append(b, `"rawOutput":{`...)
	if failed {
		b = append(b, `"isError":true,`...)
	}
	b = append(b, `"output":`...)
	b = appendJSONString(b, text, true)
	return append(b, "},"...), true
}

// appendContents appends `"content":[…],` for a non-empty list of text
// and diff contents.
func appendContents(b []byte, cs []acp.ToolCallContent) ([]byte, bool) {
	if len(cs) == 0 {
		return b, true
	}
	b = append(b, `"content":[`...)
	for i := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		c := &cs[i]
		switch {
		case c.Content != nil:
			if c.Content.Meta != nil {
				return b, false
			}
			b = append(b, `{"content":`...)
			var ok bool
			if b, ok = appendTextBlock(b, &c.Content.Content); !ok {
				return b, false
			}
			b = append(b, `,"type":"content"}`...)
		case c.Diff != nil:
			d := c.Diff
			if d.Meta != nil {
				return b, false
			}
			b = append(b, `{"newText":`...)
			b = appendJSONString(b, d.NewText, true)
			if d.OldText != nil {
				b = append(b, `,"oldText":`...)
				b = appendJSONString(b, *d.OldText, true)
			}
			b = append(b, `,"path":`...)
			b = appendJSONString(b, d.Path, true)
			b = append(b, `,"type":"diff"}`...)
		default:
			return b, false
		}
	}
	return append(b, "],"...), true
}

// appendLocations appends `"locations":[…],` (lines float64 can hold
// exactly, as the SDK's map copy writes them).
func appendLocations(b []byte, locs []acp.ToolCallLocation) ([]byte, bool) {
	b = append(b, `"locations":[`...)
	for i, l := range locs {
		if l.Meta != nil {
			return b, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		if l.Line != nil {
			n := *l.Line
			if n > 1<<53 || n < -(1<<53) {
				return b, false
			}
			b = append(b, `"line":`...)
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, ',')
		}
		b = append(b, `"path":`...)
		b = appendJSONString(b, l.Path, true)
		b = append(b, '}')
	}
	return append(b, "],"...), true
}

// appendJSONString appends s as encoding/json writes a string: '<', '>',
// '&', U+2028 and U+2029 escaped. Invalid UTF-8 becomes U+FFFD — raw when
// decoded bytes are what is written (the SDK's map copy decodes the
// escape its first encoding wrote), else as the escape.
func appendJSONString(b []byte, s string, rawReplacement bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			if rawReplacement {
				b = append(b, "\ufffd"...)
			} else {
				b = append(b, `\ufffd`...)
			}
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
