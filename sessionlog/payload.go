package sessionlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// This file holds the canonical encoders of every event payload reel writes.
//
// Each payload type's AppendJSON writes the exact bytes the recording
// system (dsh, whose encoder is JavaScript's JSON.stringify) writes for the
// same value: its members in dsh's order, strings through AppendString,
// optional members absent rather than empty. The types decode with
// DecodeData (their json tags, or an UnmarshalJSON where order or unknown
// shapes matter), and decoding a logged payload then encoding it gives back
// the logged bytes (TestPayloadCorpusRoundTrip holds every log of the
// conformance corpus to that).
//
// Key orders, as dsh writes them:
//
//	turn/start          {"turn"}
//	step/start|end      {"turn","step"}
//	turn/end            {"turn","reason":{"kind","reason"?:{"kind"},"error"?:{"message","code"}}}
//	user/message        {"content","source"?,"role":"user","id"?}
//	assistant/message   {"turn","step","message":{"role":"assistant","content","source","id"},"usage"?,"interrupted"?}
//	tool/result         {"turn","step","message":{"source","content","role":"user","id"},"meta"?,"error"?}
//	                    (crash repair: "message":{"role","content","source","id"})
//	tool/call           {"turn","step","callId","name","arguments"}
//	assistant/chunk     {"turn","step","chunk"}
//	request/header      {"header":{"config", dsh's other members…,"system"?,"tools"?},"reason"}
//	request/context     {"provider","model","contextWindow"?}
//	sandbox/mode        {"mode","source"?}
//	approval/policy     {"policy","source"?}
//	llm/retry           {"retryId"?,"turn","step","provider","mode"?,"policyKey"?,"retry","maxRetries","delayMs","failure":{"message","code"}}
//	compaction/start    {"turn","step","reason","start","end","messages"}
//	compaction/summary  {"provider","model","maxTokens","rawOutput","usage"?,"llmStreamCall"?}
//	compaction/end      {"turn","step","ok","error"?}
//	hook/invoked        {"turn","point","dialect","handlerId","matcher"?}
//	hook/result         {"turn","point","handlerId","decision","exitCode"?,"stderrSummary"?,"durationMs"}
//
// Content parts are {"type":"text"|"reasoning","text"},
// {"type":"tool-call","id","name","arguments"},
// {"type":"tool-result","toolCallId","content","isError"} and
// {"type":"image","attachment":{"attachmentId","mediaType","width","height","bytes","name"?}};
// any other part (or an image reference in another member order) is kept
// verbatim. A message source is {"kind","provider"?,"model"?,
// "callId"?} followed by any further members, verbatim and in order.

// TypeLLMRetry is the event type of a retried model call: the failure of
// the attempt and when the next one comes.
const TypeLLMRetry = "llm/retry"

// Payload is an event's data with its canonical encoder. AppendJSON appends
// the exact bytes of the data member; it never fails.
//
// Write log bytes with AppendJSON, not json.Marshal: encoding/json escapes
// '<', '>' and '&' (even in a MarshalJSON's output), which JSON.stringify
// does not. The message and part types do implement json.Marshaler, so
// that marshalling one gives its members rather than its Go fields.
type Payload interface {
	AppendJSON(b []byte) []byte
}

// Every payload type, checked at compile time.
var (
	_ Payload = TurnData{}
	_ Payload = StepData{}
	_ Payload = TurnEndData{}
	_ Payload = UserMessage{}
	_ Payload = AssistantMessageData{}
	_ Payload = ToolResultData{}
	_ Payload = ToolCallData{}
	_ Payload = ChunkData{}
	_ Payload = RequestContextData{}
	_ Payload = SandboxModeData{}
	_ Payload = ApprovalPolicyData{}
	_ Payload = LLMRetryData{}
	_ Payload = CompactionStartData{}
	_ Payload = CompactionSummaryData{}
	_ Payload = CompactionEndData{}
	_ Payload = RequestHeaderData{}
	_ Payload = HookInvokedData{}
	_ Payload = HookResultData{}
)

// Content part types.
const (
	PartText       = "text"
	PartReasoning  = "reasoning"
	PartToolCall   = "tool-call"
	PartToolResult = "tool-result"
)

// Message source kinds reel writes. Logs from dsh carry more (plugin,
// agent-instructions, subagent-report, …); MessageSource keeps them all.
const (
	SourceUser       = "user"
	SourceModel      = "model"
	SourceTool       = "tool"
	SourceCompaction = "compaction"
)

// CauseUser is the abort cause of a turn the user cancelled.
const CauseUser = "user"

// Completed is the reason of a turn that ended normally.
func Completed() TurnEndReason { return TurnEndReason{Kind: EndCompleted} }

// EndedWith is a reason of the given kind with no detail: completed,
// max-tokens, blocked or interrupted.
func EndedWith(kind string) TurnEndReason { return TurnEndReason{Kind: kind} }

