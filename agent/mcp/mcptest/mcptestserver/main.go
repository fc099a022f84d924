// Command mcptestserver runs the test MCP server of package mcptest over
// stdio: mcptestserver [MODE] (default "tools"; see mcptest.Modes).
package main

import (
	"os"

	"github.com/reel-agent/reel/agent/mcp/mcptest"
)

func main() {
	mode := mcptest.ModeTools
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	os.Exit(mcptest.Main(mode))
}
