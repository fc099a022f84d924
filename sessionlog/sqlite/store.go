package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/internal/storage"
)

// DBName is the database file of a store directory.
const DBName = "sessions.db"

// Options configure a Store.
type Options struct {
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
}

// Store keeps many sessions in one database, <dir>/sessions.db. It is safe
// for concurrent use; each session has at most one Writer at a time.
type Store struct {
	dir  string
	path string
	db   *sql.DB
	log  *slog.Logger
}

var _ sessionlog.Store = (*Store)(nil)

// Open opens (creating if needed) the store in dir. A sessions.db that is
// not a reel database of schema version 1 is refused before anything is
// written to it (ErrForeign, ErrSchema).
func Open(dir string, opts Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	ctx := context.Background()
	path := filepath.Join(dir, DBName)
	if err := private(path); err != nil {
		return nil, err
	}
	db, err := openDB(ctx, path, true)
	if err != nil {
		return nil, err
	}
	if err := useWAL(ctx, db, path); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Store{dir: dir, path: path, db: db, log: lg}, nil
}

// private makes an existing store database and its -wal and -shm 0600 (an
// older reel created them 0644); a new one is created 0600 by openDB.
func private(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sqlite store: %w", err)
		}
		if fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil {
				return fmt.Errorf("sqlite store: make %s private: %w", p, err)
			}
		}
	}
	return nil
}

// Path returns the database file.
func (s *Store) Path() string { return s.path }

// Close checkpoints the write-ahead log into the database file, truncating
// it, and closes the database. Writers must be closed first. A cleanly
// closed store leaves nothing in sessions.db-wal (SQLite then deletes it),
// so a damaged WAL can only cost the commits of a store that did not close
// (see the package doc). When another process still has the database open
// the checkpoint may stop short; that process's own close finishes it.
func (s *Store) Close() error {
	var busy, logFrames, done int
	err := s.db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done)
	if err != nil {
		err = fmt.Errorf("%s: checkpoint: %w", s.path, err)
	}
	return errors.Join(err, s.db.Close())
}

// Create inserts a new session. An existing id gives an error wrapping
// fs.ErrExist; a session whose lock is held gives sessionlog.ErrInUse.
func (s *Store) Create(ctx context.Context, h sessionlog.Header) (sessionlog.Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h, err := storage.CheckHeader(h)
	if err != nil {
		return nil, err
	}
	lock, err := storage.Acquire(s.dir, h.ID)
	if err != nil {
		return nil, err
	}
	if err := insertSession(ctx, s.db, s.path, h); err != nil {
		return nil, errors.Join(err, lock.Release())
	}
	return &writer{db: s.db, path: s.path, id: h.ID, lock: lock}, nil
}

func insertSession(ctx context.Context, db *sql.DB, path string, h sessionlog.Header) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: session %s: %w", path, h.ID, err)
	}
	defer func() { _ = tx.Rollback() }()
	var one int
	err = tx.QueryRowContext(ctx, "SELECT 1 FROM sessions WHERE id = ?", h.ID).Scan(&one)
	if err == nil {
		return fmt.Errorf("%s: session %s: %w", path, h.ID, fs.ErrExist)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: session %s: %w", path, h.ID, err)
	}
	var cwd any
	if h.Cwd != "" {
		cwd = h.Cwd
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO sessions (id, created_at, cwd, header) VALUES (?, ?, ?, ?)",
		h.ID, h.CreatedAt, cwd, string(h.Raw)); err != nil {
		return fmt.Errorf("%s: session %s: %w", path, h.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: session %s: %w", path, h.ID, err)
	}
	return nil
}