// Aborted is the reason of an aborted turn: {"kind":"aborted","reason":{"kind":cause}},
// cause being CauseUser when the user cancelled.
func Aborted(cause string) TurnEndReason {
	return TurnEndReason{Kind: EndAborted, Reason: &AbortCause{Kind: cause}}
}

// Failed is the reason of a turn that ended with an error:
// {"kind":"error","error":{"message":message,"code":code}}.
func Failed(message, code string) TurnEndReason {
	return TurnEndReason{Kind: EndError, Error: &ReasonError{Message: message, Code: code}}
}

// TurnEnd is the data of a turn/end.
func TurnEnd(turn int, r TurnEndReason) TurnEndData { return TurnEndData{Turn: turn, Reason: r} }

// AppendJSON appends {"turn"}.
func (d TurnData) AppendJSON(b []byte) []byte {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(d.Turn), 10)
	return append(b, '}')
}

// AppendJSON appends {"turn","step"}.
func (d StepData) AppendJSON(b []byte) []byte {
	b = appendTurnStep(b, d.Turn, d.Step)
	return append(b, '}')
}

// appendTurnStep opens an object with its turn and step members.
func appendTurnStep(b []byte, turn, step int) []byte {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(turn), 10)
	b = append(b, `,"step":`...)
	return strconv.AppendInt(b, int64(step), 10)
}

// AppendJSON appends {"turn","reason"}.
func (d TurnEndData) AppendJSON(b []byte) []byte {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(d.Turn), 10)
	b = append(b, `,"reason":`...)
	b = d.Reason.AppendJSON(b)
	return append(b, '}')
}

// AppendJSON appends {"kind","reason"?,"error"?}.
func (r TurnEndReason) AppendJSON(b []byte) []byte {
	b = append(b, `{"kind":`...)
	b = AppendString(b, r.Kind)
	if r.Reason != nil {
		b = append(b, `,"reason":{"kind":`...)
		b = AppendString(b, r.Reason.Kind)
		b = append(b, '}')
	}
	if r.Error != nil {
		b = append(b, `,"error":`...)
		b = r.Error.AppendJSON(b)
	}
	return append(b, '}')
}

// AppendJSON appends {"message","code"}. The code is written even when
// empty, as reel always has.
func (e ReasonError) AppendJSON(b []byte) []byte {
	b = append(b, `{"message":`...)
	b = AppendString(b, e.Message)
	b = append(b, `,"code":`...)
	b = AppendString(b, e.Code)
	return append(b, '}')
}

// AppendJSON appends {"turn","step","callId","name","arguments"}.
func (d ToolCallData) AppendJSON(b []byte) []byte {
	b = appendTurnStep(b, d.Turn, d.Step)
	b = append(b, `,"callId":`...)
	b = AppendString(b, d.CallID)
	b = append(b, `,"name":`...)
	b = AppendString(b, d.Name)
	b = append(b, `,"arguments":`...)
	b = AppendString(b, d.Arguments)
	return append(b, '}')
}

// AppendJSON appends {"turn","step","chunk"}, the chunk verbatim (null when
// there is none).
func (d ChunkData) AppendJSON(b []byte) []byte {
	b = d.AppendHead(b)
	b = appendRaw(b, d.Chunk)
	return append(b, '}')
}

// AppendHead appends what [ChunkData.AppendJSON] writes before the chunk,
// {"turn":…,"step":…,"chunk": (d.Chunk is not read). A writer that
// appends the chunk's JSON and then '}' gets the same bytes without
// holding the chunk encoded separately.
func (d ChunkData) AppendHead(b []byte) []byte {
	b = appendTurnStep(b, d.Turn, d.Step)
	return append(b, `,"chunk":`...)
}

// appendRaw appends raw JSON verbatim, or null for none.
func appendRaw(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

// RequestContextData is the data of request/context, written right before a
// model call is dispatched: the provider and model it goes to.
// ContextWindow (tokens) is written by dsh when it knows it; 0 is absent.
type RequestContextData struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	ContextWindow int    `json:"contextWindow,omitempty"`
	// ReasoningEffort is the reasoning effort the calls ask for (reel's
	// own call option, absent when the provider's default applies).
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
}

// AppendJSON appends {"provider","model","contextWindow"?,"reasoningEffort"?}.
func (d RequestContextData) AppendJSON(b []byte) []byte {
	b = append(b, `{"provider":`...)
	b = AppendString(b, d.Provider)
	b = append(b, `,"model":`...)
	b = AppendString(b, d.Model)
	if d.ContextWindow != 0 {
		b = append(b, `,"contextWindow":`...)
		b = strconv.AppendInt(b, int64(d.ContextWindow), 10)
	}
	if d.ReasoningEffort != "" {
		b = append(b, `,"reasoningEffort":`...)
		b = AppendString(b, d.ReasoningEffort)
	}
	return append(b, '}')
}

