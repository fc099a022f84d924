package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"

	"github.com/reel-agent/reel/sessionlog"
)

// maxIDLen bounds a session id so that every derived file name fits in a
// typical 255-byte name limit.
const maxIDLen = 200

// CheckID reports whether id can name a session's files: non-empty, at most
// 200 bytes, no path separators, NUL or control characters, not starting
// with a dot. The error names the id and matches sessionlog.ErrBadID.
func CheckID(id string) error {
	bad := ""
	switch {
	case id == "":
		bad = "is empty"
	case len(id) > maxIDLen:
		bad = fmt.Sprintf("is longer than %d bytes", maxIDLen)
	case id[0] == '.':
		bad = "starts with a dot"
	case strings.ContainsAny(id, `/\`):
		bad = "contains a path separator"
	default:
		for _, c := range []byte(id) {
			if c < 0x20 || c == 0x7f {
				bad = "contains a control character"
				break
			}
		}
	}
	if bad != "" {
		return &idError{id: id, reason: bad}
	}
	return nil
}

// idError is CheckID's error; it matches sessionlog.ErrBadID.
type idError struct{ id, reason string }

func (e *idError) Error() string {
	return fmt.Sprintf("%v: %q %s", sessionlog.ErrBadID, e.id, e.reason)
}

func (e *idError) Unwrap() error { return sessionlog.ErrBadID }

// CheckHeader validates h for a new session and returns it with Raw set to
// the exact compact header object to store. A zero Raw is built from the
// fields (sessionlog.NewHeader). h.ID is checked first, with CheckID (so a
// bad id is sessionlog.ErrBadID even when it also makes Raw malformed), and
// the parsed fields must agree with Raw.
func CheckHeader(h sessionlog.Header) (sessionlog.Header, error) {
	if err := CheckID(h.ID); err != nil {
		return sessionlog.Header{}, err
	}
	if h.Version != sessionlog.Version {
		return sessionlog.Header{}, fmt.Errorf("session %s: %w %d (reel writes version 0 only)", h.ID, sessionlog.ErrVersion, h.Version)
	}
	raw := h.Raw
	if len(raw) == 0 {
		raw = sessionlog.NewHeader(h.ID, h.CreatedAt, h.Cwd).Raw
	}
	d, err := sessionlog.DecodeHeader(raw)
	if err != nil {
		return sessionlog.Header{}, fmt.Errorf("session %s: %w", h.ID, err)
	}
	if d.ID != h.ID || d.CreatedAt != h.CreatedAt || d.Cwd != h.Cwd {
		return sessionlog.Header{}, fmt.Errorf("session %s: %w: fields (id %q, createdAt %d, cwd %q) disagree with the raw header %s",
			h.ID, sessionlog.ErrHeader, h.ID, h.CreatedAt, h.Cwd, raw)
	}
	return d, nil
}

// CheckBatch checks a batch about to be stored after next events: seqs
// contiguous from next, a non-empty type, and data that is valid, compact
// JSON (what a line-based log can hold and read back byte for byte). Log
// rules are not checked here: that is sessionlog.Log's job. The error is a
// *sessionlog.EventError wrapping sessionlog.ErrInvalid.
func CheckBatch(next int, events []sessionlog.Event) error {
	for i := range events {
		e := &events[i]
		var msg string
		switch {
		case e.Seq != next+i:
			msg = fmt.Sprintf("append out of order: expected seq %d", next+i)
		case e.Type == "":
			msg = "event has no type"
		case e.Data != nil && !json.Valid(e.Data):
			msg = "data is not valid JSON"
		case e.Data != nil && !isCompact(e.Data):
			msg = "data is not compact JSON"
		}
		if msg != "" {
			return &sessionlog.EventError{Seq: e.Seq, Type: e.Type, Err: fmt.Errorf("%w: %s", sessionlog.ErrInvalid, msg)}
		}
	}
	return nil
}

// isCompact reports whether valid JSON raw has no whitespace outside strings.
func isCompact(raw []byte) bool { return sessionlog.IsCompact(raw) }

// LockPath is the lock sidecar of session id in dir.
func LockPath(dir, id string) string { return filepath.Join(dir, id+".lock") }

// Lock is a held session writer lock.
type Lock struct {
	fl *flock.Flock
}

// maxLockTries bounds how often Acquire retries a lock file that its
// holder removed while Acquire was taking it.
const maxLockTries = 8

// Acquire takes the writer lock of session id in dir without waiting. When
// another writer (in this process or another) holds it, the error wraps
// sessionlog.ErrInUse and names the session.
//
// A holder removes the lock file when it releases the lock, so a lock taken
// on a file that is no longer the one at the lock path is worthless: Acquire
// checks, after locking, that the path still names the file it locked, and
// otherwise starts over with the path as it now is.
func Acquire(dir, id string) (*Lock, error) {
	return acquire(LockPath(dir, id), id, nil)
}

// acquire is Acquire on lock file p; locked, when set, runs right after
// each lock is taken, before it is checked (tests use it to release and
// remove the file in between, as a holder racing Acquire would).
func acquire(p, id string, locked func()) (*Lock, error) {
	for try := 1; ; try++ {
		fl := flock.New(p)
		ok, err := fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("session %s: lock %s: %w", id, p, err)
		}
		if !ok {
			return nil, fmt.Errorf("session %s: %w (lock %s is held)", id, sessionlog.ErrInUse, p)
		}
		if locked != nil {
			locked()
		}
		same, err := lockedCurrent(fl, p)
		if err != nil {
			_ = fl.Close()
			return nil, fmt.Errorf("session %s: lock %s: %w", id, p, err)
		}
		if same {
			return &Lock{fl: fl}, nil
		}
		_ = fl.Close()
		if try >= maxLockTries {
			return nil, fmt.Errorf("session %s: %w (lock %s keeps being replaced)", id, sessionlog.ErrInUse, p)
		}
	}
}

// lockedCurrent reports whether the file fl locked is still the one at path
// p (not removed, nor replaced, by the holder it waited for).
func lockedCurrent(fl *flock.Flock, p string) (bool, error) {
	held, err := fl.Stat()
	if err != nil {
		return false, err
	}
	cur, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(held, cur), nil
}

// Release removes the lock file and drops the lock. The file is removed
// while the lock is still held, so no writer can hold a lock on it that it
// would then lose (see Acquire). It is safe to call more than once.
func (l *Lock) Release() error {
	if l == nil || l.fl == nil {
		return nil
	}
	rerr := os.Remove(l.fl.Path())
	if errors.Is(rerr, fs.ErrNotExist) {
		rerr = nil
	}
	if rerr != nil {
		rerr = fmt.Errorf("remove lock file: %w", rerr)
	}
	err := l.fl.Close()
	l.fl = nil
	return errors.Join(rerr, err)
}

// SyncDir fsyncs a directory so that a rename or create in it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// TempPrefix starts the names of temporary files the backends create; List
// skips them.
const TempPrefix = ".tmp-"

// WriteAtomic creates path with the content write produces, atomically: it
// writes a temporary file in the same directory, fsyncs it, renames it over
// path and fsyncs the directory. On failure path is untouched.
func WriteAtomic(path string, write func(f *os.File) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, TempPrefix+base+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// Commit renames a finished temporary file tmp (already closed) over path:
// fsync tmp, rename, fsync the directory.
func Commit(tmp, path string) error {
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	return SyncDir(dir)
}
