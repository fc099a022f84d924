package jsonl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/internal/storage"
)

// Options configure a Store.
type Options struct {
	// Compress makes Create write <id>.jsonl.zst files: zstd, one
	// independent, checksummed frame per Sync. Existing sessions keep the
	// form they were created in.
	Compress bool
	// Logger receives warnings (a dropped torn tail). Nil discards them.
	Logger *slog.Logger
}

// Store keeps one log file per session in a directory. It is safe for
// concurrent use; each session has at most one Writer at a time.
type Store struct {
	dir  string
	opts Options
	log  *slog.Logger
	enc  *zstd.Encoder // EncodeAll is safe for concurrent use
	dec  *zstd.Decoder // DecodeAll is safe for concurrent use
	// openFile opens an existing log file for appending: openAppend, or in
	// tests a file that fails on demand (export_test.go).
	openFile func(path string) (logFile, error)

	mu       sync.Mutex
	creating map[string]string // id → log file, of writers from Create whose file is not made yet
}

// logFile is what a writer does with its log file; *os.File is the real
// one. Only these operations touch a log after it is created, so a test
// that fails each of them covers every failure path of the writer.
type logFile interface {
	Write(p []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

// openAppend opens the log file at path for appending.
func openAppend(path string) (logFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err // a nil *os.File must not become a non-nil logFile
	}
	return f, nil
}

var _ sessionlog.Store = (*Store)(nil)

// Open returns a store over dir, creating the directory if needed.
func Open(dir string, opts Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("jsonl store: %w", err)
	}
	enc, err := newEncoder()
	if err != nil {
		return nil, fmt.Errorf("jsonl store %s: %w", dir, err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		return nil, fmt.Errorf("jsonl store %s: %w", dir, err)
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Store{dir: dir, opts: opts, log: lg, enc: enc, dec: dec, openFile: openAppend}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Close releases the store's codecs. Writers must be closed first.
func (s *Store) Close() error {
	s.dec.Close()
	return s.enc.Close()
}

func (s *Store) rawPath(id string) string { return filepath.Join(s.dir, id+ExtRaw) }
func (s *Store) zstPath(id string) string { return filepath.Join(s.dir, id+ExtZstd) }

func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Path is the file that holds session id ("" when it has none or the id
// cannot name a file): what a hook is told the session's transcript is.
// For a session created by this store whose log its first Sync has not
// made yet, it is the file that Sync makes.
func (s *Store) Path(id string) string {
	p, err := s.locate(id)
	if err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.creating[id]
	}
	return p
}

// pending records (path != "") or forgets that a writer from Create will
// make session id's log at path.
func (s *Store) pending(id, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if path == "" {
		delete(s.creating, id)
		return
	}
	if s.creating == nil {
		s.creating = map[string]string{}
	}
	s.creating[id] = path
}

// locate finds the file of session id.
func (s *Store) locate(id string) (string, error) {
	raw, zst := s.rawPath(id), s.zstPath(id)
	hasRaw, err := exists(raw)
	if err != nil {
		return "", fmt.Errorf("session %s: %w", id, err)
	}
	hasZst, err := exists(zst)
	if err != nil {
		return "", fmt.Errorf("session %s: %w", id, err)
	}
	switch {
	case hasRaw && hasZst:
		return "", fmt.Errorf("session %s: %w: stored twice, as %s and %s", id, sessionlog.ErrCorrupt, raw, zst)
	case hasRaw:
		return raw, nil
	case hasZst:
		return zst, nil
	}
	return "", fmt.Errorf("session %s: %w (no %s or %s)", id, sessionlog.ErrNotFound, raw, zst)
}

// Create makes the log of a new session. It takes the session's lock and
// checks that no log of that id exists; the log itself is made at the
// writer's first Sync (or Close): the header line and the events appended
// so far are written to a temporary file, fsynced, renamed into place and
// the directory fsynced — a log appears whole or not at all, with one
// file fsync and one directory fsync for the header and the session's
// first events together. An existing session gives an error wrapping
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
	if err := s.absent(h.ID); err != nil {
		return nil, errors.Join(err, lock.Release())
	}
	path := s.rawPath(h.ID)
	head := append(append([]byte(nil), h.Raw...), '\n')
	if s.opts.Compress {
		path = s.zstPath(h.ID)
		head = s.enc.EncodeAll(head, nil)
	}
	s.pending(h.ID, path)
	return &writer{s: s, id: h.ID, path: path, zst: s.opts.Compress, head: head, lock: lock}, nil
}

// absent returns nil when no log of session id exists, an error wrapping
// fs.ErrExist when one does.
func (s *Store) absent(id string) error {
	for _, p := range []string{s.rawPath(id), s.zstPath(id)} {
		ok, err := exists(p)
		if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		if ok {
			return fmt.Errorf("session %s: %w (%s)", id, fs.ErrExist, p)
		}
	}
	return nil
}

// create makes the log file of a writer from Create: the header and the
// pending events, written atomically (see Create), then opened for
// appending. A failure fails the writer for good, and no log exists.
func (w *writer) create(seqs string) error {
	if err := w.s.absent(w.id); err != nil {
		w.err = err
		return w.err
	}
	var sp *spiller
	var size int64
	err := storage.WriteAtomic(w.path, func(f *os.File) error {
		if w.zst {
			// One frame per Sync: the header's, then this batch's.
			content := w.head
			if len(w.pending) > 0 {
				w.buf = appendRecords(w.buf[:0], w.pending, nil)
				content = w.s.enc.EncodeAll(w.buf, w.head)
			}
			n, err := f.Write(content)
			size = int64(n)
			return err
		}
		// A plain file gets the batch as Sync writes one (in pieces as it
		// is encoded, its large data recorded for views), after the header.
		n, err := f.Write(w.head)
		size = int64(n)
		if err != nil {
			return err
		}
		sp = &spiller{w: f, limit: spillBytes, base: size}
		w.buf = appendRecords(w.buf[:0], w.pending, sp)
		size += sp.written
		if sp.err != nil {
			return sp.err
		}
		n, err = f.Write(w.buf)
		size += int64(n)
		return err
	})
	if err != nil {
		w.err = fmt.Errorf("session %s: create %s with the header and %s: %w", w.id, w.path, seqs, err)
		return w.err
	}
	f, err := w.s.openFile(w.path)
	if err != nil {
		// The session must not exist: the file holds only what this writer
		// (it holds the lock) wrote, and no one has been told of it.
		w.err = fmt.Errorf("session %s: open %s for appending: %w", w.id, w.path, err)
		if rerr := os.Remove(w.path); rerr != nil {
			w.err = errors.Join(w.err, fmt.Errorf("session %s: remove %s: %w", w.id, w.path, rerr))
		}
		return w.err
	}
	w.f, w.size, w.head = f, size, nil
	w.s.pending(w.id, "")
	if sp != nil {
		if err := w.views.add(w.path, sp.spans); err != nil {
			// The data stays in memory: nothing is lost but the saving.
			w.s.log.Warn("sessionlog/jsonl: keeping written data in memory", "session", w.id, "err", err)
		}
	}
	return nil
}

// read decodes the file of session id.
func (s *Store) read(id string) (*readResult, error) {
	if err := storage.CheckID(id); err != nil {
		return nil, err
	}
	path, err := s.locate(id)
	if err != nil {
		return nil, err
	}
	r, err := readLog(path, s.dec)
	if err != nil {
		return nil, err
	}
	if r.d.Header.ID != id {
		return nil, &sessionlog.RecordError{File: path, Line: 1,
			Err: fmt.Errorf("%w: the file holds session %q, not %q", sessionlog.ErrHeader, r.d.Header.ID, id)}
	}
	return r, nil
}

// load runs the shared load path over a decoded file.
func load(id string, r *readResult) (*sessionlog.Loaded, error) {
	// The decoded events are the log's: nothing reads them from r after.
	// Their data is valid JSON, each: a record is checked whole
	// (DecodeEventOwned, or encoding/json), a row's chunks are built from
	// checked tokens (checkDecodeBytes holds every decoded event to
	// json.Valid).
	l, err := sessionlog.LoadOwnedValid("session "+id, r.d.Header, r.d.Events)
	if err != nil {
		line := 0
		var ee *sessionlog.EventError
		if errors.As(err, &ee) {
			line = r.d.LineOf(ee.Seq)
		}
		return nil, &sessionlog.RecordError{File: r.path, Line: line, Err: err}
	}
	if r.d.Torn != nil {
		l.DroppedRecords = r.d.Torn.Records
	}
	return l, nil
}

// Open loads session id for writing. A torn tail is dropped (and truncated
// away before anything is appended, with a warning on the logger); the
// repair closers are appended and synced before Open returns.
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
	l, w, err := s.open(ctx, id)
	if err != nil {
		return nil, nil, errors.Join(err, lock.Release())
	}
	w.lock = lock
	return l, w, nil
}

func (s *Store) open(ctx context.Context, id string) (*sessionlog.Loaded, *writer, error) {
	r, err := s.read(id)
	if err != nil {
		return nil, nil, err
	}
	l, err := load(id, r)
	if err != nil {
		return nil, nil, err
	}
	f, err := s.openFile(r.path)
	if err != nil {
		return nil, nil, fmt.Errorf("session %s: open %s for appending: %w", id, r.path, err)
	}
	w := &writer{s: s, id: id, path: r.path, zst: r.zst, f: f, size: r.size,
		next: len(r.d.Events), prefix: r.prefix}
	if t := r.d.Torn; t != nil || r.cut < r.size {
		var terr error
		line := 0
		if t != nil {
			terr, line = t.Err, t.Line
		}
		s.log.Warn("sessionlog/jsonl: dropping a torn tail",
			"session", id, "file", r.path, "line", line, "records", l.DroppedRecords,
			"truncate_to", r.cut, "size", r.size, "err", terr)
		if err := f.Truncate(r.cut); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("session %s: truncate torn tail of %s to %d bytes: %w", id, r.path, r.cut, err), w.closeFile())
		}
		w.size = r.cut
		w.dirty = true
	}
	if err := w.Append(ctx, l.Closers...); err != nil {
		return nil, nil, errors.Join(err, w.closeFile())
	}
	if err := w.Sync(ctx); err != nil {
		return nil, nil, errors.Join(err, w.closeFile())
	}
	return l, w, nil
}