// AppendJSON appends {"mode","source"?}.
func (d SandboxModeData) AppendJSON(b []byte) []byte {
	b = append(b, `{"mode":`...)
	b = AppendString(b, d.Mode)
	return appendSourceString(b, d.Source)
}

// AppendJSON appends {"policy","source"?}.
func (d ApprovalPolicyData) AppendJSON(b []byte) []byte {
	b = append(b, `{"policy":`...)
	b = AppendString(b, d.Policy)
	return appendSourceString(b, d.Source)
}

// appendSourceString appends a non-empty "source" member and closes the object.
func appendSourceString(b []byte, source string) []byte {
	if source != "" {
		b = append(b, `,"source":`...)
		b = AppendString(b, source)
	}
	return append(b, '}')
}

// LLMRetryData is the data of llm/retry: a failed model call of step
// (Turn, Step) will be retried after DelayMs milliseconds; Retry counts
// from 1 up to MaxRetries. RetryID, Mode and PolicyKey (the retry policy's
// raw key) are written by dsh; reel leaves them empty.
type LLMRetryData struct {
	RetryID    string          `json:"retryId,omitempty"`
	Turn       int             `json:"turn"`
	Step       int             `json:"step"`
	Provider   string          `json:"provider"`
	Mode       string          `json:"mode,omitempty"`
	PolicyKey  json.RawMessage `json:"policyKey,omitempty"`
	Retry      int             `json:"retry"`
	MaxRetries int             `json:"maxRetries"`
	DelayMs    int             `json:"delayMs"`
	Failure    ReasonError     `json:"failure"`
}

// AppendJSON appends {"retryId"?,"turn","step","provider","mode"?,
// "policyKey"?,"retry","maxRetries","delayMs","failure"}.
func (d LLMRetryData) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	if d.RetryID != "" {
		b = append(b, `"retryId":`...)
		b = AppendString(b, d.RetryID)
		b = append(b, ',')
	}
	b = append(b, `"turn":`...)
	b = strconv.AppendInt(b, int64(d.Turn), 10)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(d.Step), 10)
	b = append(b, `,"provider":`...)
	b = AppendString(b, d.Provider)
	if d.Mode != "" {
		b = append(b, `,"mode":`...)
		b = AppendString(b, d.Mode)
	}
	if len(d.PolicyKey) != 0 {
		b = append(b, `,"policyKey":`...)
		b = append(b, d.PolicyKey...)
	}
	b = append(b, `,"retry":`...)
	b = strconv.AppendInt(b, int64(d.Retry), 10)
	b = append(b, `,"maxRetries":`...)
	b = strconv.AppendInt(b, int64(d.MaxRetries), 10)
	b = append(b, `,"delayMs":`...)
	b = strconv.AppendInt(b, int64(d.DelayMs), 10)
	b = append(b, `,"failure":`...)
	b = d.Failure.AppendJSON(b)
	return append(b, '}')
}

