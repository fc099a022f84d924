// Package openai is the [llm.Provider] for OpenAI-compatible streaming chat
// completions, built on github.com/openai/openai-go/v3. DeepSeek is the
// default ([DeepSeek]); [OpenAI] configures api.openai.com. Base URL, model,
// and the environment variable holding the key are all set through [Config].
//
// # Requests
//
// The system prompt becomes a leading system message. dsh messages map to
// chat messages as follows:
//
//   - user text parts become one user message (several parts joined by "\n");
//     image parts, whose bytes live outside the log, become a text note
//     "[image: <mediaType>]";
//   - tool-result parts (dsh stores them in a user-role message) become one
//     "tool" message each, with tool_call_id and the result's text parts
//     joined by "\n", placed before any user text of the same message;
//   - assistant text parts become the content, tool-call parts become
//     tool_calls, and reasoning parts are dropped (they are not sent back).
//
// Tool schemas are sent as function tools with their "parameters" JSON kept
// byte for byte. The request always asks for stream_options.include_usage.
// MaxTokens is sent as max_tokens, or as max_completion_tokens when
// [Config.MaxCompletionTokens] is set (OpenAI's newer models need it).
//
// # Stream mapping
//
// Block indices are given in order of appearance. "reasoning_content" deltas
// (a DeepSeek extension, read from the raw delta JSON) open and fill a
// reasoning block; content (and refusal) deltas a text block; each tool-call
// index a tool-call block, whose every tool-call-delta carries the call's id
// and name (as dsh records them), including the first one with empty
// arguments. All blocks stay open until the model finishes; then every block
// is closed with block-end in index order, the usage chunk follows, and the
// finish chunk ends the stream. Usage reports inputTokens = prompt_tokens
// minus cache hits and cacheReadTokens = cache hits (DeepSeek's
// prompt_cache_hit_tokens, else OpenAI's prompt_tokens_details.cached_tokens),
// and reasoningTokens from completion_tokens_details. Finish reasons map
// stop→"stop", tool_calls→"tool-calls", length→"max-tokens", anything
// else (content_filter, …)→an "error" finish with the failure "model
// stopped: REASON" and the code REASON upper-cased, as the recording
// system's DeepSeek adapter maps them.
//
// A stream that finishes with no content yields its usage chunk and then an
// EMPTY_RESPONSE [llm.ProviderError]; a stream cut before a finish reason
// yields TRANSPORT; an error event inside the stream yields SERVER.
//
// The stream keeps the [llm.Stream] contract (checked by
// [github.com/reel-agent/reel/agent/llm/llmtest]): Close cancels the request
// and closes the response body, which unblocks a Next reading it; from then
// on Next returns [llm.ErrClosed]. Cancelling the context makes a blocked
// Next return an error wrapping the context's error.
//
// # Errors and retries
//
// HTTP 401/403 are AUTH, 429 RATE_LIMIT, 408 and transport timeouts TIMEOUT,
// 5xx SERVER, other 4xx BAD_REQUEST, connection failures TRANSPORT. Opening a
// stream is retried for the retryable codes, up to [Config.MaxAttempts]
// attempts in all with exponential backoff from [Config.BaseDelay] (capped by
// [Config.MaxDelay]; a Retry-After header may lengthen a wait up to that
// cap), each retry logged at Warn on [Config.Logger]. Failures after the
// stream has started are returned to the caller, who has already seen
// chunks. The SDK's own retries are disabled.
//
// The API key is never written to a log line or an error message: every
// message taken from the server or the transport is scrubbed of it.
package openai
