package logcmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/internal/storage"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// LiveError reports a log that a running reel holds open (its session's
// writer lock is held): a command that rewrites logs refuses it. It wraps
// sessionlog.ErrInUse.
type LiveError struct {
	Op      string // the refused command: "repair", "convert"
	File    string // the log file
	Session string // the session id whose lock is held
	Lock    string // the lock file
}

func (e *LiveError) Error() string {
	return fmt.Sprintf("%s: %s is live: a reel process holds its session lock %s (session %s); close that session or stop that reel, then retry",
		e.Op, e.File, e.Lock, e.Session)
}

// Unwrap returns sessionlog.ErrInUse.
func (e *LiveError) Unwrap() error { return sessionlog.ErrInUse }

// sessionLocks are the per-session writer locks a rewrite holds, the very
// locks the agent's store takes (<dir>/<id>.lock, flock(2)) while a session
// is open, so that no rewrite replaces a log a writer is appending to.
type sessionLocks struct {
	op    string // the command, for messages
	file  string // the log file being rewritten
	held  map[string]*storage.Lock
	order []string
}

func newLocks(op, file string) *sessionLocks {
	return &sessionLocks{op: op, file: file, held: map[string]*storage.Lock{}}
}

// fileID is the session id a JSONL store gives the log at path: its base
// name without the log extension ("" for a SQLite file or another name).
func fileID(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{jsonl.ExtZstd, jsonl.ExtRaw} {
		if id, ok := strings.CutSuffix(base, ext); ok && id != "" {
			return id
		}
	}
	return ""
}

// take locks session id in the directory of the file. An id no store can
// hold (empty, a dot name, a path) needs no lock. A lock held elsewhere is
// a *LiveError.
func (l *sessionLocks) take(id string) error {
	if _, ok := l.held[id]; ok || storage.CheckID(id) != nil {
		return nil
	}
	dir := filepath.Dir(l.file)
	lk, err := storage.Acquire(dir, id)
	if errors.Is(err, sessionlog.ErrInUse) {
		return &LiveError{Op: l.op, File: l.file, Session: id, Lock: storage.LockPath(dir, id)}
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %w", l.op, l.file, err)
	}
	l.held[id] = lk
	l.order = append(l.order, id)
	return nil
}

// release drops every lock taken.
func (l *sessionLocks) release() error {
	var errs []error
	for _, id := range l.order {
		errs = append(errs, l.held[id].Release())
	}
	l.held, l.order = map[string]*storage.Lock{}, nil
	return errors.Join(errs...)
}

// lockID is the session whose lock guards the log at path: for a JSONL
// file the id a store names it by (its base name), for a SQLite file the
// session it holds (header id, known once read).
func lockID(path string, header sessionlog.Header) string {
	if isSQLite(path) {
		return header.ID
	}
	return fileID(path)
}

// lockedRead takes the session lock of the log at path (see lockID), then
// reads and validates it while the lock is held: a SQLite file is read
// once to learn its session (unless session names it) and again under the
// lock. The caller releases the locks.
func lockedRead(op, path, session string) (*sessionLocks, *loaded, *sessionlog.Log, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil, nil, err
	}
	locks := newLocks(op, path)
	fail := func(err error) (*sessionLocks, *loaded, *sessionlog.Log, error) {
		return nil, nil, nil, errors.Join(err, locks.release())
	}
	first := session
	if !isSQLite(path) {
		first = fileID(path)
	}
	if err := locks.take(first); err != nil {
		return fail(err)
	}
	for {
		l, lg, err := seed(path, session)
		if err != nil {
			return fail(err)
		}
		id := lockID(path, l.header)
		if _, ok := locks.held[id]; ok || storage.CheckID(id) != nil {
			return locks, l, lg, nil
		}
		if err := locks.take(id); err != nil {
			return fail(err)
		}
	}
}
