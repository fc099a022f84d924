package standin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// DefaultChunkSize is the number of runes per delta when a response does not
// set chunkSize.
const DefaultChunkSize = 8

// Script is the sequence of responses a [Server] serves, one per request.
type Script struct {
	Responses []Response `json:"responses"`
	// Title answers the agent's session-title requests (a request whose
	// system message begins with TitlePrompt), every one of them, without taking a response of
	// Responses; nil answers DefaultTitle.
	Title *Response `json:"title,omitempty"`
}

// DefaultTitle is the stand-in's answer to a title request when the script
// has no "title".
const DefaultTitle = "Stand-in session title"

// TitlePrompt begins the system prompt of an agent's session-title request:
// a request whose system message starts with it is a title request.
const TitlePrompt = "Create a concise title for an AI coding-assistant session"

// titleResponse is the response to a title request.
func (s *Script) titleResponse() Response {
	if s.Title != nil {
		return *s.Title
	}
	return Response{Text: DefaultTitle}
}

// Response is what the server answers to one request: either a stream
// (Reasoning, Text, ToolCalls, Usage, Finish) or, when Error is set, an HTTP
// error.
type Response struct {
	Reasoning   string      `json:"reasoning,omitempty"`
	Text        string      `json:"text,omitempty"`
	ToolCalls   []ToolCall  `json:"toolCalls,omitempty"`
	Usage       *Usage      `json:"usage,omitempty"`
	Finish      string      `json:"finish,omitempty"`
	ChunkSize   int         `json:"chunkSize,omitempty"`
	DelayMs     int         `json:"delayMs,omitempty"`
	StreamError string      `json:"streamError,omitempty"`
	Hang        bool        `json:"hang,omitempty"`
	Error       *ErrorReply `json:"error,omitempty"`
	Expect      *Expect     `json:"expect,omitempty"`
}

// ToolCall is one tool call the model makes. In Arguments,
// SubagentPlaceholder stands for the id of the background subagent the
// conversation started last (see SubagentPlaceholder).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage is the token accounting reported at the end of the stream.
// PromptTokens includes CacheHitTokens, as in the OpenAI and DeepSeek APIs.
type Usage struct {
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	CacheHitTokens   int64 `json:"cacheHitTokens"`
	ReasoningTokens  int64 `json:"reasoningTokens"`
}

// ErrorReply makes the server answer with an HTTP error instead of a stream.
type ErrorReply struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// Expect states what the request must look like; a request that does not
// match is answered with HTTP 400. Empty fields are not checked.
type Expect struct {
	// LastUserContains must occur in the text of the last message whose
	// role is "user".
	LastUserContains string `json:"lastUserContains,omitempty"`
	// LastMessageContains must occur in the text of the last message,
	// whatever its role (for example the "tool" message after a tool call).
	LastMessageContains string `json:"lastMessageContains,omitempty"`
	// Model must equal the request's model.
	Model string `json:"model,omitempty"`
}

// validFinish reports whether s is a finish_reason a script may name.
func validFinish(s string) bool {
	switch s {
	case "", "stop", "length", "tool_calls", "content_filter":
		return true
	}
	return false
}

// LoadScript reads and parses a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("standin: load script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("standin: script %s: %w", path, err)
	}
	return s, nil
}

// ParseScript parses and validates a script. Unknown members are refused
// with the member named, as is trailing data after the script object.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("parse: trailing data after the script object")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Validate checks a script for values the server cannot serve.
func (s *Script) Validate() error {
	if len(s.Responses) == 0 {
		return fmt.Errorf("script has no responses")
	}
	for i, r := range s.Responses {
		if err := r.validate(); err != nil {
			return fmt.Errorf("response %d: %w", i+1, err)
		}
	}
	if s.Title != nil {
		if err := s.Title.validate(); err != nil {
			return fmt.Errorf("title: %w", err)
		}
	}
	return nil
}

func (r Response) validate() error {
	switch {
	case r.ChunkSize < 0:
		return fmt.Errorf("chunkSize %d is negative", r.ChunkSize)
	case r.DelayMs < 0:
		return fmt.Errorf("delayMs %d is negative", r.DelayMs)
	case !validFinish(r.Finish):
		return fmt.Errorf("finish %q is not one of stop, length, tool_calls, content_filter", r.Finish)
	case r.StreamError != "" && r.Hang:
		return fmt.Errorf("streamError and hang exclude each other")
	}
	if r.Error != nil {
		if r.Error.Status < 400 || r.Error.Status > 599 {
			return fmt.Errorf("error status %d is not an HTTP error status", r.Error.Status)
		}
		if r.Reasoning != "" || r.Text != "" || len(r.ToolCalls) > 0 || r.Usage != nil || r.Finish != "" ||
			r.StreamError != "" || r.Hang {
			return fmt.Errorf("an error response carries no stream (reasoning, text, toolCalls, usage, finish, streamError, hang)")
		}
	}
	for j, tc := range r.ToolCalls {
		if tc.ID == "" || tc.Name == "" {
			return fmt.Errorf("toolCalls[%d]: id and name are required", j)
		}
	}
	if u := r.Usage; u != nil && (u.PromptTokens < 0 || u.CompletionTokens < 0 || u.CacheHitTokens < 0 ||
		u.ReasoningTokens < 0 || u.CacheHitTokens > u.PromptTokens) {
		return fmt.Errorf("usage counts must be non-negative with cacheHitTokens <= promptTokens")
	}
	return nil
}
