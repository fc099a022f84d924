package logcmd

import (
	"context"
	"errors"
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
// here (repair the log first) so that nothing is dropped silently. OUT
// must not exist; the session lock that guards it (see lockID) is held
// while it is written, so a reel cannot open a session there meanwhile.
func convert(_ context.Context, in, out string) (err error) {
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
	locks := newLocks("convert", out)
	defer func() { err = errors.Join(err, locks.release()) }()
	if err := locks.take(lockID(out, l.header)); err != nil {
		return err
	}
	if exists(out) {
		return fmt.Errorf("convert: %s already exists; refusing to overwrite it", out)
	}
	return writeFile(out, l.header, l.events)
}

// repair commits crash-repair closers to a log file: it validates the log,
// drops a torn tail, and appends the synthetic closers (error tool results,
// step/end, turn/end interrupted). The file is replaced atomically, under
// the session's lock: a log a reel holds open is refused (*LiveError).
func repair(_ context.Context, path string, stdout io.Writer) (err error) {
	// seed validates first, so a refused log is reported as FILE:LINE: seq
	// N (type) like verify does (Load would prefix the file name again).
	locks, l, _, err := lockedRead("repair", path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, locks.release()) }()
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
