package standin

import (
	"encoding/json"
	"testing"
)

// TestSubagentPlaceholders: {{lastSubagentId}} and {{subagentId:N}} in a
// scripted call's arguments become the ids of the request's "started
// subagent <id>" results; a placeholder with no such id stays.
func TestSubagentPlaceholders(t *testing.T) {
	msg := func(role, text string) chatMessage {
		b, _ := json.Marshal(text)
		return chatMessage{Role: role, Content: b}
	}
	req := chatRequest{Messages: []chatMessage{
		msg("user", "start two"),
		msg("tool", "started subagent aaa-1"),
		msg("tool", "started subagent bbb-2"),
	}}
	tests := []struct{ args, want string }{
		{`{"subagent_id":"{{lastSubagentId}}"}`, `{"subagent_id":"bbb-2"}`},
		{`{"a":"{{subagentId:1}}","b":"{{subagentId:2}}"}`, `{"a":"aaa-1","b":"bbb-2"}`},
		{`{"a":"{{subagentId:3}}"}`, `{"a":"{{subagentId:3}}"}`},
		{`{"a":"{{subagentId:0}}"}`, `{"a":"{{subagentId:0}}"}`},
		{`{"plain":"x"}`, `{"plain":"x"}`},
	}
	for _, tt := range tests {
		got := withSubagentID(Response{ToolCalls: []ToolCall{{ID: "c", Name: "send_message", Arguments: tt.args}}}, req)
		if got.ToolCalls[0].Arguments != tt.want {
			t.Errorf("%s: got %s, want %s", tt.args, got.ToolCalls[0].Arguments, tt.want)
		}
	}
	none := withSubagentID(Response{ToolCalls: []ToolCall{{Arguments: `{"a":"{{lastSubagentId}}"}`}}}, chatRequest{Messages: []chatMessage{msg("user", "x")}})
	if none.ToolCalls[0].Arguments != `{"a":"{{lastSubagentId}}"}` {
		t.Errorf("without a started subagent: %s", none.ToolCalls[0].Arguments)
	}
}
