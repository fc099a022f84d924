package equiv

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/reel-agent/reel/sessionlog/logcmd"
)

// ErrDifferent is returned by DiffMain when the two runs differ.
var ErrDifferent = errors.New("equiv: the runs differ")

const diffHelp = `usage: reel log diff A B [--env-line LINE]...

Prints the semantic differences between two runs of one scenario, with the
engine that reel snapshot --corpus uses: tool calls, tool outcomes and
their essential content (per tool, see docs/scenarios.md), user and
injected messages, sandbox settings, assistant text per step, turn ends,
the history shape of every step's request, and, when both sides have a
wire transcript, stop reasons, error codes, agent text and permission
requests. A and B are session logs (.jsonl, .jsonl.zst) or scenario
folders: a corpus scenario (session.jsonl, session.N.jsonl,
stdout.expected.jsonl) or a folder reel snapshot --corpus --keep wrote
(the same, with stdout.jsonl). A is the expected side.

Exit status: 0 when no difference was found (what could not be checked
is listed as "unchecked"), 1 when the runs differ or on a usage error.

flags:
`

const diffExample = `
example:
  reel snapshot --corpus ../shared/corpus/dsh-acp-snapshots -run fs-read --keep /tmp/kept
  reel log diff ../shared/corpus/dsh-acp-snapshots/fs-read /tmp/kept/fs-read
`

// DiffCommand is `reel log diff`, wired into logcmd.Run by cmd/reel
// (logcmd cannot import the harness).
func DiffCommand() logcmd.Command {
	return logcmd.Command{
		Name:     "diff",
		Synopsis: "A B",
		Summary:  "print the semantic differences between two runs (exit 1 when they differ)",
		Run:      DiffMain,
	}
}

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return fmt.Sprint(*r) }
func (r *repeated) Set(s string) error { *r = append(*r, s); return nil }

// DiffMain implements `reel log diff A B`: it prints the report and
// returns ErrDifferent when the runs differ. -h prints the help and
// returns flag.ErrHelp.
func DiffMain(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("reel log diff", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var env repeated
	fs.Var(&env, "env-line", "a bash output `LINE` that A's test environment added and no agent prints; dropped from A's results (repeatable)")
	var paths []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, diffHelp)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			fmt.Fprint(stdout, diffExample)
			return flag.ErrHelp
		}
		if err != nil {
			return fmt.Errorf("%w: reel log diff: %v (reel log diff -h shows the flags)", logcmd.ErrUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		paths = append(paths, args[0])
		args = args[1:]
	}
	if len(paths) != 2 {
		return fmt.Errorf("%w: reel log diff A B (got %d argument(s))", logcmd.ErrUsage, len(paths))
	}
	want, err := Load(paths[0])
	if err != nil {
		return fmt.Errorf("reel log diff: A: %w", err)
	}
	got, err := Load(paths[1])
	if err != nil {
		return fmt.Errorf("reel log diff: B: %w", err)
	}
	want.Label, got.Label = "A", "B"
	r := Compare(want, got, Options{EnvironmentLines: env})
	fmt.Fprintf(stdout, "A = %s\nB = %s\n\n", paths[0], paths[1])
	fmt.Fprint(stdout, r.String())
	switch v := r.Verdict(); v {
	case Different:
		fmt.Fprintf(stdout, "\ndifferent: %d difference(s)\n", len(r.Diffs))
		return fmt.Errorf("%w (%d difference(s))", ErrDifferent, len(r.Diffs))
	case Partial:
		fmt.Fprintf(stdout, "\npartial: no difference found, %d thing(s) not checked\n", len(r.Unchecked))
	default:
		fmt.Fprintln(stdout, "equivalent")
	}
	return nil
}
