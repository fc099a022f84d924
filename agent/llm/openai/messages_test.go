package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/openai"
	"github.com/reel-agent/reel/agent/llm/standin"
)

func raws(msgs ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		out[i] = json.RawMessage(m)
	}
	return out
}

// history is a dsh conversation in the shapes the corpus records.
var history = raws(
	`{"content":[{"type":"text","text":"Run echo SNAPSHOT_OK"}],"source":{"kind":"user"},"role":"user","id":"u1"}`,
	`{"role":"assistant","content":[{"type":"reasoning","text":"The user wants me to run it."},{"type":"text","text":"Running."},{"type":"tool-call","id":"call_00_Rn2","name":"bash","arguments":"{\"command\": \"echo SNAPSHOT_OK\"}"}],"source":{"kind":"model"},"id":"a1"}`,
	`{"source":{"kind":"tool","callId":"call_00_Rn2"},"content":[{"type":"tool-result","toolCallId":"call_00_Rn2","content":[{"type":"text","text":"SNAPSHOT_OK\n"}],"isError":false}],"role":"user","id":"t1"}`,
	`{"role":"assistant","content":[{"type":"reasoning","text":"only thinking"}],"id":"a2"}`,
	`{"content":[{"type":"text","text":"Inspect "},{"type":"image","attachment":{"attachmentId":"sha256:b1","mediaType":"image/png","width":1,"height":1,"bytes":69}},{"type":"text","text":"then say DONE."}],"role":"user","id":"u2"}`,
	`{"role":"assistant","content":[{"type":"tool-call","id":"c1","name":"read","arguments":"{}"},{"type":"tool-call","id":"c2","name":"glob","arguments":"{\"pattern\":\"*\"}"}]}`,
	`{"role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"line 1"},{"type":"text","text":"line 2"}],"isError":true},{"type":"tool-result","toolCallId":"c2","content":[],"isError":false},{"type":"text","text":"and continue"}]}`,
)

const tools = `[{"name":"bash","description":"Run a <shell> command","parameters":{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command"]}},{"name":"noop","parameters":{"type":"object"}}]`

