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
// must not exist, and its extension must name a backend (checkOut); the
// session lock that guards it (see lockID) is held while it is written, so
// a reel cannot open a session there meanwhile. session picks the session
// of a database IN.
func convert(_ context.Context, in, out, session string) (err error) {
	if err := checkOut(out); err != nil {
		return err
	}
	if exists(out) {
		return fmt.Errorf("convert: %s already exists; refusing to overwrite it", out)
	}
	l, _, err := seed(in, session)
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
// step/end, turn/end interrupted), under the session's lock: a log a reel
// holds open is refused (*LiveError). A JSONL file is replaced atomically;
// a database session (session picks one of several) gets the closers
// appended in one transaction, leaving its other sessions alone.
func repair(_ context.Context, path, session string, stdout io.Writer) (err error) {
	// seed validates first, so a refused log is reported as FILE:LINE: seq
	// N (type) like verify does (Load would prefix the file name again).
	locks, l, _, err := lockedRead("repair", path, session)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, locks.release()) }()
	ld, err := sessionlog.Load(path, l.header, l.events)
	if err != nil {
		return l.locate(err)
	}
	if len(ld.Closers) == 0 && l.torn == nil {
		fmt.Fprintf(stdout, "%s: nothing to repair\n", l.file)
		return nil
	}
	if isSQLite(path) {
		err = sqlite.AppendFile(path, l.header.ID, ld.Closers)
	} else {
		err = writeFile(path, l.header, ld.Log.Events())
	}
	if err != nil {
		return err
	}
	if l.torn != nil {
		fmt.Fprintf(stdout, "%s: dropped a torn tail of %s at line %d\n", l.file, plural(l.torn.Records, "record"), l.torn.Line)
	}
	for _, c := range ld.Closers {
		fmt.Fprintf(stdout, "%s: added seq %d (%s)\n", l.file, c.Seq, c.Type)
	}
	return nil
}
