package agent

import (
	"context"
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// streamHistory replays a loaded session's conversation to the client as
// session/update notifications, in log order: user messages, thoughts,
// agent text, tool calls with their final status and output.
func (srv *Server) streamHistory(ctx context.Context, s *session) {
	s.mu.Lock()
	events := s.log.Log().Events()
	s.mu.Unlock()
	calls := map[string]*sessionlog.ToolCallData{}
	for i := range events {
		e := &events[i]
		switch e.Type {
		case sessionlog.TypeUserMessage:
			m := parsed(e)
			for _, p := range m.Content {
				if p.Type == "text" {
					srv.notify(ctx, s, acp.UpdateUserMessageText(p.Text))
				}
			}
		case sessionlog.TypeAssistantMessage:
			m := parsed(e)
			for _, p := range m.Content {
				switch p.Type {
				case "reasoning":
					srv.notify(ctx, s, acp.UpdateAgentThoughtText(p.Text))
				case "text":
					srv.notify(ctx, s, acp.UpdateAgentMessageText(p.Text))
				}
			}
		case sessionlog.TypeToolCall:
			d, err := sessionlog.DecodeData[sessionlog.ToolCallData](e)
			if err != nil {
				continue
			}
			calls[d.CallID] = &d
			title, kind, locs := tools.Describe(d.Name, json.RawMessage(d.Arguments))
			srv.notify(ctx, s, acp.StartToolCall(acp.ToolCallId(d.CallID), title,
				acp.WithStartKind(acp.ToolKind(kind)),
				acp.WithStartStatus(acp.ToolCallStatusPending),
				acp.WithStartLocations(acpLocations(locs)),
				acp.WithStartRawInput(json.RawMessage(d.Arguments))))
		case sessionlog.TypeToolResult:
			m := parsed(e)
			for _, p := range m.Content {
				if p.Type != "tool-result" {
					continue
				}
				var text string
				for _, c := range p.Content {
					text += c.Text
				}
				status := acp.ToolCallStatusCompleted
				if p.IsError {
					status = acp.ToolCallStatusFailed
				}
				srv.notify(ctx, s, acp.UpdateToolCall(acp.ToolCallId(p.ToolCallID),
					acp.WithUpdateStatus(status),
					acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(text))})))
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
