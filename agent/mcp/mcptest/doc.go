// Package mcptest is a small MCP server written with the official Go SDK:
// reel's stand-in MCP server. It is used by the tests of package mcp (over
// stdio by re-executing the test binary, over streamable HTTP and SSE in
// process), by the snapshot harness's MCP scenarios (as reel mcp-standin
// over stdio, and over HTTP in the harness's process), and by anyone who
// wants to try reel's MCP support without a server of their own (reel
// mcp-standin; the program mcptestserver is the same without reel).
//
// A mode selects what the server offers or how it misbehaves; see [Modes].
package mcptest