// Inspect loads session id read-only: nothing is written, no lock is taken,
// and Closers are what Open would commit.
func (s *Store) Inspect(ctx context.Context, id string) (*sessionlog.Loaded, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := s.read(id)
	if err != nil {
		return nil, err
	}
	return load(id, r)
}

// List yields the stored sessions ordered by id. It reads only each file's
// header line (for zstd, as much of the first frame as that line needs).
func (s *Store) List(ctx context.Context) iter.Seq2[sessionlog.Info, error] {
	return func(yield func(sessionlog.Info, error) bool) {
		entries, err := os.ReadDir(s.dir)
		if err != nil {
			yield(sessionlog.Info{Location: s.dir}, fmt.Errorf("list %s: %w", s.dir, err))
			return
		}
		type entry struct{ id, path string }
		var files []entry
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || e.IsDir() {
				continue
			}
			id, ok := strings.CutSuffix(name, ExtZstd)
			if !ok {
				id, ok = strings.CutSuffix(name, ExtRaw)
			}
			if ok && id != "" {
				files = append(files, entry{id, filepath.Join(s.dir, name)})
			}
		}
		slices.SortStableFunc(files, func(a, b entry) int { return strings.Compare(a.id, b.id) })
		var dec *zstd.Decoder
		defer func() {
			if dec != nil {
				dec.Close()
			}
		}()
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				yield(sessionlog.Info{}, err)
				return
			}
			if isZstd(f.path) && dec == nil {
				if dec, err = newDecoder(); err != nil {
					yield(sessionlog.Info{}, err)
					return
				}
			}
			info, err := readInfo(f.id, f.path, dec)
			if !yield(info, err) {
				return
			}
		}
	}
}

