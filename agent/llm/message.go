package llm

import (
	"encoding/json"
	"fmt"
)

// Part types of dsh message content.
const (
	PartText       = "text"
	PartReasoning  = "reasoning"
	PartToolCall   = "tool-call"
	PartToolResult = "tool-result"
	PartImage      = "image"
)

// Message is the part of a dsh message a provider needs: its role ("user"
// or "assistant"; tool results are user messages holding tool-result parts)
// and its content. Other members of the recorded message (id, source, …)
// are ignored.
type Message struct {
	Role    string
	Content []Part
}

// Part is one content part of a dsh message:
//
//	{"type":"text","text":…}
//	{"type":"reasoning","text":…}
//	{"type":"tool-call","id":…,"name":…,"arguments":…}
//	{"type":"tool-result","toolCallId":…,"content":[parts],"isError":…}
//	{"type":"image","attachment":{…}}
//
// Raw always holds the part as recorded, so a provider can read members of
// part types this package does not model.
type Part struct {
	Type       string
	Text       string
	ID         string
	Name       string
	Arguments  string
	ToolCallID string
	Content    []Part
	IsError    bool
	Raw        json.RawMessage
}

type wireMessage struct {
	Role    *string           `json:"role"`
	Content []json.RawMessage `json:"content"`
}

type wirePart struct {
	Type       *string           `json:"type"`
	Text       string            `json:"text"`
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Arguments  string            `json:"arguments"`
	ToolCallID string            `json:"toolCallId"`
	Content    []json.RawMessage `json:"content"`
	IsError    bool              `json:"isError"`
}

// ParseMessage decodes a dsh message. It fails when the message is not an
// object, has no role, or a part has no type.
func ParseMessage(raw json.RawMessage) (Message, error) {
	var w wireMessage
	if err := json.Unmarshal(raw, &w); err != nil {
		return Message{}, fmt.Errorf("llm: parse message: %w", err)
	}
	if w.Role == nil {
		return Message{}, fmt.Errorf(`llm: parse message: missing member "role"`)
	}
	parts, err := parseParts(w.Content)
	if err != nil {
		return Message{}, fmt.Errorf("llm: parse %s message: %w", *w.Role, err)
	}
	return Message{Role: *w.Role, Content: parts}, nil
}

func parseParts(raws []json.RawMessage) ([]Part, error) {
	parts := make([]Part, 0, len(raws))
	for i, raw := range raws {
		var w wirePart
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, fmt.Errorf("part %d: %w", i, err)
		}
		if w.Type == nil {
			return nil, fmt.Errorf(`part %d: missing member "type"`, i)
		}
		inner, err := parseParts(w.Content)
		if err != nil {
			return nil, fmt.Errorf("part %d (%s): %w", i, *w.Type, err)
		}
		if len(inner) == 0 {
			inner = nil
		}
		parts = append(parts, Part{
			Type: *w.Type, Text: w.Text, ID: w.ID, Name: w.Name, Arguments: w.Arguments,
			ToolCallID: w.ToolCallID, Content: inner, IsError: w.IsError, Raw: raw,
		})
	}
	return parts, nil
}
