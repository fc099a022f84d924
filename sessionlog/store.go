package sessionlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
)

// ErrInUse reports a session whose log another writer holds.
var ErrInUse = errors.New("sessionlog: session in use by another writer")

// Store persists session logs. Backends (sessionlog/jsonl, sessionlog/sqlite)
// implement it and pass sessionlogtest.TestStore unchanged. A Store is safe
// for concurrent use on different sessions; one session has one writer at a
// time (Create and Open take an exclusive lock; a second one gets ErrInUse).
// Create, Open and Inspect refuse an id that cannot be a session id with
// ErrBadID before touching storage.
type Store interface {
	// Create makes a new, empty session log for h, atomically: it appears
	// whole or not at all. It fails if the id exists.
	Create(ctx context.Context, h Header) (Writer, error)
	// Open loads a session for writing: decode, validate (legacy refused),
	// drop a torn tail, repair, and commit the repair closers durably before
	// returning. The returned Loaded.Closers are the events it committed.
	Open(ctx context.Context, id string) (*Loaded, Writer, error)
	// Inspect loads a session read-only: like Open, but nothing is written
	// and no lock is taken; Closers are what Open would commit.
	Inspect(ctx context.Context, id string) (*Loaded, error)
	// List yields the stored sessions without reading whole logs.
	List(ctx context.Context) iter.Seq2[Info, error]
	// Close releases the store.
	Close() error
}

// Writer appends to one session's log. Append buffers; Sync is a semantic
// checkpoint that makes everything appended so far durable. Seqs must be
// contiguous with what is stored: an out-of-order or duplicate append is
// refused and nothing of that batch is written. A Writer is not safe for
// concurrent use.
//
// Sync returns nil only when every event appended so far is durable. When
// it fails, the store may hold none, all or a prefix of the events it did
// not acknowledge, never a damaged record followed by intact ones, and the
// writer may refuse all further work (the JSONL writer does; see its
// package doc): Close it and Open the session again to go on.
type Writer interface {
	Append(ctx context.Context, events ...Event) error
	Sync(ctx context.Context) error
	// Close syncs and releases the session's lock.
	Close() error
}

// StoredData is a read-only view of the stored bytes of one event's data,
// equal to the data the event was appended with.
type StoredData struct {
	Seq  int
	Data json.RawMessage
}

// DataViews is implemented by a Writer that can hand back, after a Sync,
// the data it made durable as views of its storage (the JSONL writer maps
// the data of large events: see sessionlog/jsonl), so that the in-memory
// log does not hold the same bytes a second time.
type DataViews interface {
	// TakeViews returns the views made by the Syncs since the last call.
	TakeViews() []StoredData
	// ReleaseViews lets the pages of every view that were read go back
	// to the store (they are read again when next used).
	ReleaseViews()
}

// Loaded is a session read from a store, validated and repaired.
type Loaded struct {
	// Log holds the stored events followed by Closers.
	Log *Log
	// Closers are the synthetic events repair added (see Repair).
	Closers []Event
	// DroppedRecords counts physical records of a torn tail that were dropped.
	DroppedRecords int
}

// Info describes a stored session.
type Info struct {
	ID        string
	CreatedAt int64
	// UpdatedAt is when the session was last active, in Unix ms: its last
	// event's time (SQLite) or its log file's modification time (JSONL);
	// never before CreatedAt.
	UpdatedAt int64
	Cwd       string
	// Parent is the id of the session that started it, for a child
	// session (a subagent; its header's parentSession); "" otherwise.
	Parent string
	// Location is the backend's name for it (a file path, a database path).
	Location string
}

// Load is the shared load path of every backend: validate the decoded
// events (the same rules as Append), then compute repair closers and append
// them to the returned log. name labels errors (the session or file).
func Load(name string, h Header, events []Event) (*Loaded, error) {
	return load(name, h, events, false, false)
}

// LoadOwned is Load of events the caller hands over: the log keeps their
// slice rather than a copy of it (a decoded file's events are not held
// twice while it loads). The caller must not use events afterwards.
func LoadOwned(name string, h Header, events []Event) (*Loaded, error) {
	return load(name, h, events, true, false)
}

// LoadOwnedValid is LoadOwned of events whose data the caller's decoder
// checked to be valid JSON, each (a record checked whole, as
// DecodeEventOwned checks it; data built only from checked tokens): the
// log's checks do not check that data again, and its readers may skip the
// check too (Log.DataValid). A caller that cannot vouch for every event's
// data uses LoadOwned.
func LoadOwnedValid(name string, h Header, events []Event) (*Loaded, error) {
	return load(name, h, events, true, true)
}

func load(name string, h Header, events []Event, owned, valid bool) (*Loaded, error) {
	l, err := seed(h, events, owned, valid)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	closers := Repair(events)
	for _, c := range closers {
		if err := l.Append(c); err != nil {
			return nil, fmt.Errorf("%s: repair closer: %w", name, err)
		}
	}
	return &Loaded{Log: l, Closers: closers}, nil
}

// Session is a log written through a store: every event is validated by the
// in-memory Log before it reaches the Writer, so nothing invalid is stored.
type Session struct {
	log *Log
	w   Writer
}

// NewSession pairs a validated log with its writer.
func NewSession(log *Log, w Writer) *Session { return &Session{log: log, w: w} }

// Log returns the in-memory log (read-only use).
func (s *Session) Log() *Log { return s.log }

// Append validates and appends events, then hands them to the writer. If
// validation fails nothing is written; events validated before the failing
// one are still appended. A cancelled ctx appends nothing (the in-memory
// log never runs ahead of the writer).
func (s *Session) Append(ctx context.Context, events ...Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i := range events {
		if err := s.log.Append(events[i]); err != nil {
			if i > 0 {
				if werr := s.w.Append(ctx, events[:i]...); werr != nil {
					return errors.Join(err, werr)
				}
			}
			return err
		}
	}
	return s.w.Append(ctx, events...)
}

// Checkpoint makes everything appended so far durable. When the writer
// hands back views of what it wrote (DataViews), the log's events read
// their data from them from now on, and the log's own copies are let go.
func (s *Session) Checkpoint(ctx context.Context) error {
	if err := s.w.Sync(ctx); err != nil {
		return err
	}
	if dv, ok := s.w.(DataViews); ok {
		for _, v := range dv.TakeViews() {
			s.log.useStored(v)
		}
	}
	return nil
}

// ReleaseViews lets the pages read from the views of stored data go (see
// DataViews); a reader that walks a long stretch of them calls it as it
// goes, so the stretch is not held all at once.
func (s *Session) ReleaseViews() {
	if dv, ok := s.w.(DataViews); ok {
		dv.ReleaseViews()
	}
}

// Close checkpoints and releases the log.
func (s *Session) Close() error { return s.w.Close() }
