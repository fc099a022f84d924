// Command mcptestserver runs the test MCP server of package testserver over
// stdio: mcptestserver [MODE] (default "tools"; see testserver.Modes).
package main

import (
	"os"

	"github.com/reel-agent/reel/agent/mcp/internal/testserver"
)

func main() {
	mode := testserver.ModeTools
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	os.Exit(testserver.Main(mode))
}