// CompactionStartData is the data of compaction/start: why step (Turn,
// Step) compacts (Reason, e.g. "manual"), and the surface it summarizes
// (seqs Start…End, Messages surface events).
type CompactionStartData struct {
	Turn     int    `json:"turn"`
	Step     int    `json:"step"`
	Reason   string `json:"reason"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
	Messages int    `json:"messages"`
}

// AppendJSON appends {"turn","step","reason","start","end","messages"}.
func (d CompactionStartData) AppendJSON(b []byte) []byte {
	b = appendTurnStep(b, d.Turn, d.Step)
	b = append(b, `,"reason":`...)
	b = AppendString(b, d.Reason)
	b = append(b, `,"start":`...)
	b = strconv.AppendInt(b, int64(d.Start), 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendInt(b, int64(d.End), 10)
	b = append(b, `,"messages":`...)
	b = strconv.AppendInt(b, int64(d.Messages), 10)
	return append(b, '}')
}

// CompactionSummaryData is the data of compaction/summary: the summary
// model call (provider, model, token limit), its output parts and usage
// kept raw (they belong to the model layer), and LLMStreamCall marking it
// as a stream call that replay serves from the log.
type CompactionSummaryData struct {
	Provider      string          `json:"provider"`
	Model         string          `json:"model"`
	MaxTokens     int             `json:"maxTokens"`
	RawOutput     json.RawMessage `json:"rawOutput"`
	Usage         json.RawMessage `json:"usage,omitempty"`
	LLMStreamCall bool            `json:"llmStreamCall,omitempty"`
}

// AppendJSON appends {"provider","model","maxTokens","rawOutput","usage"?,
// "llmStreamCall"?}; llmStreamCall is written only when true.
func (d CompactionSummaryData) AppendJSON(b []byte) []byte {
	b = append(b, `{"provider":`...)
	b = AppendString(b, d.Provider)
	b = append(b, `,"model":`...)
	b = AppendString(b, d.Model)
	b = append(b, `,"maxTokens":`...)
	b = strconv.AppendInt(b, int64(d.MaxTokens), 10)
	b = append(b, `,"rawOutput":`...)
	b = appendRaw(b, d.RawOutput)
	if len(d.Usage) != 0 {
		b = append(b, `,"usage":`...)
		b = append(b, d.Usage...)
	}
	if d.LLMStreamCall {
		b = append(b, `,"llmStreamCall":true`...)
	}
	return append(b, '}')
}

// CompactionEndData is the data of compaction/end: whether the compaction
// of step (Turn, Step) replaced the surface, and the error when it did not.
type CompactionEndData struct {
	Turn  int    `json:"turn"`
	Step  int    `json:"step"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// CompactionDone is the compaction/end of a compaction that succeeded.
func CompactionDone(turn, step int) CompactionEndData {
	return CompactionEndData{Turn: turn, Step: step, OK: true}
}

// CompactionFailed is the compaction/end of a compaction that failed with
// the error message msg.
func CompactionFailed(turn, step int, msg string) CompactionEndData {
	return CompactionEndData{Turn: turn, Step: step, Error: msg}
}

// AppendJSON appends {"turn","step","ok","error"?}.
func (d CompactionEndData) AppendJSON(b []byte) []byte {
	b = appendTurnStep(b, d.Turn, d.Step)
	b = append(b, `,"ok":`...)
	b = strconv.AppendBool(b, d.OK)
	if d.Error != "" {
		b = append(b, `,"error":`...)
		b = AppendString(b, d.Error)
	}
	return append(b, '}')
}

// ContentPart is one content part of a message as it is written: text,
// reasoning, a tool call or a tool result (whose Content nests further
// parts). Any other part (an image attachment, a part with members reel
// does not model) is kept verbatim in Raw, which then wins over the other
// fields. It decodes exactly: a part with precisely the members of its
// type, in order, gets the typed fields; everything else is Raw.
type ContentPart struct {
	Type string

	Text string // text and reasoning

	ID, Name, Arguments string // tool-call; Arguments is the JSON text as a string

	ToolCallID string        // tool-result: the call it answers
	Content    []ContentPart // tool-result: the result's own parts
	IsError    bool          // tool-result

	Image *ImageAttachment // image: the stored image it refers to (payload_image.go)

	Raw json.RawMessage // any other part, written verbatim
}

// TextPart is a {"type":"text","text":text} part.
func TextPart(text string) ContentPart { return ContentPart{Type: PartText, Text: text} }

// ReasoningPart is a {"type":"reasoning","text":text} part.
func ReasoningPart(text string) ContentPart { return ContentPart{Type: PartReasoning, Text: text} }

// ToolCallPart is a {"type":"tool-call","id","name","arguments"} part;
// arguments is the call's JSON arguments as a string.
func ToolCallPart(id, name, arguments string) ContentPart {
	return ContentPart{Type: PartToolCall, ID: id, Name: name, Arguments: arguments}
}

// ToolResultPart is a {"type":"tool-result","toolCallId","content":[{"type":"text","text"}],"isError"}
// part answering the call callID with text.
func ToolResultPart(callID, text string, isError bool) ContentPart {
	return ContentPart{Type: PartToolResult, ToolCallID: callID, Content: []ContentPart{TextPart(text)}, IsError: isError}
}

// RawPart is a part written verbatim: a part of the model layer's
// vocabulary that sessionlog does not model. raw must be compact JSON.
func RawPart(raw json.RawMessage) ContentPart { return ContentPart{Raw: raw} }

// partMembers are the members of each typed part, in order.
var partMembers = map[string][]string{
	PartText:       {"type", "text"},
	PartReasoning:  {"type", "text"},
	PartToolCall:   {"type", "id", "name", "arguments"},
	PartToolResult: {"type", "toolCallId", "content", "isError"},
	PartImage:      {"type", "attachment"},
}

// AppendJSON appends the part: Raw verbatim when set, else the members of
// its type (a type reel does not model is written as {"type","text"}).
func (p ContentPart) AppendJSON(b []byte) []byte {
	if len(p.Raw) != 0 {
		return append(b, p.Raw...)
	}
	if p.Type == PartImage && p.Image != nil {
		return appendImagePart(b, p.Image)
	}
	b = append(b, `{"type":`...)
	b = AppendString(b, p.Type)
	switch p.Type {
	case PartToolCall:
		b = append(b, `,"id":`...)
		b = AppendString(b, p.ID)
		b = append(b, `,"name":`...)
		b = AppendString(b, p.Name)
		b = append(b, `,"arguments":`...)
		b = AppendString(b, p.Arguments)
	case PartToolResult:
		b = append(b, `,"toolCallId":`...)
		b = AppendString(b, p.ToolCallID)
		b = append(b, `,"content":`...)
		b = AppendParts(b, p.Content)
		b = append(b, `,"isError":`...)
		b = strconv.AppendBool(b, p.IsError)
	default:
		b = append(b, `,"text":`...)
		b = AppendString(b, p.Text)
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler with AppendJSON.
func (p ContentPart) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil), nil }

// UnmarshalJSON decodes a part: typed when data has exactly the members of
// a typed part in order (with a string, array or boolean where each
// belongs), verbatim in Raw otherwise. It fails only on invalid JSON.
func (p *ContentPart) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	*p = ContentPart{}
	if len(data) > 0 && data[0] == '{' {
		ms, err := objectMembers(data)
		if err != nil {
			return err
		}
		if p.decodeTyped(ms) {
			return nil
		}
		*p = ContentPart{}
	}
	if !validJSON(data) {
		return errors.New("sessionlog: content part is not valid JSON")
	}
	p.Raw = bytes.Clone(data)
	return nil
}

// decodeTyped fills p from the members of a typed part; false when ms is
// not exactly such a part.
func (p *ContentPart) decodeTyped(ms []Member) bool {
	if len(ms) == 0 || ms[0].Key != "type" {
		return false
	}
	typ, ok := jsonString(ms[0].Value)
	want := partMembers[typ]
	if !ok || len(ms) != len(want) {
		return false
	}
	for i, k := range want {
		if ms[i].Key != k {
			return false
		}
	}
	p.Type = typ
	switch typ {
	case PartToolCall:
		var ok1, ok2, ok3 bool
		p.ID, ok1 = jsonString(ms[1].Value)
		p.Name, ok2 = jsonString(ms[2].Value)
		p.Arguments, ok3 = jsonString(ms[3].Value)
		return ok1 && ok2 && ok3
	case PartToolResult:
		var ok1 bool
		p.ToolCallID, ok1 = jsonString(ms[1].Value)
		c := ms[2].Value
		if !ok1 || len(c) == 0 || c[0] != '[' || json.Unmarshal(c, &p.Content) != nil {
			return false
		}
		switch string(ms[3].Value) {
		case "true":
			p.IsError = true
		case "false":
		default:
			return false
		}
		return true
	case PartImage:
		return p.decodeImagePart(ms[1].Value)
	default:
		p.Text, ok = jsonString(ms[1].Value)
		return ok
	}
}

// AppendParts appends parts as a JSON array ([] for none), each in its
// canonical encoding: the content of a message, or a call's raw output.
func AppendParts(b []byte, parts []ContentPart) []byte {
	b = append(b, '[')
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = p.AppendJSON(b)
	}
	return append(b, ']')
}

