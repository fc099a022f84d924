package acpserver

import (
	"context"
	"strconv"

	"github.com/reel-agent/reel/agent"
)

// A loaded session's retold history is written here straight from the
// log's bytes (agent.PlainRetell): a text part's JSON string and a tool
// result's texts go into their frames re-escaped as the SDK escapes
// them, with no decoded string and no acp struct between; a tool call's
// tool_call is written from the call, with no acp struct or options. The
// frames are appendUpdateFrame's of the same updates byte for byte
// (retellframe_test.go, FuzzRetellFrames, FuzzToolStartFrames, and
// TestPlainRetellIsDecodedRetell over a whole load); anything the
// re-escaping does not take (a \u escape, a byte past ASCII) is retold
// the decoded way.

var _ agent.PlainRetell = updates{}

// RetellText implements agent.PlainRetell.
func (u updates) RetellText(ctx context.Context, kind string, quoted []byte) bool {
	var update, role string
	switch kind {
	case agent.RetellUser:
		update, role = "user_message_chunk", "user"
	case agent.RetellAnswer:
		update, role = "agent_message_chunk", "assistant"
	case agent.RetellThought:
		update, role = "agent_thought_chunk", "assistant"
	default:
		return false
	}
	if u.batch == nil || u.srv.out == nil || u.srv.decodedRetell || ctx.Err() != nil {
		return false
	}
	id, hasID := u.srv.currentMessageID(u.session, role)
	b, ok := appendTextFrame(u.batch.buf, u.session, update, id, hasID, quoted)
	if !ok {
		return false
	}
	u.batched(b)
	return true
}

// RetellToolEnd implements agent.PlainRetell.
func (u updates) RetellToolEnd(ctx context.Context, id []byte, texts [][]byte, isError bool) bool {
	if u.batch == nil || u.srv.out == nil || u.srv.decodedRetell || ctx.Err() != nil {
		return false
	}
	b, ok := appendToolEndFrame(u.batch.buf, u.session, id, texts, isError)
	if !ok {
		return false
	}
	u.batched(b)
	return true
}

// retellToolStart writes the tool_call of c into the batch of a retold
// history directly (appendToolStartFrame); false when it is not written
// so (not retelling, or a call appendToolStartFrame leaves to the SDK's
// struct).
func (u updates) retellToolStart(ctx context.Context, c agent.ToolCall) bool {
	if u.batch == nil || u.srv.out == nil || u.srv.decodedRetell || ctx.Err() != nil {
		return false
	}
	b, ok := appendToolStartFrame(u.batch.buf, u.session, &c)
	if !ok {
		return false
	}
	u.batched(b)
	return true
}

// appendToolStartFrame appends the frame of the tool_call of c starting
// (toolStartUpdate) as appendUpdateFrame writes it, from c itself: no acp
// struct, no options. ok false (b unchanged) for a call whose input is
// not an object of plain strings (plainSortedObject) or whose line
// float64 cannot hold: those go through the struct.
func appendToolStartFrame(b []byte, session string, c *agent.ToolCall) ([]byte, bool) {
	if !plainSortedObject(c.Arguments) {
		return b, false
	}
	start := len(b)
	b = appendFrameHead(b, session)
	b = append(b, '{')
	if c.Kind != "" {
		b = append(b, `"kind":`...)
		b = appendJSONString(b, string(c.Kind), true)
		b = append(b, ',')
	}
	if len(c.Locations) > 0 {
		b = append(b, `"locations":[`...)
		for i, l := range c.Locations {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			if l.Line > 0 {
				if l.Line > 1<<53 {
					return b[:start], false
				}
				b = append(b, `"line":`...)
				b = strconv.AppendInt(b, int64(l.Line), 10)
				b = append(b, ',')
			}
			b = append(b, `"path":`...)
			b = appendJSONString(b, l.Path, true)
			b = append(b, '}')
		}
		b = append(b, "],"...)
	}
	b = append(b, `"rawInput":`...)
	b = append(b, c.Arguments...)
	b = append(b, `,"sessionUpdate":"tool_call","status":"pending","title":`...)
	b = appendJSONString(b, c.Title, true)
	b = append(b, `,"toolCallId":`...)
	b = appendJSONString(b, c.ID, true)
	return append(b, "}}}\n"...), true
}

