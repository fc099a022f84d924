package dispatch

import (
	"fmt"
	"os"

	"github.com/reel-agent/reel/agent/sandbox"
)

// init runs reel sandbox-exec when the process was started as one: it
// confines the process and supervises the command, and never returns then.
func init() {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		err := sandbox.Exec(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(sandbox.ExitCode(err))
	}
}
