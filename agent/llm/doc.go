// Package llm defines how reel talks to language models: the stream
// vocabulary a model response is made of, the request a provider is given,
// the small [Provider] / [Stream] interfaces, and the typed [ProviderError].
//
// Concrete providers live in sub-packages: [github.com/reel-agent/reel/agent/llm/openai]
// speaks OpenAI-compatible streaming chat completions (DeepSeek by default),
// and [github.com/reel-agent/reel/agent/llm/standin] is a scripted local HTTP
// server speaking the same dialect, for keyless recording and tests.
//
// # Stream vocabulary
//
// A model response is a sequence of [Chunk]s. Every chunk is stored in the
// session log as the "chunk" member of an assistant/chunk event, so its JSON
// form is fixed by the dsh session format (version 0) and must be reproduced
// byte for byte. The recognised shapes, with keys in exactly this order, are:
//
//	{"type":"block-start","index":0,"blockType":"reasoning"}
//	{"type":"reasoning-delta","index":0,"text":"…"}
//	{"type":"text-delta","index":1,"text":"…"}
//	{"type":"tool-call-delta","index":1,"id":"call_1","name":"bash","argumentsDelta":"…"}
//	{"type":"block-end","index":0,"block":{"type":"reasoning","text":"…"}}
//	{"type":"block-end","index":1,"block":{"type":"text","text":"…"}}
//	{"type":"block-end","index":1,"block":{"type":"tool-call","id":"call_1","name":"bash","arguments":"…"}}
//	{"type":"usage","usage":{"inputTokens":1,"outputTokens":2,"cacheReadTokens":3,"reasoningTokens":4}}
//	{"type":"finish","reason":{"kind":"stop"}}
//	{"type":"finish","reason":{"kind":"error","failure":{"message":"…","code":"AUTH"}}}
//
// "index" is always written, also when it is 0. In tool-call-delta "name" is
// omitted when empty; in usage "cacheReadTokens" and "reasoningTokens" are
// optional and written exactly when present. Strings are written by
// [sessionlog.AppendString], the session log's one string encoder, which
// escapes them the way JavaScript's JSON.stringify does (the recording
// system is JavaScript): only '"', '\\' and control characters below U+0020
// are escaped (\b \f \n \r \t, otherwise \u00xx in lower-case hex); HTML
// characters and U+2028/U+2029 are written raw. An invalid UTF-8 byte is
// written as the character U+FFFD itself (encoding/json would write the
// escape \ufffd; both decode to the same string, and a decoded chunk never
// holds invalid UTF-8, so decode/encode round trips are exact).
//
// A chunk whose "type" is not one of the above is kept verbatim in
// [Chunk.Raw] and written back unchanged. A recognised chunk with an unknown
// or missing member is refused with an error naming the member, so that
// nothing is silently lost on a decode/encode round trip.
//
// # Stream order
//
// A well-formed stream opens blocks with block-start (indices 0, 1, 2, … in
// order of appearance), streams deltas into open blocks, closes every open
// block with block-end (in index order), then reports at most one usage chunk
// and ends with exactly one finish chunk, after which [Stream.Next] returns
// [io.EOF]. Finish reason kinds are "stop", "tool-calls", "max-tokens",
// "aborted", and "error" (with a failure) when a failure is
// recorded.
//
// [Assembler] is the one place that rebuilds the assistant message of a
// model call from its chunks (content parts, usage, finish, tool calls); it
// also accepts streams that are not well formed, by the rules it documents.
// [Stream] states the contract every stream implementation keeps (sticky
// end, [ErrClosed] after Close, prompt cancellation);
// [github.com/reel-agent/reel/agent/llm/llmtest] checks it.
//
// # Requests
//
// A [Request] carries the header of a model call (provider, model, system
// prompt, tool schemas, call options) and the history as dsh messages kept as
// raw JSON; [ParseMessage] decodes one for a provider that needs its parts.
package llm
