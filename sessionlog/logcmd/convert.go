package logcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

func readSQLite(path string) (*loaded, error) {
	h, events, err := sqlite.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &loaded{file: path, header: h, events: events, lineOf: func(seq int) int { return seq + 1 }}, nil
}

// writeFile writes a whole log to a file of the kind its extension names.
func writeFile(path string, h sessionlog.Header, events []sessionlog.Event) error {
	if isSQLite(path) {
		return sqlite.WriteFile(path, h, events)
	}
	return jsonl.WriteFile(path, h, events)
}

// convert copies a log between backends losslessly: every logical event,
// with its exact data bytes, and the exact header. A torn tail is refused
// here (repair the log first) so that nothing is dropped silently.
func convert(_ context.Context, in, out string) error {
	if exists(out) {
		return fmt.Errorf("convert: %s already exists; refusing to overwrite it", out)
	}
	l, _, err := seed(in)
	if err != nil {
		return err
	}
	if l.torn != nil {
		return fmt.Errorf("convert: %s has a torn tail at line %d; run `reel log repair %s` first", in, l.torn.Line, in)
	}
	return writeFile(out, l.header, l.events)
}

// repair commits crash-repair closers to a log file: it validates the log,
// drops a torn tail, and appends the synthetic closers (error tool results,
// step/end, turn/end interrupted). The file is replaced atomically.
func repair(_ context.Context, path string, stdout io.Writer) error {
	// seed validates first, so a refused log is reported as FILE:LINE: seq
	// N (type) like verify does (Load would prefix the file name again).
	l, _, err := seed(path)
	if err != nil {
		return err
	}
	ld, err := sessionlog.Load(path, l.header, l.events)
	if err != nil {
		return l.locate(err)
	}
	if len(ld.Closers) == 0 && l.torn == nil {
		fmt.Fprintf(stdout, "%s: nothing to repair\n", path)
		return nil
	}
	if err := writeFile(path, l.header, ld.Log.Events()); err != nil {
		return err
	}
	if l.torn != nil {
		fmt.Fprintf(stdout, "%s: dropped a torn tail of %d record(s) at line %d\n", path, l.torn.Records, l.torn.Line)
	}
	for _, c := range ld.Closers {
		fmt.Fprintf(stdout, "%s: added seq %d (%s)\n", path, c.Seq, c.Type)
	}
	return nil
}
