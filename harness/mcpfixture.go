package harness

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/reel-agent/reel/agent/mcp/mcptest"
	"github.com/reel-agent/reel/harness/scenario"
)

// Where a replay points the scenario's MCP servers: nothing runs there, and
// nothing has to, since the agent replays the servers from the recording.
// A replay that tried to start or reach one would fail to connect it, and
// its log (mcp/connect) would differ from the recording's.
const (
	replayMCPCommand = "/nonexistent/reel-replay-starts-no-mcp-server"
	replayMCPURL     = "http://127.0.0.1:9/reel-replay-reaches-no-mcp-server"
)

// startMCP serves the scenario's HTTP and SSE stand-in MCP servers on
// 127.0.0.1 while recording and returns the mcpServers of session/new and
// session/load (always a list, possibly empty) and a function that stops
// the servers.
func (r *Runner) startMCP(ctx context.Context, sc *scenario.Scenario) ([]any, func(), error) {
	out := []any{}
	var servers []*http.Server
	stop := func() {
		for _, hs := range servers {
			_ = hs.Close()
		}
	}
	for _, s := range sc.Input.MCPServers {
		if s.Transport == "stdio" {
			command, args := replayMCPCommand, []string{"mcp-standin", s.Mode}
			if r.Mode == Record {
				command = r.Exe
			}
			out = append(out, map[string]any{"name": s.Name, "command": command, "args": args, "env": []any{}})
			continue
		}
		url := replayMCPURL
		if r.Mode == Record {
			var lc net.ListenConfig
			ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
			if err != nil {
				stop()
				return nil, nil, err
			}
			hs := &http.Server{Handler: mcptest.Handler(s.Mode, s.Transport == "sse"), ReadHeaderTimeout: 10 * time.Second}
			servers = append(servers, hs)
			go func() {
				if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					_ = ln.Close()
				}
			}()
			url = "http://" + ln.Addr().String() + "/mcp"
		}
		out = append(out, map[string]any{"type": s.Transport, "name": s.Name, "url": url, "headers": []any{}})
	}
	return out, stop, nil
}