// ReadHeader reads only the header line of the log file at path (a .jsonl
// or .jsonl.zst file), for a caller that needs no more of it (reel log
// show listing a parent's subagents).
func ReadHeader(path string) (sessionlog.Header, error) {
	var dec *zstd.Decoder
	if isZstd(path) {
		d, err := newDecoder()
		if err != nil {
			return sessionlog.Header{}, err
		}
		defer d.Close()
		dec = d
	}
	h, _, err := readHeader(path, dec)
	return h, err
}

// readHeader reads the header line of one log file (dec: the decoder of a
// zstd file), with the file's modification time in Unix ms.
func readHeader(path string, dec *zstd.Decoder) (sessionlog.Header, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return sessionlog.Header{}, 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if isZstd(path) {
		if err := dec.Reset(f); err != nil {
			return sessionlog.Header{}, 0, &sessionlog.RecordError{File: path, Line: 1, Err: fmt.Errorf("%w: %v", sessionlog.ErrHeader, err)}
		}
		r = dec
	}
	line, err := bufio.NewReader(r).ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		if errors.Is(err, io.EOF) {
			err = errors.New("empty log (no header line)")
		}
		return sessionlog.Header{}, 0, &sessionlog.RecordError{File: path, Line: 1, Err: fmt.Errorf("%w: %v", sessionlog.ErrHeader, err)}
	}
	h, err := sessionlog.DecodeHeader(line[:len(line)-countNL(line)])
	if err != nil {
		return sessionlog.Header{}, 0, &sessionlog.RecordError{File: path, Line: 1, Err: err}
	}
	var mtime int64
	if fi, err := f.Stat(); err == nil {
		mtime = fi.ModTime().UnixMilli()
	}
	return h, mtime, nil
}