// readSession reads the header row and the event rows of session id. Rows
// edited behind the backend's back (a seq gap, invalid JSON, a header that
// disagrees with its columns) give sessionlog.ErrCorrupt naming the seq.
func readSession(ctx context.Context, db *sql.DB, path, id string) (sessionlog.Header, []sessionlog.Event, error) {
	var (
		raw       string
		createdAt int64
		cwd       sql.NullString
	)
	err := db.QueryRowContext(ctx, "SELECT header, created_at, cwd FROM sessions WHERE id = ?", id).Scan(&raw, &createdAt, &cwd)
	if errors.Is(err, sql.ErrNoRows) {
		return sessionlog.Header{}, nil, fmt.Errorf("%s: session %s: %w", path, id, sessionlog.ErrNotFound)
	}
	if err != nil {
		return sessionlog.Header{}, nil, fmt.Errorf("%s: session %s: %w", path, id, err)
	}
	h, err := sessionlog.DecodeHeader([]byte(raw))
	if err != nil {
		return sessionlog.Header{}, nil, fmt.Errorf("%s: session %s: header row: %w", path, id, err)
	}
	if h.ID != id || h.CreatedAt != createdAt || h.Cwd != cwd.String {
		return sessionlog.Header{}, nil, fmt.Errorf("%s: session %s: %w: header %s disagrees with its columns (id %q, created_at %d, cwd %q)",
			path, id, sessionlog.ErrCorrupt, raw, id, createdAt, cwd.String)
	}
	rows, err := db.QueryContext(ctx, "SELECT seq, type, time, data, surface_op, source_event_seqs FROM events WHERE session_id = ? ORDER BY seq", id)
	if err != nil {
		return sessionlog.Header{}, nil, fmt.Errorf("%s: session %s: %w", path, id, err)
	}
	defer rows.Close()
	var (
		events []sessionlog.Event
		line   []byte
	)
	for rows.Next() {
		var (
			seq           int64
			typ           string
			t             int64
			data, op, src []byte
		)
		if err := rows.Scan(&seq, &typ, &t, &data, &op, &src); err != nil {
			return sessionlog.Header{}, nil, fmt.Errorf("%s: session %s: row after seq %d: %w: %v", path, id, len(events)-1, sessionlog.ErrCorrupt, err)
		}
		if seq != int64(len(events)) {
			return sessionlog.Header{}, nil, fmt.Errorf("%s: session %s: row seq %d (%s): %w: seq gap: expected seq %d", path, id, seq, typ, sessionlog.ErrCorrupt, len(events))
		}
		var e sessionlog.Event
		e, line, err = decodeRow(line[:0], int(seq), typ, t, data, op, src)
		if err != nil {
			return sessionlog.Header{}, nil, fmt.Errorf("%s: session %s: row seq %d (%s): %w: %w", path, id, seq, typ, sessionlog.ErrCorrupt, err)
		}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return sessionlog.Header{}, nil, fmt.Errorf("%s: session %s: %w", path, id, err)
	}
	return h, events, nil
}

// decodeRow rebuilds the event record of one row and decodes it with
// sessionlog.DecodeEvent, so that rows pass the same envelope checks as
// JSONL lines. Each JSON column is checked on its own first, so a damaged
// value cannot splice fields into the record.
func decodeRow(line []byte, seq int, typ string, t int64, data, op, src []byte) (sessionlog.Event, []byte, error) {
	for _, c := range []struct {
		name string
		v    []byte
	}{{"data", data}, {"surface_op", op}, {"source_event_seqs", src}} {
		if c.v != nil && !json.Valid(c.v) {
			return sessionlog.Event{}, line, fmt.Errorf("%w: %s is not valid JSON", sessionlog.ErrInvalid, c.name)
		}
	}
	line = append(line, `{"type":`...)
	line = sessionlog.AppendString(line, typ)
	line = append(line, `,"seq":`...)
	line = strconv.AppendInt(line, int64(seq), 10)
	line = append(line, `,"time":`...)
	line = strconv.AppendInt(line, t, 10)
	if data != nil {
		line = append(append(line, `,"data":`...), data...)
	}
	if src != nil {
		line = append(append(line, `,"sourceEventSeqs":`...), src...)
	}
	if op != nil {
		line = append(append(line, `,"surfaceOp":`...), op...)
	}
	line = append(line, '}')
	e, err := sessionlog.DecodeEvent(line)
	return e, line, err
}

// load runs the shared load path.
func (s *Store) load(ctx context.Context, id string) (*sessionlog.Loaded, error) {
	if err := storage.CheckID(id); err != nil {
		return nil, err
	}
	h, events, err := readSession(ctx, s.db, s.path, id)
	if err != nil {
		return nil, err
	}
	l, err := sessionlog.Load("session "+id, h, events)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return l, nil
}

// Open loads session id for writing and commits its repair closers in one
// transaction before returning.
func (s *Store) Open(ctx context.Context, id string) (*sessionlog.Loaded, sessionlog.Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := storage.CheckID(id); err != nil {
		return nil, nil, err
	}
	lock, err := storage.Acquire(s.dir, id)
	if err != nil {
		return nil, nil, err
	}
	l, err := s.load(ctx, id)
	if err != nil {
		return nil, nil, errors.Join(err, lock.Release())
	}
	// The closers passed the log rules in Load and continue the log.
	w := &writer{db: s.db, path: s.path, id: id, lock: lock, next: l.Log.Len(), pending: slices.Clone(l.Closers)}
	if err := w.Sync(ctx); err != nil {
		return nil, nil, errors.Join(err, lock.Release())
	}
	return l, w, nil
}

// Inspect loads session id read-only: nothing is written, no lock is taken.
func (s *Store) Inspect(ctx context.Context, id string) (*sessionlog.Loaded, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.load(ctx, id)
}

