// Package mcp is reel's Model Context Protocol client: it connects the MCP
// servers an editor passes in ACP's session/new and session/load, lists
// their tools and offers them to the model as ordinary reel tools (package
// tools' Tool interface). It uses the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) for the protocol and its client
// transports, and knows nothing of ACP or of the session log: the ACP
// adapter converts acp.McpServer into [ServerConfig], the engine registers
// the tools and logs their calls like any other.
//
// # What it owns
//
//   - Connecting: [Connect] connects every configured server concurrently,
//     each bounded by a connect timeout, and returns a [Set] of those that
//     connected plus a [ConnectError] listing each that did not, as a
//     [ServerError] naming the server and the [Stage] that failed (config,
//     start, initialize, list tools). One broken server never keeps the
//     others from connecting.
//   - Child processes: a stdio server runs in its own process group (on
//     Linux with a parent-death signal), is reaped as soon as it exits, and
//     is stopped by [Set.Close]: stdin closed, a grace period, SIGTERM, the
//     grace again, SIGKILL to the whole group. Its stderr is read at all
//     times (a server never blocks on it); the first [MaxStderrBytes] are
//     forwarded line by line to the logger (lines cut at
//     [MaxStderrLineBytes]), the rest counted and reported as dropped.
//   - HTTP: the streamable HTTP and SSE client transports of the SDK, with
//     the configured headers added to requests to the configured host only
//     (never to a redirect target elsewhere); header values are never
//     logged.
//   - Naming: a server's tool is called mcp__SERVER__TOOL with both parts
//     sanitized to [A-Za-z0-9_-] and the whole cut to [MaxNameBytes] with a
//     hash suffix ([ToolName]). Collisions are resolved deterministically:
//     a tool whose literal name needed no change keeps it, and otherwise
//     the earlier tool in a fixed order (servers in configuration order,
//     tools by original name) keeps it; the other gets a hash suffix of
//     its original names. Every changed name is reported as a [Rename].
//     A server name containing "__" is refused ([ErrInvalidConfig]): it
//     would make "a__b"'s tool "c" and "a"'s tool "b__c" share a name. A
//     name is still not one-to-one with (server, tool) across connections
//     (sanitizing and hash suffixes depend on the other servers), so what
//     a name means must be looked up here ([Tool.Server],
//     [Tool.RemoteName]), never parsed or remembered.
//     Tools that cannot be
//     offered (no name, listed twice, a schema that is not an object or is
//     larger than [MaxSchemaBytes], more than [MaxTools]) are reported as
//     [Skipped].
//   - Calling: the model's arguments go through one strict parse
//     ([CheckArguments]: a JSON object, valid UTF-8, size- and
//     depth-capped, no key repeated or differing only in case at any
//     depth) before anything is asked or sent, and what is sent is its
//     canonical encoding, the bytes the user was shown; the call honours its
//     context (a cancel sends notifications/cancelled and returns at once);
//     the result is rendered to text.
//
// # Rendering results
//
// Text blocks are shown as they are. Images and audio become a note with
// their MIME type and size ("[image: image/png, 1234 bytes; binary data
// not shown]"), never their base64 data; a resource link becomes a note
// with its name, title, URI, MIME type and size, followed by its
// description; an embedded text resource its URI line and text, a binary
// one a note with its size. Structured content is shown as compact JSON,
// unless a text block already holds the same JSON. Blocks are joined by
// newlines; a rendering longer than the cap keeps its head and tail around
// a notice saying how many bytes were omitted. isError is carried over.
//
// # Lifetime and concurrency
//
// The context given to Connect bounds connecting only, like
// net.Dialer.DialContext; the connections then live until Close (the
// engine closes a session's Set when the session closes). A Set and its
// tools are safe for concurrent use; Close may run concurrently with calls,
// which it cancels. The tool list is fixed when the Set is made: a server's
// list_changed notification is logged, not followed, so a session's tool
// schemas (pinned in its request headers) do not change under it.
package mcp
