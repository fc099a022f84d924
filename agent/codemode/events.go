package codemode

import (
	"encoding/json"
	"strings"
)

// The log events of a program's tool calls, as the reference agent logs
// them: one before the call runs, one with its result. Neither is on the
// surface: only run_code's own result reaches the model.
const (
	TypeDispatchStart = "tool/code-dispatch-start"
	TypeDispatch      = "tool/code-dispatch"
)

// DispatchStartData is a tool/code-dispatch-start event: a program's tool
// call about to run.
type DispatchStartData struct {
	// RootCallID is the model's tool call at the root of the dispatch (the
	// run_code call); ParentCallID is the call that made it (the same).
	RootCallID   string `json:"rootCallId"`
	ParentCallID string `json:"parentCallId"`
	// SubCallID is "<run_code call id>:code:<n>", n counting the run's
	// calls from 1.
	SubCallID string `json:"subCallId"`
	// Name is the tool called.
	Name string `json:"name"`
	// Arguments are the call's arguments as the program passed them (a
	// JSON object, not a string).
	Arguments json.RawMessage `json:"arguments"`
}

// DispatchData is a tool/code-dispatch event: a program's tool call and
// its result.
type DispatchData struct {
	DispatchStartData
	// IsError marks a failed call.
	IsError bool `json:"isError"`
	// Content is the result as text parts.
	Content []TextPart `json:"content"`
}

// TextPart is one text part of a dispatch's content.
type TextPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// AppendJSON implements sessionlog.Payload.
func (d DispatchStartData) AppendJSON(b []byte) []byte { return appendJSON(b, d) }

// AppendJSON implements sessionlog.Payload.
func (d DispatchData) AppendJSON(b []byte) []byte { return appendJSON(b, d) }

// appendJSON appends v's JSON, HTML characters unescaped.
func appendJSON(b []byte, v any) []byte {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // plain structs of strings and raw JSON
	}
	return append(b, strings.TrimSuffix(sb.String(), "\n")...)
}
