// Command reel is an ACP coding agent with a durable session log and a
// keyless snapshot harness. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/reel-agent/reel/agent/acpcmd"
	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/lsp/lsptest"
	"github.com/reel-agent/reel/agent/mcp/mcptest"
	// sandbox-exec runs from this package's init, before most of reel's
	// packages are initialized (see its documentation).
	_ "github.com/reel-agent/reel/agent/sandbox/dispatch"
	"github.com/reel-agent/reel/harness"
	"github.com/reel-agent/reel/harness/equiv"
	"github.com/reel-agent/reel/internal/termtext"
	"github.com/reel-agent/reel/sessionlog/logcmd"
)

const usage = `usage: reel <command> [args]

commands:
  acp             serve the Agent Client Protocol on stdin/stdout (for editors)
  snapshot        replay, refresh or record the scenario fixtures
  log             inspect, verify, convert and repair session logs
  rewind          restore a session's files and conversation to before turn N (checkpoints)
  standin         run the scripted stand-in model server
  mcp-standin     run a stand-in MCP server (stdio, or --http ADDR) to try MCP tools
  lsp-standin     run a stand-in language server (stdio) to try the lsp tool
  sandbox-exec    (internal) run a command under a Landlock ruleset
  version         print the version
`

func main() {
	// sandbox-exec never gets here: package sandbox/dispatch's init ran it
	// (confining this process before it starts anything) and exited.
	// mcp-standin over stdio owns stdout: nothing else may write to it.
	if len(os.Args) > 1 && os.Args[1] == "mcp-standin" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := mcptest.Command(ctx, os.Args[2:], os.Stderr)
		stop()
		os.Exit(code)
	}
	// lsp-standin owns stdout too: it speaks LSP there.
	if len(os.Args) > 1 && os.Args[1] == "lsp-standin" {
		os.Exit(lsptest.Command(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	// Diagnostics may quote what a model or tool wrote: stderr reaches
	// the terminal through termtext, escaped. (stdout is the commands' own:
	// protocol frames for acp, escaped human output for log and snapshot.)
	stderr := termtext.NewWriter(os.Stderr)
	code := 0
	if err := run(os.Args[1:], os.Stdin, os.Stdout, stderr); err != nil {
		code = report(err, stderr)
	}
	_ = stderr.Flush()
	os.Exit(code)
}

// report turns run's error into the exit status: a help request
// (flag.ErrHelp; the subcommand has already printed its help to stdout) is
// success, anything else is printed to stderr and exits 1.
func report(err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "reel:", err)
	return 1
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	env := acpcmd.IO{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv, Executable: exe}
	switch args[0] {
	case "acp":
		return acpcmd.Run(ctx, args[1:], env)
	case "rewind":
		return acpcmd.Rewind(ctx, args[1:], env)
	case "log":
		return logcmd.Run(ctx, args[1:], stdout, stderr, equiv.DiffCommand(), logcmd.ForkCommand())
	case "standin":
		return standin.Main(ctx, args[1:], stdout, stderr)
	case "snapshot":
		return harness.Main(ctx, args[1:], stdout, stderr, exe)
	case "version":
		fmt.Fprintln(stdout, "reel", acpcmd.Version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