func TestRequestMapping(t *testing.T) {
	temp := 0.25
	tests := []struct {
		name  string
		tweak func(*openai.Config)
		req   llm.Request
		want  string
	}{
		{
			name: "full conversation",
			req: llm.Request{Provider: "deepseek", Model: "deepseek-reasoner", System: "You are reel.", Tools: json.RawMessage(tools),
				Messages: history, MaxTokens: 4096, Temperature: &temp},
			want: `{
			  "model": "deepseek-reasoner", "stream": true, "stream_options": {"include_usage": true},
			  "max_tokens": 4096, "temperature": 0.25,
			  "messages": [
			    {"role": "system", "content": "You are reel."},
			    {"role": "user", "content": "Run echo SNAPSHOT_OK"},
			    {"role": "assistant", "content": "Running.", "tool_calls": [
			      {"id": "call_00_Rn2", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"echo SNAPSHOT_OK\"}"}}]},
			    {"role": "tool", "tool_call_id": "call_00_Rn2", "content": "SNAPSHOT_OK\n"},
			    {"role": "assistant", "content": ""},
			    {"role": "user", "content": "Inspect \n[image: image/png, 1x1 px, 69 bytes; not sent: the model takes no image input]\nthen say DONE."},
			    {"role": "assistant", "tool_calls": [
			      {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}},
			      {"id": "c2", "type": "function", "function": {"name": "glob", "arguments": "{\"pattern\":\"*\"}"}}]},
			    {"role": "tool", "tool_call_id": "c1", "content": "line 1\nline 2"},
			    {"role": "tool", "tool_call_id": "c2", "content": ""},
			    {"role": "user", "content": "and continue"}
			  ],
			  "tools": [
			    {"type": "function", "function": {"name": "bash", "description": "Run a <shell> command",
			      "parameters": {"type": "object", "properties": {"command": {"type": "string"}, "description": {"type": "string"}}, "required": ["command"]}}},
			    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object"}}}
			  ]
			}`,
		},
		{
			name:  "defaults: provider model, no system, no tools, max_completion_tokens",
			tweak: func(c *openai.Config) { c.Model = "gpt-4.1"; c.MaxCompletionTokens = true },
			req:   llm.Request{Messages: history[:1], MaxTokens: 10},
			want: `{"model": "gpt-4.1", "stream": true, "stream_options": {"include_usage": true}, "max_completion_tokens": 10,
			  "messages": [{"role": "user", "content": "Run echo SNAPSHOT_OK"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, standin.Script{Responses: []standin.Response{{Text: "ok"}}}, tt.tweak)
			s, err := f.prov.Stream(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := llm.Collect(s); err != nil {
				t.Fatal(err)
			}
			reqs := f.srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			var got, want any
			if err := json.Unmarshal(reqs[0], &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				t.Fatalf("request body:\n%s\nwant:\n%s", g, w)
			}
		})
	}
}

// TestToolParametersVerbatim checks that a tool's parameters schema reaches
// the server with its key order and escapes intact.
func TestToolParametersVerbatim(t *testing.T) {
	params := `{"type":"object","properties":{"z":{"type":"string","description":"a<b && c\u2028"},"a":{"type":"integer"}},"required":["z"]}`
	f := newFixture(t, standin.Script{Responses: []standin.Response{{Text: "ok"}}}, nil)
	s, err := f.prov.Stream(context.Background(), llm.Request{Messages: history[:1],
		Tools: json.RawMessage(`[{"name":"t","description":"d","parameters":` + params + `}]`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Collect(s); err != nil {
		t.Fatal(err)
	}
	if body := string(f.srv.Requests()[0]); !strings.Contains(body, `"parameters":`+params) {
		t.Fatalf("parameters not sent verbatim:\n%s", body)
	}
}

func TestRequestMappingErrors(t *testing.T) {
	tests := []struct {
		name  string
		tweak func(*openai.Config)
		req   llm.Request
		want  string
	}{
		{"no model anywhere", func(c *openai.Config) { c.Model = "" }, llm.Request{Messages: history[:1]}, "names no model"},
		{"message not JSON", nil, llm.Request{Messages: raws(`{`)}, "message 0"},
		{"message without role", nil, llm.Request{Messages: raws(`{"content":[]}`)}, `message 0: llm: parse message: missing member "role"`},
		{"unsupported role", nil, llm.Request{Messages: raws(`{"role":"developer","content":[]}`)}, `unsupported role "developer"`},
		{"unknown assistant part", nil, llm.Request{Messages: append(history[:1:1], json.RawMessage(`{"role":"assistant","content":[{"type":"video"}]}`))},
			`message 1: assistant message: unsupported part type "video"`},
		{"unknown user part", nil, llm.Request{Messages: raws(`{"role":"user","content":[{"type":"audio"}]}`)}, `unsupported part type "audio"`},
		{"tool result without id", nil, llm.Request{Messages: raws(`{"role":"user","content":[{"type":"tool-result","content":[]}]}`)}, "without toolCallId"},
		{"tools not an array", nil, llm.Request{Messages: history[:1], Tools: json.RawMessage(`{"name":"x"}`)}, "tools:"},
		{"tool with unknown member", nil, llm.Request{Messages: history[:1], Tools: json.RawMessage(`[{"name":"x","strict":true}]`)}, `tools[0]: json: unknown field "strict"`},
		{"tool without name", nil, llm.Request{Messages: history[:1], Tools: json.RawMessage(`[{"description":"x"}]`)}, "tools[0]: no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, standin.Script{Responses: []standin.Response{{Text: "ok"}}}, tt.tweak)
			_, err := f.prov.Stream(context.Background(), tt.req)
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || pe.Code != llm.CodeBadRequest || pe.Retryable() || !strings.Contains(pe.Message, tt.want) {
				t.Fatalf("err = %v, want a BAD_REQUEST containing %q", err, tt.want)
			}
			if n := len(f.srv.Requests()); n != 0 {
				t.Fatalf("%d requests sent for a bad request", n)
			}
		})
	}
}
