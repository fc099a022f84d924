package sessionlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// TurnData is the data of turn/start.
type TurnData struct {
	Turn int `json:"turn"`
}

// StepData is the data of step/start and step/end.
type StepData struct {
	Turn int `json:"turn"`
	Step int `json:"step"`
}

// Turn-end reason kinds.
const (
	EndCompleted   = "completed"
	EndAborted     = "aborted"
	EndBlocked     = "blocked"
	EndError       = "error"
	EndMaxTokens   = "max-tokens"
	EndInterrupted = "interrupted"
)

// TurnEndData is the data of turn/end.
type TurnEndData struct {
	Turn   int           `json:"turn"`
	Reason TurnEndReason `json:"reason"`
}

// TurnEndReason says why a turn ended. Reason and Error carry kind-specific
// detail (the abort cause; the error message and code). Build one with
// Completed, EndedWith, Aborted or Failed.
type TurnEndReason struct {
	Kind   string       `json:"kind"`
	Reason *AbortCause  `json:"reason,omitempty"`
	Error  *ReasonError `json:"error,omitempty"`
}

// AbortCause is the cause of an aborted turn: {"kind":"user"} when the user
// cancelled it.
type AbortCause struct {
	Kind string `json:"kind"`
}

// ReasonError is a failure's message and code: the error of an error turn
// end, and the failure of an llm/retry.
type ReasonError struct {
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

// ToolCallData is the data of tool/call.
type ToolCallData struct {
	Turn      int    `json:"turn"`
	Step      int    `json:"step"`
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// MessageData is the data shape shared by assistant/message and tool/result:
// the projected model message lives under "message".
type MessageData struct {
	Turn        int             `json:"turn"`
	Step        int             `json:"step"`
	Message     json.RawMessage `json:"message"`
	Usage       json.RawMessage `json:"usage,omitempty"`
	Interrupted bool            `json:"interrupted,omitempty"`
}

// ChunkData is the data of assistant/chunk; Chunk stays raw (its vocabulary
// belongs to the model layer).
type ChunkData struct {
	Turn  int             `json:"turn"`
	Step  int             `json:"step"`
	Chunk json.RawMessage `json:"chunk"`
}

// SandboxModeData is the data of sandbox/mode.
type SandboxModeData struct {
	Mode   string `json:"mode"`
	Source string `json:"source,omitempty"`
}

// ApprovalPolicyData is the data of approval/policy.
type ApprovalPolicyData struct {
	Policy string `json:"policy"`
	Source string `json:"source,omitempty"`
}

// Message is the parsed form of a model message (user/message data, and the
// message of assistant/message and tool/result).
type Message struct {
	Role    string          `json:"role"`
	Content []Part          `json:"content"`
	ID      string          `json:"id,omitempty"`
	Source  json.RawMessage `json:"source,omitempty"`
}

// Part is one content part of a message: text, reasoning, tool-call or
// tool-result (whose Content nests further parts).
type Part struct {
	Type       string `json:"type"`
	Text       string `json:"text,omitempty"`
	ID         string `json:"id,omitempty"`
	Name       string `json:"name,omitempty"`
	Arguments  string `json:"arguments,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	IsError    bool   `json:"isError,omitempty"`
	Content    []Part `json:"content,omitempty"`
	// Attachment is an image part's reference (payload_image.go).
	Attachment *ImageAttachment `json:"attachment,omitempty"`
}

// DecodeData decodes e.Data into T, with an error naming the event.
func DecodeData[T any](e *Event) (T, error) {
	return decodeData[T](e, false)
}

// DecodeValidData is DecodeData of an event whose data is known to be
// valid JSON (Log.DataValid says so of a loaded event's data): the data is
// not checked again on the way to its members. Of data that is not valid
// JSON its result is undefined (reads stay within the data).
func DecodeValidData[T any](e *Event) (T, error) {
	return decodeData[T](e, true)
}

// decodeData is DecodeData; valid says e.Data is known to be valid JSON.
func decodeData[T any](e *Event, valid bool) (T, error) {
	var v T
	if e.Data == nil {
		return v, invalidf(e, "no data")
	}
	if fastData(e.Data, &v, valid) {
		return v, nil
	}
	if err := json.Unmarshal(e.Data, &v); err != nil {
		return v, invalidf(e, "data: %v", err)
	}
	return v, nil
}

// fastData decodes data into *v by hand for the data every turn logs
// (tool calls, request contexts, request headers, turn ends) when each member is plain: a
// string, an integer in an int (message_decode.go). false leaves v
// to json.Unmarshal (data_fast_internal_test.go holds the two alike).
func fastData(data []byte, v any, valid bool) bool {
	members := ObjectMembers
	if valid {
		members = objectMembersValid
	}
	switch p := v.(type) {
	case *TurnData:
		var m [1]json.RawMessage
		if !members(data, []string{"turn"}, m[:]) {
			return false
		}
		d := TurnData{}
		if !fastInt(m[0], &d.Turn) {
			return false
		}
		*p = d
		return true
	case *StepData:
		var m [2]json.RawMessage
		if !members(data, []string{"turn", "step"}, m[:]) {
			return false
		}
		d := StepData{}
		if !fastInt(m[0], &d.Turn) || !fastInt(m[1], &d.Step) {
			return false
		}
		*p = d
		return true
	case *ToolCallData:
		var m [5]json.RawMessage
		if !members(data, []string{"turn", "step", "callId", "name", "arguments"}, m[:]) {
			return false
		}
		d := ToolCallData{}
		if !fastInt(m[0], &d.Turn) || !fastInt(m[1], &d.Step) || !fastStr(m[2], &d.CallID) || !fastStr(m[3], &d.Name) || !fastStr(m[4], &d.Arguments) {
			return false
		}
		*p = d
		return true
	case *RequestContextData:
		var m [4]json.RawMessage
		if !members(data, []string{"provider", "model", "contextWindow", "reasoningEffort"}, m[:]) {
			return false
		}
		d := RequestContextData{}
		if !fastStr(m[0], &d.Provider) || !fastStr(m[1], &d.Model) || !fastInt(m[2], &d.ContextWindow) || !fastStr(m[3], &d.ReasoningEffort) {
			return false
		}
		*p = d
		return true
	case *RequestHeaderData:
		var m [2]json.RawMessage
		if !members(data, []string{"header", "reason"}, m[:]) {
			return false
		}
		d := RequestHeaderData{}
		if !fastStr(m[1], &d.Reason) {
			return false
		}
		if m[0] != nil {
			d.Header = bytes.Clone(m[0]) // json.Unmarshal copies a RawMessage
		}
		*p = d
		return true
	case *TurnEndData:
		var m [2]json.RawMessage
		if !members(data, []string{"turn", "reason"}, m[:]) {
			return false
		}
		d := TurnEndData{}
		if !fastInt(m[0], &d.Turn) {
			return false
		}
		if m[1] != nil {
			var r [3]json.RawMessage
			if m[1][0] != '{' || !members(m[1], []string{"kind", "reason", "error"}, r[:]) || r[1] != nil || r[2] != nil || !fastStr(r[0], &d.Reason.Kind) {
				return false
			}
		}
		*p = d
		return true
	}
	return false
}

// fastStr decodes a member's string value into *s (left alone for an
// absent member); false for a value fastString does not read.
func fastStr(val json.RawMessage, s *string) bool {
	if val == nil {
		return true
	}
	v, _, ok := fastString(val, 0)
	if ok {
		*s = v
	}
	return ok
}

// fastInt decodes a member's integer value into *n (left alone for an
// absent member); false for anything but digits, maybe after a minus,
// that fit an int.
func fastInt(val json.RawMessage, n *int) bool {
	if val == nil {
		return true
	}
	digits := val
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	v, err := strconv.Atoi(string(val))
	if err != nil {
		return false
	}
	*n = v
	return true
}

// ToolCallIDs lists the tool-call ids of a message's tool-call parts.
func (m *Message) ToolCallIDs() []string {
	var ids []string
	for _, p := range m.Content {
		if p.Type == "tool-call" {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// Text joins the message's text parts.
func (m *Message) Text() string {
	var s string
	for _, p := range m.Content {
		if p.Type == "text" {
			s += p.Text
		}
	}
	return s
}

// ProjectMessage returns the model message an event on the surface produces:
// the data of user/message, the data.message of assistant/message and
// tool/result. It is the one projection every consumer uses.
func ProjectMessage(e *Event) (json.RawMessage, error) {
	return projectMessage(e, false)
}

// projectMessage is ProjectMessage; valid says e's data is known to be
// valid JSON (Log.DataValid), and then it is not checked again.
func projectMessage(e *Event, valid bool) (json.RawMessage, error) {
	var m json.RawMessage
	switch e.Type {
	case TypeUserMessage:
		if e.Data == nil {
			return nil, invalidf(e, "no data")
		}
		m = e.Data
	case TypeAssistantMessage, TypeToolResult:
		var msg json.RawMessage
		var ok bool
		if valid {
			msg, ok = objectMemberValid(e.Data, "message")
		} else {
			msg, ok = objectMember(e.Data, "message")
		}
		if !ok {
			return nil, invalidf(e, "data has no message")
		}
		m = msg
	default:
		return nil, invalidf(e, "%s is not a surface event type", e.Type)
	}
	if t := bytes.TrimLeft(m, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, invalidf(e, "the message is not a JSON object")
	}
	return m, nil
}

// objectMember returns the value of member name of the JSON object data
// as it stands in data (a subslice, not a copy: a long message is not
// held twice), found as encoding/json finds the member a struct field of
// that name decodes: the key matched case-insensitively after unescaping,
// the last match winning. ok is false when data is not valid JSON, not an
// object, or has no such member.
func objectMember(data []byte, name string) (val json.RawMessage, ok bool) {
	if !validJSON(data) {
		return nil, false
	}
	return objectMemberValid(data, name)
}

// objectMemberValid is objectMember of data known to be valid JSON.
func objectMemberValid(data []byte, name string) (val json.RawMessage, ok bool) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i = skipWS(data, i+1)
	for i < len(data) && data[i] == '"' {
		kend, _ := valueEnd(data, i)
		key := data[i:kend]
		i = skipWS(data, kend)
		i = skipWS(data, i+1) // the colon
		vend, _ := valueEnd(data, i)
		if keyMatches(key, name) {
			val, ok = data[i:vend:vend], true
		}
		i = skipWS(data, vend)
		if i < len(data) && data[i] == ',' {
			i = skipWS(data, i+1)
		}
	}
	return val, ok
}

// ObjectMembers sets vals[k] to the value of member names[k] of the JSON
// object data, as it stands in data (not a copy; nil when there is no
// such member), each found as encoding/json finds the member a struct
// field of that name decodes (the key matched case-insensitively after
// unescaping); ok is false when data is not valid JSON, not an object, or
// has two members for one name (encoding/json would decode both into the
// field, one after the other: the caller decodes data with it instead).
// Readers of a few members of many events use it instead of decoding each
// event whole. At most 64 names.
func ObjectMembers(data []byte, names []string, vals []json.RawMessage) (ok bool) {
	clear(vals)
	// One pass checks data and finds its members (up to eight).
	var top topMembers
	v := validator{b: data, top: &top}
	if !v.valid() {
		return false
	}
	if i := skipWS(data, 0); data[i] != '{' {
		return false
	}
	if top.over {
		return objectMembersValid(data, names, vals)
	}
	var found uint64
	for m := range top.n {
		key := data[top.key[m][0]:top.key[m][1]]
		for k, name := range names {
			if keyMatches(key, name) {
				if found&(1<<k) != 0 {
					return false
				}
				found |= 1 << k
				vals[k] = data[top.val[m][0]:top.val[m][1]:top.val[m][1]]
			}
		}
	}
	return true
}

// ChunkHead reads an assistant/chunk's turn, step and chunk type as
// json.Unmarshal into struct{ Turn, Step int; Chunk struct{ Type string } }
// reads them (members found as ObjectMembers finds them), data checked
// once; ok is false unless all three are there and plain (integers in an
// int, a string fastString reads), and then the caller decodes the data
// with encoding/json.
func ChunkHead(data []byte) (turn, step int, chunkType string, ok bool) {
	return chunkHead(data, false)
}

// ChunkHeadValid is ChunkHead of data known to be valid JSON (Log.DataValid
// says so of a loaded event's data): the data is not checked again. Of
// data that is not valid JSON its result is undefined (reads stay within
// data).
func ChunkHeadValid(data []byte) (turn, step int, chunkType string, ok bool) {
	return chunkHead(data, true)
}

// chunkHead is ChunkHead; valid says data is known to be valid JSON.
func chunkHead(data []byte, valid bool) (turn, step int, chunkType string, ok bool) {
	if valid {
		if turn, step, chunkType, ok = canonicalChunkHead(data); ok {
			return turn, step, chunkType, true
		}
	}
	var head, inner [3]json.RawMessage
	names := []string{"turn", "step", "chunk"}
	var found bool
	if valid {
		found = objectMembersValid(data, names, head[:])
	} else {
		found = ObjectMembers(data, names, head[:])
	}
	if !found || head[0] == nil || head[1] == nil || head[2] == nil || head[2][0] != '{' {
		return 0, 0, "", false
	}
	if !objectMembersValid(head[2], []string{"type"}, inner[:1]) || inner[0] == nil {
		return 0, 0, "", false
	}
	if !fastInt(head[0], &turn) || !fastInt(head[1], &step) {
		return 0, 0, "", false
	}
	chunkType, _, ok = fastString(inner[0], 0)
	return turn, step, chunkType, ok
}

// canonicalChunkHead is chunkHead of valid data laid out as the engine
// writes a chunk, {"turn":T,"step":S,"chunk":{"type":"K",…}} (no
// whitespace, K without escapes), in one walk of the data: the chunk's
// other members are skipped (none may be another "type" in any case) and
// nothing may follow it. ok false for any other layout, which the member
// walk reads.
func canonicalChunkHead(data []byte) (turn, step int, chunkType string, ok bool) {
	i, ok := lit(data, 0, `{"turn":`)
	if !ok {
		return 0, 0, "", false
	}
	var num []byte
	if num, i = digitsAt(data, i); len(num) == 0 || !fastInt(num, &turn) {
		return 0, 0, "", false
	}
	if i, ok = lit(data, i, `,"step":`); !ok {
		return 0, 0, "", false
	}
	if num, i = digitsAt(data, i); len(num) == 0 || !fastInt(num, &step) {
		return 0, 0, "", false
	}
	if i, ok = lit(data, i, `,"chunk":{"type":"`); !ok {
		return 0, 0, "", false
	}
	j := i
	for j < len(data) && data[j] != '"' && data[j] != '\\' && data[j] < utf8.RuneSelf {
		j++
	}
	if j >= len(data) || data[j] != '"' {
		return 0, 0, "", false
	}
	typ := data[i:j]
	i = j + 1
	// The chunk's other members: a key (no escapes, not "type" in any
	// case) and its value, each.
	for i+1 < len(data) && data[i] == ',' && data[i+1] == '"' {
		kend, kok := stringEnd(data, i+1)
		if !kok {
			return 0, 0, "", false
		}
		key := data[i+2 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 || bytes.EqualFold(key, []byte("type")) || kend >= len(data) || data[kend] != ':' {
			return 0, 0, "", false
		}
		vend, vok := valueEnd(data, kend+1)
		if !vok {
			return 0, 0, "", false
		}
		i = vend
	}
	if string(data[i:]) != "}}" {
		return 0, 0, "", false
	}
	return turn, step, knownString(typ), true
}

// lit reports whether the literal s stands at b[i:], and the index after.
func lit(b []byte, i int, s string) (int, bool) {
	if len(b)-i < len(s) || string(b[i:i+len(s)]) != s {
		return i, false
	}
	return i + len(s), true
}

// digitsAt is the run of a minus and digits at b[i] (what fastInt reads;
// empty, not nil, when there is none: fastInt takes nil for an absent
// member) and the index after it.
func digitsAt(b []byte, i int) ([]byte, int) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	return b[i:j], j
}

// objectMembersValid is ObjectMembers of data known to be valid JSON.
func objectMembersValid(data []byte, names []string, vals []json.RawMessage) (ok bool) {
	var found uint64
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipWS(data, i+1)
	for i < len(data) && data[i] == '"' {
		kend, _ := valueEnd(data, i)
		key := data[i:kend]
		i = skipWS(data, kend)
		i = skipWS(data, i+1) // the colon
		vend, _ := valueEnd(data, i)
		for k, name := range names {
			if keyMatches(key, name) {
				if found&(1<<k) != 0 {
					return false
				}
				found |= 1 << k
				vals[k] = data[i:vend:vend]
			}
		}
		i = skipWS(data, vend)
		if i < len(data) && data[i] == ',' {
			i = skipWS(data, i+1)
		}
	}
	return true
}

// keyMatches reports whether the quoted key names member name, as
// encoding/json matches a struct field (case-insensitively).
func keyMatches(quoted []byte, name string) bool {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return bytes.EqualFold(quoted[1:len(quoted)-1], []byte(name))
	}
	var k string
	if err := json.Unmarshal(quoted, &k); err != nil {
		return false
	}
	return bytes.EqualFold([]byte(k), []byte(name))
}

// ParseMessage decodes a projected message.
func ParseMessage(raw json.RawMessage) (Message, error) {
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("message: %w", err)
	}
	return m, nil
}
