package openai

import (
	"encoding/json"

	sdk "github.com/openai/openai-go/v3"

	"github.com/reel-agent/reel/agent/llm"
)

// warmRequest is a request of every message shape a conversation sends (a
// user line, a tool call, its result, text), with a tool: what the first
// model call of a process encodes.
var warmRequest = []json.RawMessage{
	json.RawMessage(`{"role":"user","content":[{"type":"text","text":"warm"}],"id":"u1"}`),
	json.RawMessage(`{"role":"assistant","content":[{"type":"reasoning","text":"r"},{"type":"text","text":"t"},{"type":"tool-call","id":"c1","name":"bash","arguments":"{}"}],"id":"a1"}`),
	json.RawMessage(`{"role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"ok"}],"isError":false}],"id":"t1"}`),
}

// warmTools is one tool in the form Request.Tools takes.
const warmTools = `[{"name":"bash","description":"d","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]`

// warmChunk is a stream chunk with a text delta, a tool call delta and
// usage: what the first model answer of a process decodes.
const warmChunk = `{"id":"w","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"c","reasoning_content":"r","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]},"finish_reason":null}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`

// Warm does the first-use work of the provider's request encoding and
// stream decoding (the SDK builds its encoders and decoders per type on
// first use: about 1–2 ms, which the first model call of a process would
// otherwise pay between the prompt and the request). It sends nothing and
// keeps nothing; reel acp runs it in the background at start, while the
// editor's initialize and session/new are answered.
func (p *Provider) Warm() {
	var memo llm.Memo
	req := llm.Request{Model: "m", System: "warm", Tools: json.RawMessage(warmTools), Messages: warmRequest, Memo: &memo, MaxTokens: 1}
	params, _, err := requestBody(p.cfg, p, req)
	if err != nil {
		p.log.Debug("warming the request encoder", "err", err)
		return
	}
	if _, err := params.MarshalJSON(); err != nil {
		p.log.Debug("warming the request encoder", "err", err)
	}
	var c sdk.ChatCompletionChunk
	if err := c.UnmarshalJSON([]byte(warmChunk)); err != nil {
		p.log.Debug("warming the stream decoder", "err", err)
	}
}

// WarmTools maps tools, the tool schemas the provider's first requests
// will most likely carry, ahead of them: the request that carries the
// same bytes takes the mapping from the provider's cache instead of
// decoding about 10 KiB of schemas between the prompt and the request.
// Like Warm it sends nothing; schemas that fail to map are left to the
// request to report.
func (p *Provider) WarmTools(tools json.RawMessage) {
	if _, err := p.cfg.tools.get(tools); err != nil {
		p.log.Debug("warming the tool schemas", "err", err)
	}
}
