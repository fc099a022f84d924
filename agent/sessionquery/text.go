package sessionquery

import (
	"encoding/json"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// block is one content block of a message, as far as its text goes.
type block struct {
	Type      string  `json:"type"`
	Text      string  `json:"text"`
	Name      string  `json:"name"`
	Arguments string  `json:"arguments"`
	Content   []block `json:"content"`
}

// EventText is an event's semantic text, the reference's
// extractSessionEventText: message text (and a tool call's name and
// arguments) of user and assistant messages, a tool call's name and
// arguments, a tool result's text with its error name and code, a todo
// list's statuses and contents, and a turn end's kind (and error message);
// structural events, raw stream chunks, request headers and unknown events
// have none (""). Parts are trimmed, empty ones dropped, joined by lines.
func EventText(e *sessionlog.Event) string {
	switch e.Type {
	case sessionlog.TypeUserMessage:
		var d struct {
			Content []block `json:"content"`
		}
		_ = json.Unmarshal(e.Data, &d)
		return contentText(d.Content)
	case sessionlog.TypeAssistantMessage:
		var d struct {
			Message struct {
				Content []block `json:"content"`
			} `json:"message"`
		}
		_ = json.Unmarshal(e.Data, &d)
		return contentText(d.Message.Content)
	case sessionlog.TypeToolCall:
		var d struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}
		_ = json.Unmarshal(e.Data, &d)
		return joinText(d.Name, d.Arguments)
	case sessionlog.TypeToolResult:
		var d struct {
			Message struct {
				Content []block `json:"content"`
			} `json:"message"`
			Error *struct {
				Name string `json:"name"`
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(e.Data, &d)
		parts := []string{contentText(d.Message.Content)}
		if d.Error != nil {
			parts = append(parts, d.Error.Name, d.Error.Code)
		}
		return joinText(parts...)
	case "todo/write":
		var d struct {
			Todos []struct {
				Status  string `json:"status"`
				Content string `json:"content"`
			} `json:"todos"`
		}
		_ = json.Unmarshal(e.Data, &d)
		var parts []string
		for _, t := range d.Todos {
			parts = append(parts, t.Status, t.Content)
		}
		return joinText(parts...)
	case sessionlog.TypeTurnEnd:
		var d struct {
			Reason struct {
				Kind  string `json:"kind"`
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			} `json:"reason"`
		}
		_ = json.Unmarshal(e.Data, &d)
		switch d.Reason.Kind {
		case "error":
			return joinText("error", d.Reason.Error.Message)
		case "aborted", "max-tokens", "interrupted":
			return d.Reason.Kind
		}
	}
	return ""
}

// contentText is the text of a message's blocks.
func contentText(blocks []block) string {
	var parts []string
	var walk func([]block)
	walk = func(bs []block) {
		for _, b := range bs {
			switch b.Type {
			case "text":
				parts = append(parts, b.Text)
			case "tool-call":
				parts = append(parts, b.Name, b.Arguments)
			case "tool-result":
				walk(b.Content)
			}
		}
	}
	walk(blocks)
	return joinText(parts...)
}

// joinText trims the parts, drops the empty ones and joins the rest by
// lines.
func joinText(parts ...string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n")
}
