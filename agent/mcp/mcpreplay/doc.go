// Package mcpreplay replays a session's MCP servers from a recorded log, so
// a replayed scenario that used MCP tools needs none of its servers, and
// still runs reel's own MCP client: package mcp connects, lists and calls
// them exactly as it does live, only over an in-memory transport
// (mcp.Options.Transport) to a server (the Go SDK's, in-process) that
// serves the recording. A session's k-th connection is the recording's
// k-th mcp/connect record: the same servers, the same failures (a server
// that failed fails to connect again, and keeps the recorded error, which
// carries what no replay reproduces), the same tools with the schemas the
// record holds. The connection's status is built from what the client
// made of the listing, so a client that names, describes or drops tools
// otherwise than the recording differs from it in the log.
//
// Each call of a replayed tool is announced to its server with the result
// the recording logged for the call with the same id, in order; the server
// answers the client's tools/call with it when the tool and the canonical
// arguments it receives (strictjson's canonical encoding, as the live
// client sends) match the recording's, as one text block with the
// recorded isError. The client renders that to the model as it renders a
// live result.
//
// A replay that asks for something the recording does not hold fails
// loudly, saying what differs: other servers (a Connect error), a call the
// recording never made, other arguments (the server's error result names
// both), a call the client answers without sending it to the server. The
// harness's comparison with the recording then fails too.
//
// What a replay cannot check: the recording holds the rendered text of a
// result, not the server's content blocks, so the rendering of images,
// resources and structured content is not replayed (package mcp's unit
// tests cover it); nor are process handling and the stdio and HTTP
// transports themselves.
package mcpreplay