// readInfo reads the header line of one log file.
func readInfo(id, path string, dec *zstd.Decoder) (sessionlog.Info, error) {
	info := sessionlog.Info{ID: id, Location: path}
	h, mtime, err := readHeader(path, dec)
	if err != nil {
		return info, err
	}
	if h.ID != id {
		return info, &sessionlog.RecordError{File: path, Line: 1,
			Err: fmt.Errorf("%w: the file holds session %q, not %q", sessionlog.ErrHeader, h.ID, id)}
	}
	info.CreatedAt, info.Cwd = h.CreatedAt, h.Cwd
	if c, ok := h.Child(); ok {
		info.Parent = c.Parent
	}
	info.UpdatedAt = max(h.CreatedAt, mtime)
	return info, nil
}

func countNL(line []byte) int {
	n := 0
	for n < len(line) && (line[len(line)-1-n] == '\n' || line[len(line)-1-n] == '\r') {
		n++
	}
	return n
}

// writer appends to one session's file. Append buffers events; Sync encodes
// them in the canonical packed layout and writes them with one write (one
// zstd frame; a plain file's batch over spillBytes in pieces as it is
// encoded) followed by fsync. The first failed write, truncate or fsync
// fails the writer for good (err); see "Failures" in the package doc.
type writer struct {
	s       *Store
	id      string
	path    string
	zst     bool
	f       logFile // nil until the first Sync of a writer from Create
	head    []byte  // a writer from Create: the header, not yet in a file
	lock    *storage.Lock
	next    int                // seq the next appended event must have
	pending []sessionlog.Event // appended, not yet written
	prefix  []byte             // tail repair written before the next records
	dirty   bool               // the file changed without an fsync (truncation)
	size    int64              // file size after the last successful write
	buf     []byte
	out     []byte
	err     error // sticky: the first I/O failure; the file's tail is then unknown
	closed  bool
	// views holds the data of large events a Sync wrote as views of the
	// file (plain files only), for the session to take (DataViews).
	views views
}

var _ sessionlog.DataViews = (*writer)(nil)

// TakeViews implements sessionlog.DataViews.
func (w *writer) TakeViews() []sessionlog.StoredData { return w.views.take() }

// ReleaseViews implements sessionlog.DataViews.
func (w *writer) ReleaseViews() { w.views.release() }

var errClosed = errors.New("sessionlog/jsonl: writer is closed")

// Append buffers events. Their seqs must continue the log contiguously;
// otherwise nothing of the batch is kept. A failed writer refuses.
func (w *writer) Append(ctx context.Context, events ...sessionlog.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := w.usable(); err != nil {
		return err
	}
	if err := storage.CheckBatch(w.next, events); err != nil {
		return fmt.Errorf("%s: append: %w", w.path, err)
	}
	w.pending = append(w.pending, events...)
	w.next += len(events)
	return nil
}

// usable returns why the writer can do no more work, or nil.
func (w *writer) usable() error {
	if w.closed {
		return fmt.Errorf("%s: %w", w.path, errClosed)
	}
	if w.err != nil {
		return fmt.Errorf("session %s: %s: writer failed earlier, reopen the session: %w", w.id, w.path, w.err)
	}
	return nil
}