// List yields the stored sessions ordered by id, reading the sessions table
// only.
func (s *Store) List(ctx context.Context) iter.Seq2[sessionlog.Info, error] {
	return func(yield func(sessionlog.Info, error) bool) {
		rows, err := s.db.QueryContext(ctx, "SELECT s.id, s.created_at, s.cwd, s.header, (SELECT MAX(e.time) FROM events e WHERE e.session_id = s.id) FROM sessions s ORDER BY s.id")
		if err != nil {
			yield(sessionlog.Info{Location: s.path}, fmt.Errorf("%s: list: %w", s.path, err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			info := sessionlog.Info{Location: s.path}
			var cwd sql.NullString
			var header string
			var last sql.NullInt64
			if err := rows.Scan(&info.ID, &info.CreatedAt, &cwd, &header, &last); err != nil {
				yield(info, fmt.Errorf("%s: list: %w", s.path, err))
				return
			}
			info.Cwd = cwd.String
			if c, ok := (sessionlog.Header{Raw: []byte(header)}).Child(); ok {
				info.Parent = c.Parent
			}
			info.UpdatedAt = max(info.CreatedAt, last.Int64)
			if !yield(info, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(sessionlog.Info{Location: s.path}, fmt.Errorf("%s: list: %w", s.path, err))
		}
	}
}

// writer appends to one session. Append buffers; Sync inserts the buffered
// events in one transaction that first asserts they continue the stored
// log contiguously.
type writer struct {
	db      *sql.DB
	path    string
	id      string
	lock    *storage.Lock
	next    int
	pending []sessionlog.Event
	closed  bool
}

var errClosed = errors.New("sessionlog/sqlite: writer is closed")

// Append buffers events; their seqs must continue the log contiguously,
// otherwise nothing of the batch is kept.
func (w *writer) Append(ctx context.Context, events ...sessionlog.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.closed {
		return fmt.Errorf("%s: session %s: %w", w.path, w.id, errClosed)
	}
	if err := storage.CheckBatch(w.next, events); err != nil {
		return fmt.Errorf("%s: session %s: append: %w", w.path, w.id, err)
	}
	w.pending = append(w.pending, events...)
	w.next += len(events)
	return nil
}

// Sync commits the buffered events (synchronous=FULL: durable on return).
func (w *writer) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.closed {
		return fmt.Errorf("%s: session %s: %w", w.path, w.id, errClosed)
	}
	if len(w.pending) == 0 {
		return nil
	}
	if err := insertEvents(ctx, w.db, w.path, w.id, w.pending); err != nil {
		return err
	}
	clear(w.pending)
	w.pending = w.pending[:0]
	return nil
}

// insertEvents appends a batch in one transaction, asserting contiguity
// with what is stored.
func insertEvents(ctx context.Context, db *sql.DB, path, id string, events []sessionlog.Event) error {
	first, last := events[0].Seq, events[len(events)-1].Seq
	fail := func(err error) error {
		return fmt.Errorf("%s: session %s: append seqs %d…%d: %w", path, id, first, last, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = tx.Rollback() }()
	var maxSeq sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT MAX(seq) FROM events WHERE session_id = ?", id).Scan(&maxSeq); err != nil {
		return fail(err)
	}
	stored := int64(-1)
	if maxSeq.Valid {
		stored = maxSeq.Int64
	}
	if stored+1 != int64(first) {
		return fail(fmt.Errorf("%w: the stored log ends at seq %d, so the next seq is %d", sessionlog.ErrInvalid, stored, stored+1))
	}
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO events (session_id, seq, type, time, data, surface_op, source_event_seqs) VALUES (?, ?, ?, ?, ?, ?, ?)")
	if err != nil {
		return fail(err)
	}
	defer stmt.Close()
	var buf []byte
	for i := range events {
		e := &events[i]
		var data, op, src any
		if e.Data != nil {
			data = string(e.Data)
		}
		if e.SurfaceOp != nil {
			buf = e.SurfaceOp.AppendJSON(buf[:0])
			op = string(buf)
		}
		if e.SourceEventSeqs != nil {
			buf = sessionlog.AppendInts(buf[:0], e.SourceEventSeqs)
			src = string(buf)
		}
		if _, err := stmt.ExecContext(ctx, id, e.Seq, e.Type, e.Time, data, op, src); err != nil {
			return fail(fmt.Errorf("seq %d (%s): %w", e.Seq, e.Type, err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// Close syncs and releases the session's lock.
func (w *writer) Close() error {
	if w.closed {
		return nil
	}
	err := w.Sync(context.Background())
	w.closed = true
	return errors.Join(err, w.lock.Release())
}
