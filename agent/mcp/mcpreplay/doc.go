// Package mcpreplay replays a session's MCP servers from a recorded log, so
// a replayed scenario that used MCP tools needs none of its servers: a
// session's k-th connection is the recording's k-th mcp/connect record
// (the same servers, the same failures, the same tools with the schemas the
// record holds), and each call of a replayed tool
// answers with the result the recording logged for the call with the same
// id, in order. It implements the engine's agent.MCPConnector; the engine
// logs and shows the calls as it does live.
//
// A replay that asks for something the recording does not hold (other
// servers, a call the recording never made, other arguments) fails loudly
// — a Connect error or an error result saying what differs — so that the
// harness's comparison with the recording fails too.
package mcpreplay
