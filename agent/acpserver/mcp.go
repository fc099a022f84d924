package acpserver

import (
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/mcp"
)

// mcpCapabilities are the MCP transports reel connects (stdio is implied:
// every agent must support it).
var mcpCapabilities = acp.McpCapabilities{Http: true, Sse: true}

// mcpOption turns the MCP servers of session/new or session/load into the
// engine's session option. A server of a transport reel does not offer
// (ACP's unstable "acp" transport) or without a name is invalid params;
// what else is wrong with a server (an executable that does not start, a
// URL that does not answer) is found when it connects, and only that
// server is left out.
func mcpOption(servers []acp.McpServer) (agent.SessionOption, error) {
	out := make([]mcp.ServerConfig, 0, len(servers))
	for i, s := range servers {
		var c mcp.ServerConfig
		switch {
		case s.Stdio != nil:
			c = mcp.ServerConfig{Name: s.Stdio.Name, Transport: mcp.TransportStdio, Command: s.Stdio.Command, Args: s.Stdio.Args}
			for _, e := range s.Stdio.Env {
				c.Env = append(c.Env, mcp.EnvVar{Name: e.Name, Value: e.Value})
			}
		case s.Http != nil:
			c = mcp.ServerConfig{Name: s.Http.Name, Transport: mcp.TransportHTTP, URL: s.Http.Url, Headers: headers(s.Http.Headers)}
		case s.Sse != nil:
			c = mcp.ServerConfig{Name: s.Sse.Name, Transport: mcp.TransportSSE, URL: s.Sse.Url, Headers: headers(s.Sse.Headers)}
		default:
			return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf(
				"mcpServers[%d]: reel connects stdio, http and sse MCP servers only (see mcpCapabilities)", i)})
		}
		if c.Name == "" {
			return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("mcpServers[%d]: the server needs a name", i)})
		}
		out = append(out, c)
	}
	return agent.WithMCPServers(out), nil
}

// headers converts ACP's HTTP headers.
func headers(hs []acp.HttpHeader) []mcp.Header {
	var out []mcp.Header
	for _, h := range hs {
		out = append(out, mcp.Header{Name: h.Name, Value: h.Value})
	}
	return out
}