// Member is one member of a JSON object, its value raw.
type Member struct {
	Key   string
	Value json.RawMessage
}

// MessageSource says where a message came from: {"kind":"user"},
// {"kind":"model","provider","model"}, {"kind":"tool","callId"},
// {"kind":"compaction"}, or one of dsh's kinds with members of its own
// (plugin, agent-instructions, subagent-report, …), which are kept in
// Extra, verbatim and in order. The zero MessageSource is no source.
type MessageSource struct {
	Kind     string
	Provider string // model
	Model    string // model
	CallID   string // tool
	Extra    []Member
}

// UserSource is the source of a prompt the user typed.
func UserSource() MessageSource { return MessageSource{Kind: SourceUser} }

// ModelSource is the source of a message the model wrote.
func ModelSource(provider, model string) MessageSource {
	return MessageSource{Kind: SourceModel, Provider: provider, Model: model}
}

// ToolSource is the source of the result of the tool call callID.
func ToolSource(callID string) MessageSource { return MessageSource{Kind: SourceTool, CallID: callID} }

// CompactionSource is the source of a compaction summary.
func CompactionSource() MessageSource { return MessageSource{Kind: SourceCompaction} }

// IsZero reports whether s is no source at all.
func (s MessageSource) IsZero() bool {
	return s.Kind == "" && s.Provider == "" && s.Model == "" && s.CallID == "" && len(s.Extra) == 0
}

