// Package standin is a stand-in model: a real local HTTP server that speaks
// the OpenAI-compatible streaming chat-completions dialect (DeepSeek flavour)
// from a script, so that the record path — real HTTP client, real tools, real
// persistence — runs on machines with no API key and no network.
//
// # Script
//
// A script is a JSON file; unknown members are refused with the member named:
//
//	{"responses": [
//	  {"reasoning": "…", "text": "…",
//	   "toolCalls": [{"id": "call_1", "name": "bash", "arguments": "{\"command\":\"ls\"}"}],
//	   "usage": {"promptTokens": 100, "completionTokens": 20, "cacheHitTokens": 64, "reasoningTokens": 5},
//	   "finish": "stop", "chunkSize": 8, "delayMs": 0,
//	   "expect": {"lastUserContains": "…", "lastMessageContains": "…", "model": "…"}},
//	  {"error": {"status": 401, "message": "invalid key"}},
//	  {"text": "partial", "streamError": "overloaded"},
//	  {"text": "never finishes", "hang": true}
//	]}
//
// Responses are served in order, one per request, whatever the request path
// variant (POST /v1/chat/completions or /chat/completions). A request beyond
// the last response gets HTTP 500 with a message naming the request number;
// a request that fails its "expect" gets HTTP 400 naming the request number
// and the expectation; a request without "stream": true gets HTTP 400.
//
// A session-title request (one whose system message begins with
// TitlePrompt, as the agent's title call does) takes no response: it is
// answered with the script's optional "title" member, a response object like
// the others (so a title may stream slowly, fail, hang or be hostile), or,
// without one, with the text DefaultTitle. Scripts written before titles
// existed therefore keep working unchanged:
//
//	{"responses": [{"text": "PONG"}], "title": {"text": "Ping pong check"}}
//
// # Stream
//
// A response streams as server-sent events, each "data: <chat.completion.chunk>":
// first a delta {"role":"assistant","content":""}; then the reasoning as
// "reasoning_content" deltas; then the text as "content" deltas; then each
// tool call, in order, as a delta carrying its index, id, type and name with
// empty arguments followed by argument deltas; then an empty delta with the
// finish_reason ("finish", default "tool_calls" when there are tool calls and
// "stop" otherwise); then, when the request asked for
// stream_options.include_usage, a chunk with no choices and the usage in
// DeepSeek's form (prompt_cache_hit_tokens / prompt_cache_miss_tokens as well
// as prompt_tokens_details.cached_tokens and
// completion_tokens_details.reasoning_tokens; zero when "usage" is absent);
// finally "data: [DONE]".
//
// Reasoning, text and arguments are cut into deltas of "chunkSize" runes
// (default 8), so streaming is real. "delayMs" waits before every event.
// "streamError" sends an {"error":…} event after the content deltas instead
// of finishing. "hang" sends the content deltas and then holds the response
// open until the client goes away. "error" answers with that HTTP status and
// an OpenAI-style {"error":{"message":…}} body instead of a stream.
package standin
