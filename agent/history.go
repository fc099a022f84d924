package agent

import (
	"context"
	"encoding/json"

	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// History replays the session's conversation to u in log order, the way a
// live turn reported it: the user's prompts, thoughts, answer text, tool
// calls with their final status and output, hooks' context as thoughts.
// Messages the engine entered for the model (instruction files, reminders,
// compaction summaries) are not retold.
func (s *Session) History(ctx context.Context, u Updates) {
	s.mu.Lock()
	events := s.log.Log().Events()
	s.mu.Unlock()
	for i := range events {
		e := &events[i]
		switch e.Type {
		case sessionlog.TypeUserMessage:
			// What the user typed, and what hooks added (shown as the
			// live turn showed it); instruction files, reminders and
			// compaction summaries are the engine's messages to the model.
			if plugin := hookPlugin(e); plugin != "" {
				for _, p := range parsed(e).Content {
					if p.Type == "text" {
						u.Thought(ctx, hookNotice(plugin, p.Text))
					}
				}
				continue
			}
			if !isUserPrompt(e) {
				continue
			}
			for _, p := range parsed(e).Content {
				if p.Type == "text" {
					u.UserText(ctx, p.Text)
				}
			}
		case sessionlog.TypeAssistantMessage:
			for _, p := range parsed(e).Content {
				switch p.Type {
				case "reasoning":
					u.Thought(ctx, p.Text)
				case "text":
					u.Text(ctx, p.Text)
				}
			}
		case sessionlog.TypeToolCall:
			d, err := sessionlog.DecodeData[sessionlog.ToolCallData](e)
			if err != nil {
				continue
			}
			call := ToolCall{ID: d.CallID, Name: d.Name, Arguments: json.RawMessage(d.Arguments)}
			call.Title, call.Kind, call.Locations = s.eng.toolsFor(s.Mode()).DescribeCall(nil, d.Name, call.Arguments)
			u.ToolStart(ctx, call)
		case sessionlog.TypeToolResult:
			for _, p := range parsed(e).Content {
				if p.Type != "tool-result" {
					continue
				}
				var text string
				for _, c := range p.Content {
					text += c.Text
				}
				u.ToolEnd(ctx, p.ToolCallID, tools.Result{Text: text, IsError: p.IsError})
			}
		}
	}
}

func parsed(e *sessionlog.Event) sessionlog.Message {
	raw, err := sessionlog.ProjectMessage(e)
	if err != nil {
		return sessionlog.Message{}
	}
	m, _ := sessionlog.ParseMessage(raw)
	return m
}