// AppendJSON appends {"kind","provider"?,"model"?,"callId"?, extra…}.
func (s MessageSource) AppendJSON(b []byte) []byte {
	b = append(b, `{"kind":`...)
	b = AppendString(b, s.Kind)
	for _, m := range [...]struct{ key, val string }{{`,"provider":`, s.Provider}, {`,"model":`, s.Model}, {`,"callId":`, s.CallID}} {
		if m.val != "" {
			b = append(b, m.key...)
			b = AppendString(b, m.val)
		}
	}
	for _, m := range s.Extra {
		b = append(b, ',')
		b = AppendString(b, m.Key)
		b = append(b, ':')
		b = appendRaw(b, m.Value)
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler with AppendJSON.
func (s MessageSource) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// UnmarshalJSON decodes a source object; kind, provider, model and callId
// must be strings, and every other member goes to Extra.
func (s *MessageSource) UnmarshalJSON(data []byte) error {
	*s = MessageSource{}
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	ms, err := objectMembers(data)
	if err != nil {
		return fmt.Errorf("message source: %w", err)
	}
	for _, m := range ms {
		var slot *string
		switch m.Key {
		case "kind":
			slot = &s.Kind
		case "provider":
			slot = &s.Provider
		case "model":
			slot = &s.Model
		case "callId":
			slot = &s.CallID
		default:
			s.Extra = append(s.Extra, m)
			continue
		}
		v, ok := jsonString(m.Value)
		if !ok {
			return fmt.Errorf("message source: %s is not a string", m.Key)
		}
		*slot = v
	}
	return nil
}

// messageLayout is an order of a message's members.
type messageLayout int

const (
	layoutUser  messageLayout = iota // content, source, role, id
	layoutModel                      // role, content, source, id (also crash-repaired tool results)
	layoutTool                       // source, content, role, id
)

// appendMessage appends a message object in the given member order; a zero
// source and an empty id are absent.
func appendMessage(b []byte, layout messageLayout, role string, content []ContentPart, src MessageSource, id string) []byte {
	b = append(b, '{')
	source := func(b []byte) []byte {
		if src.IsZero() {
			return b
		}
		b = append(b, `"source":`...)
		return append(src.AppendJSON(b), ',')
	}
	switch layout {
	case layoutUser:
		b = append(b, `"content":`...)
		b = append(AppendParts(b, content), ',')
		b = source(b)
		b = append(b, `"role":`...)
		b = AppendString(b, role)
	case layoutModel:
		b = append(b, `"role":`...)
		b = AppendString(b, role)
		b = append(b, `,"content":`...)
		b = AppendParts(b, content)
		if !src.IsZero() {
			b = append(b, `,"source":`...)
			b = src.AppendJSON(b)
		}
	case layoutTool:
		b = source(b)
		b = append(b, `"content":`...)
		b = AppendParts(b, content)
		b = append(b, `,"role":`...)
		b = AppendString(b, role)
	}
	if id != "" {
		b = append(b, `,"id":`...)
		b = AppendString(b, id)
	}
	return append(b, '}')
}

// UserMessage is the data of user/message (the message itself): role
// "user", the parts, where it came from and its id. The compaction
// summary is a UserMessage with CompactionSource. The role is implied:
// it is always written as "user", and a decoded role is not kept.
type UserMessage struct {
	Content []ContentPart `json:"content"`
	Source  MessageSource `json:"source"`
	ID      string        `json:"id"`
}

// NewUserMessage is a message the user typed, with the message id id.
func NewUserMessage(id string, parts ...ContentPart) UserMessage {
	return UserMessage{Content: parts, Source: UserSource(), ID: id}
}

// AppendJSON appends {"content","source"?,"role":"user","id"?}.
func (m UserMessage) AppendJSON(b []byte) []byte {
	return appendMessage(b, layoutUser, "user", m.Content, m.Source, m.ID)
}

// MarshalJSON implements json.Marshaler with AppendJSON.
func (m UserMessage) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// AssistantMessage is the model message of an assistant/message: role
// "assistant" (implied, as for UserMessage), the parts, the model source
// and the message id.
type AssistantMessage struct {
	Content []ContentPart `json:"content"`
	Source  MessageSource `json:"source"`
	ID      string        `json:"id"`
}

// AppendJSON appends {"role":"assistant","content","source"?,"id"?}.
func (m AssistantMessage) AppendJSON(b []byte) []byte {
	return appendMessage(b, layoutModel, "assistant", m.Content, m.Source, m.ID)
}

// MarshalJSON implements json.Marshaler with AppendJSON.
func (m AssistantMessage) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// AssistantMessageData is the data of assistant/message: the message step
// (Turn, Step) produced, its usage (raw: the model layer's vocabulary;
// absent when nil) and whether the stream was interrupted.
type AssistantMessageData struct {
	Turn        int              `json:"turn"`
	Step        int              `json:"step"`
	Message     AssistantMessage `json:"message"`
	Usage       json.RawMessage  `json:"usage,omitempty"`
	Interrupted bool             `json:"interrupted,omitempty"`
}

// NewAssistantMessage is the assistant/message of step (turn, step): parts
// the model (provider, model) wrote, with the message id id. Set Usage and
// Interrupted on the result as they apply.
func NewAssistantMessage(turn, step int, provider, model, id string, parts ...ContentPart) AssistantMessageData {
	return AssistantMessageData{Turn: turn, Step: step, Message: AssistantMessage{Content: parts, Source: ModelSource(provider, model), ID: id}}
}

// AppendJSON appends {"turn","step","message","usage"?,"interrupted"?}.
func (d AssistantMessageData) AppendJSON(b []byte) []byte {
	b = appendTurnStep(b, d.Turn, d.Step)
	b = append(b, `,"message":`...)
	b = d.Message.AppendJSON(b)
	if len(d.Usage) != 0 {
		b = append(b, `,"usage":`...)
		b = append(b, d.Usage...)
	}
	if d.Interrupted {
		b = append(b, `,"interrupted":true`...)
	}
	return append(b, '}')
}

// ToolResultMessage is the model message of a tool/result: role "user"
// (implied), the tool source, the parts (a tool-result part) and the
// message id. Repaired marks a result synthesized by crash repair, which
// dsh and Repair write in another member order (role, content, source, id
// instead of source, content, role, id); decoding sets it from that order.
type ToolResultMessage struct {
	Source   MessageSource `json:"source"`
	Content  []ContentPart `json:"content"`
	ID       string        `json:"id"`
	Repaired bool          `json:"-"`
}

// AppendJSON appends the message in its layout.
func (m ToolResultMessage) AppendJSON(b []byte) []byte {
	layout := layoutTool
	if m.Repaired {
		layout = layoutModel
	}
	return appendMessage(b, layout, "user", m.Content, m.Source, m.ID)
}

// MarshalJSON implements json.Marshaler with AppendJSON.
func (m ToolResultMessage) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// UnmarshalJSON decodes the message; Repaired is set when its first member
// is "role".
func (m *ToolResultMessage) UnmarshalJSON(data []byte) error {
	type plain ToolResultMessage
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*m = ToolResultMessage(p)
	if string(bytes.TrimSpace(data)) != "null" {
		dec := json.NewDecoder(bytes.NewReader(data))
		_, _ = dec.Token()
		k, _ := dec.Token()
		m.Repaired = k == "role"
	}
	return nil
}

// ToolResultError is the error detail of a failed tool/result: the
// failure's code (a Repair code such as ToolOutcomeUnknown, or a tool's own
// such as FS_NOT_FOUND) and, from dsh, the error's name.
type ToolResultError struct {
	Name string `json:"name,omitempty"`
	Code string `json:"code"`
}

// AppendJSON appends {"name"?,"code"}.
func (e ToolResultError) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	if e.Name != "" {
		b = append(b, `"name":`...)
		b = AppendString(b, e.Name)
		b = append(b, ',')
	}
	b = append(b, `"code":`...)
	b = AppendString(b, e.Code)
	return append(b, '}')
}

// ToolResultData is the data of tool/result: the result message of step
// (Turn, Step), the tool's structured detail (Meta, raw: diffs, fetched
// URL, … as dsh's tools write it; absent when nil) and the error detail of
// a failure (absent when nil).
type ToolResultData struct {
	Turn    int               `json:"turn"`
	Step    int               `json:"step"`
	Message ToolResultMessage `json:"message"`
	Meta    json.RawMessage   `json:"meta,omitempty"`
	Error   *ToolResultError  `json:"error,omitempty"`
}

// NewToolResult is the tool/result of step (turn, step) answering the tool
// call callID with text (an error result when isError), message id id.
// The event cites the tool/call's seq in its sourceEventSeqs.
func NewToolResult(turn, step int, callID, text string, isError bool, id string) ToolResultData {
	return ToolResultData{Turn: turn, Step: step, Message: ToolResultMessage{
		Source:  ToolSource(callID),
		Content: []ContentPart{ToolResultPart(callID, text, isError)},
		ID:      id,
	}}
}

// RepairedToolResult is the error tool/result crash repair writes for the
// tool call callID of step (turn, step) whose result was never logged:
// text explains what happened, code (ToolOutcomeUnknown or ToolNotStarted)
// goes in the error detail, id is the message id.
func RepairedToolResult(turn, step int, callID, text, code, id string) ToolResultData {
	return ToolResultData{Turn: turn, Step: step,
		Message: ToolResultMessage{
			Source:   ToolSource(callID),
			Content:  []ContentPart{ToolResultPart(callID, text, true)},
			ID:       id,
			Repaired: true,
		},
		Error: &ToolResultError{Code: code},
	}
}

// AppendJSON appends {"turn","step","message","meta"?,"error"?}.
func (d ToolResultData) AppendJSON(b []byte) []byte {
	b = appendTurnStep(b, d.Turn, d.Step)
	b = append(b, `,"message":`...)
	b = d.Message.AppendJSON(b)
	if len(d.Meta) != 0 {
		b = append(b, `,"meta":`...)
		b = append(b, d.Meta...)
	}
	if d.Error != nil {
		b = append(b, `,"error":`...)
		b = d.Error.AppendJSON(b)
	}
	return append(b, '}')
}

// AppendJSON appends {"header","reason"}: the header in canonical form
// (HeaderData's) with, after its config, any member RequestHeader does not
// model (dsh writes "adapterDefaults" there), verbatim and in order. A
// header that does not parse is written as it is.
func (d RequestHeaderData) AppendJSON(b []byte) []byte {
	b = append(b, `{"header":`...)
	b = appendHeader(b, d.Header)
	b = append(b, `,"reason":`...)
	b = AppendString(b, d.Reason)
	return append(b, '}')
}

// appendHeader appends the canonical form of a logged header object.
func appendHeader(b []byte, raw json.RawMessage) []byte {
	h, err := ParseRequestHeader(raw)
	ms, merr := objectMembers(raw)
	if err != nil || merr != nil {
		return appendRaw(b, raw)
	}
	canon := h.Canonical()
	cut := len(`{"config":`) + len(appendCompact(nil, h.Config, "{}"))
	b = append(b, canon[:cut]...)
	for _, m := range ms {
		if modeledHeaderMember(m.Key) {
			continue
		}
		b = append(b, ',')
		b = AppendString(b, m.Key)
		b = append(b, ':')
		b = appendCompact(b, m.Value, "null")
	}
	return append(b, canon[cut:]...)
}

// modeledHeaderMember reports whether RequestHeader decodes the member key
// (encoding/json matches keys without regard to case).
func modeledHeaderMember(key string) bool {
	return strings.EqualFold(key, "config") || strings.EqualFold(key, "system") || strings.EqualFold(key, "tools")
}

// ReencodePayload decodes e.Data into the payload type of e.Type and
// returns its canonical encoding. ok is false (and nothing is decoded) when
// reel has no payload type for e.Type. For a payload reel or dsh wrote, the
// result equals e.Data byte for byte.
func ReencodePayload(e *Event) (data []byte, ok bool, err error) {
	var p Payload
	switch e.Type {
	case TypeTurnStart:
		p, err = decodePayload[TurnData](e)
	case TypeStepStart, TypeStepEnd:
		p, err = decodePayload[StepData](e)
	case TypeTurnEnd:
		p, err = decodePayload[TurnEndData](e)
	case TypeUserMessage:
		p, err = decodePayload[UserMessage](e)
	case TypeAssistantMessage:
		p, err = decodePayload[AssistantMessageData](e)
	case TypeToolResult:
		p, err = decodePayload[ToolResultData](e)
	case TypeToolCall:
		p, err = decodePayload[ToolCallData](e)
	case TypeAssistantChunk:
		p, err = decodePayload[ChunkData](e)
	case TypeRequestContext:
		p, err = decodePayload[RequestContextData](e)
	case TypeSandboxMode:
		p, err = decodePayload[SandboxModeData](e)
	case TypeApprovalPolicy:
		p, err = decodePayload[ApprovalPolicyData](e)
	case TypeLLMRetry:
		p, err = decodePayload[LLMRetryData](e)
	case TypeCompactionStart:
		p, err = decodePayload[CompactionStartData](e)
	case TypeCompactionSum:
		p, err = decodePayload[CompactionSummaryData](e)
	case TypeCompactionEnd:
		p, err = decodePayload[CompactionEndData](e)
	case TypeHookInvoked:
		p, err = decodePayload[HookInvokedData](e)
	case TypeHookResult:
		p, err = decodePayload[HookResultData](e)
	case TypeMCPConnect:
		p, err = decodePayload[MCPConnectData](e)
	case TypeApprovalAsked:
		p, err = decodePayload[ApprovalAskedData](e)
	case TypeApprovalDecided:
		p, err = decodePayload[ApprovalDecidedData](e)
	case TypeModelSelected:
		p, err = decodePayload[ModelSelectedData](e)
	case TypeSubagentDescriptor:
		p, err = decodePayload[SubagentDescriptorData](e)
	case TypeSessionTitle:
		p, err = decodePayload[SessionTitleData](e)
	case TypeTitleLLMRequest:
		p, err = decodePayload[TitleLLMRequestData](e)
	case TypeWorkspaceCheckpoint:
		p, err = decodePayload[CheckpointData](e)
	case TypeRequestHeader:
		d, err := DecodeData[RequestHeaderData](e)
		if err != nil {
			return nil, true, err
		}
		if _, err := ParseRequestHeader(d.Header); err != nil {
			return nil, true, invalidf(e, "%v", err)
		}
		p = d
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	return p.AppendJSON(nil), true, nil
}

// decodePayload is DecodeData for a payload type.
func decodePayload[T Payload](e *Event) (Payload, error) {
	v, err := DecodeData[T](e)
	return v, err
}

// objectMembers splits a JSON object into its members, in order: keys
// decoded, values raw.
func objectMembers(data []byte) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var ms []Member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, Member{Key: k, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return ms, nil
}

// jsonString decodes a JSON string value; false for anything else.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