// batched takes b, the batch with a frame appended, flushing it once it
// is large.
func (u updates) batched(b []byte) {
	u.batch.buf = b
	if len(u.batch.buf) >= batchFlush {
		if err := u.srv.flush(u.batch); err != nil {
			u.srv.log.Debug("session/update not delivered", "session", u.session, "err", err)
		}
	}
}

// appendFrameHead appends a session/update frame's opening up to its
// update.
func appendFrameHead(b []byte, session string) []byte {
	b = append(b, notifyPrefix...)
	b = append(b, `{"sessionId":`...)
	b = appendJSONString(b, session, false)
	return append(b, `,"update":`...)
}

// appendTextFrame appends the frame of a text chunk (update the chunk's
// sessionUpdate, id its messageId when hasID) whose text is the JSON
// string quoted: appendUpdateFrame's of that update. ok false (b
// unchanged) when quoted is not re-escaped here.
func appendTextFrame(b []byte, session, update, id string, hasID bool, quoted []byte) ([]byte, bool) {
	start := len(b)
	b = appendFrameHead(b, session)
	b = append(b, `{"content":{"text":"`...)
	b, ok := appendReescaped(b, quoted)
	if !ok {
		return b[:start], false
	}
	b = append(b, `","type":"text"}`...)
	if hasID {
		b = append(b, `,"messageId":`...)
		b = appendJSONString(b, id, true)
	}
	b = append(b, `,"sessionUpdate":"`...)
	b = append(b, update...)
	return append(b, "\"}}}\n"...), true
}

// appendToolEndFrame appends the frame of the tool_call_update of a call
// that ended without a diff (toolEndUpdate): call id the JSON string id,
// its output the texts' strings joined. ok false (b unchanged) when a
// string is not re-escaped here.
func appendToolEndFrame(b []byte, session string, id []byte, texts [][]byte, isError bool) ([]byte, bool) {
	start := len(b)
	b = appendFrameHead(b, session)
	b = append(b, `{"content":[{"content":{"text":"`...)
	textAt := len(b)
	for _, t := range texts {
		var ok bool
		if b, ok = appendReescaped(b, t); !ok {
			return b[:start], false
		}
	}
	text := len(b) - textAt
	b = append(b, `","type":"text"},"type":"content"}],"rawOutput":{`...)
	if isError {
		b = append(b, `"isError":true,`...)
	}
	b = append(b, `"output":"`...)
	// The same text again (b may move as it grows: copied by offset).
	b = append(b, make([]byte, text)...)
	copy(b[len(b)-text:], b[textAt:textAt+text])
	b = append(b, `"},"sessionUpdate":"tool_call_update","status":`...)
	if isError {
		b = append(b, `"failed"`...)
	} else {
		b = append(b, `"completed"`...)
	}
	b = append(b, `,"toolCallId":"`...)
	b, ok := appendReescaped(b, id)
	if !ok {
		return b[:start], false
	}
	return append(b, "\"}}}\n"...), true
}

// appendReescaped appends the content of the JSON string quoted (quotes
// included; nil for an absent string, the empty one) as appendJSONString
// writes the string it holds: '<', '>' and '&' as \u escapes, the
// escapes \b \f \n \r \t \" \\ kept, \/ as '/'. ok false for a string of
// anything else — a \u escape, a byte past ASCII, a raw control
// character, a stray quote — which is left to the decoded path.
func appendReescaped(b, quoted []byte) ([]byte, bool) {
	const hex = "0123456789abcdef"
	if quoted == nil {
		return b, true
	}
	if len(quoted) < 2 || quoted[0] != '"' || quoted[len(quoted)-1] != '"' {
		return b, false
	}
	in := quoted[1 : len(quoted)-1]
	start := 0
	for i := 0; i < len(in); i++ {
		switch c := in[i]; {
		case c >= 0x80 || c < 0x20 || c == '"':
			return b, false
		case c == '<' || c == '>' || c == '&':
			b = append(b, in[start:i]...)
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		case c == '\\':
			if i+1 >= len(in) {
				return b, false
			}
			b = append(b, in[start:i]...)
			switch e := in[i+1]; e {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				b = append(b, '\\', e)
			case '/':
				b = append(b, '/')
			default:
				return b, false
			}
			i++
			start = i + 1
		}
	}
	return append(b, in[start:]...), true
}