// Sync writes the buffered events and fsyncs the file: with one write, or,
// for a plain file and a batch over spillBytes, in pieces as the batch is
// encoded. A failed write cuts the file back to where the batch began. It
// returns nil only when every event appended so far is durable.
func (w *writer) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := w.usable(); err != nil {
		return err
	}
	if w.head != nil {
		seqs := "no events"
		if n := len(w.pending); n > 0 {
			seqs = fmt.Sprintf("seqs %d…%d", w.next-n, w.next-1)
		}
		if err := w.create(seqs); err != nil {
			return err
		}
		w.release()
		return nil
	}
	if len(w.pending) == 0 && len(w.prefix) == 0 {
		if w.dirty {
			return w.fsync("")
		}
		return nil
	}
	w.buf = append(w.buf[:0], w.prefix...)
	seqs := fmt.Sprintf("seqs %d…%d", w.next-len(w.pending), w.next-1)
	if len(w.pending) == 0 {
		seqs = "the repaired tail"
	}
	// A plain file gets the batch in pieces as it is encoded (a long
	// answer is not held encoded whole); a compressed one as one frame.
	var sp *spiller
	if !w.zst {
		sp = &spiller{w: w.f, limit: spillBytes, base: w.size}
	}
	w.buf = appendRecords(w.buf, w.pending, sp)
	out := w.buf
	if w.zst {
		w.out = w.s.enc.EncodeAll(w.buf, w.out[:0])
		out = w.out
	}
	var written int64
	err := error(nil)
	if sp != nil {
		written, err = sp.written, sp.err
	}
	if err == nil && (sp == nil || len(out) > 0) {
		var n int
		n, err = w.f.Write(out)
		written += int64(n)
	}
	if err != nil {
		w.err = fmt.Errorf("session %s: write %s to %s: %w", w.id, seqs, w.path, err)
		// Cut off whatever part of the write reached the file, so that the
		// log ends at a record boundary (best effort: if this fails too,
		// the partial record is a torn tail, which the next Open drops).
		if terr := w.f.Truncate(w.size); terr != nil {
			w.err = errors.Join(w.err, fmt.Errorf("session %s: truncate %s back to %d bytes after the failed write: %w", w.id, w.path, w.size, terr))
		}
		return w.err
	}
	w.size += written
	w.dirty = true
	if err := w.fsync(seqs); err != nil {
		return err
	}
	if sp != nil {
		if err := w.views.add(w.path, sp.spans); err != nil {
			// The data stays in memory: nothing is lost but the saving.
			w.s.log.Warn("sessionlog/jsonl: keeping written data in memory", "session", w.id, "err", err)
		}
	}
	w.prefix = nil
	w.release()
	return nil
}

// release empties the written batch; a large one (a long streamed answer)
// does not keep its buffers for the rest of the session.
func (w *writer) release() {
	clear(w.pending)
	w.pending = w.pending[:0]
	if cap(w.pending) > retainEvents {
		w.pending = nil
	}
	if cap(w.buf) > retainBytes {
		w.buf = nil
	}
	if cap(w.out) > retainBytes {
		w.out = nil
	}
}

// retainEvents and retainBytes bound the buffers a writer keeps between
// syncs.
const (
	retainEvents = 4096
	retainBytes  = 1 << 20
	// spillBytes is how much encoded batch Sync holds before writing it.
	spillBytes = 256 << 10
)

// fsync syncs the file; what names the data it makes durable ("" for a
// truncation alone).
func (w *writer) fsync(what string) error {
	if err := w.f.Sync(); err != nil {
		if what != "" {
			what = " after writing " + what
		}
		w.err = fmt.Errorf("session %s: fsync %s%s: %w", w.id, w.path, what, err)
		return w.err
	}
	w.dirty = false
	return nil
}

// closeFile closes the log file, naming it in the error.
func (w *writer) closeFile() error {
	if w.f == nil {
		return nil // a writer from Create whose log was never made
	}
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("session %s: close %s: %w", w.id, w.path, err)
	}
	return nil
}

// Close syncs, closes the file and releases the session lock. The file is
// closed and the lock released even when the sync fails (or failed
// earlier); the error then says so.
func (w *writer) Close() error {
	if w.closed {
		return nil
	}
	err := w.Sync(context.Background())
	if w.head != nil {
		w.s.pending(w.id, "") // its first Sync failed: no log, ever
	}
	w.closed = true
	return errors.Join(err, w.closeFile(), w.views.close(), w.lock.Release())
}
