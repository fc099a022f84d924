// Package sqlite is reel's SQLite session-log backend (modernc.org/sqlite,
// cgo-free). It implements sessionlog.Store over one database per store
// directory, <dir>/sessions.db, and reads and writes single-session
// database files (ReadFile, WriteFile) for `reel log convert`.
//
// # Schema (version 1)
//
//	PRAGMA application_id = 0x7265656c  -- "reel"
//	PRAGMA user_version   = 1
//	CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL,
//	                       cwd TEXT, header TEXT NOT NULL) STRICT;
//	CREATE TABLE events (session_id TEXT NOT NULL REFERENCES sessions(id),
//	                     seq INTEGER NOT NULL, type TEXT NOT NULL,
//	                     time INTEGER NOT NULL, data TEXT, surface_op TEXT,
//	                     source_event_seqs TEXT,
//	                     PRIMARY KEY (session_id, seq)) STRICT, WITHOUT ROWID;
//
// header holds the exact header object (foreign fields included);
// created_at and cwd repeat it for listing. Each event is one row per
// logical event (packed chunk rows are a JSONL layout, not stored here);
// data, surface_op and source_event_seqs hold the exact JSON text (NULL when
// absent), so conversion to and from JSONL is byte-exact.
//
// # Refusal, not migration
//
// Before anything is written, a database is checked: a file that is not
// SQLite, another application_id, an unversioned database (application_id
// and user_version 0) that already has tables, or a nonzero user_version
// without reel's application_id are ErrForeign; reel's application_id with
// another user_version is ErrSchema. An empty or missing file becomes a new
// schema-1 database; a store's database is then switched to WAL.
//
// # Appends and durability
//
// Writer.Append buffers; Writer.Sync inserts the buffer in one transaction
// (BEGIN IMMEDIATE) that first asserts the stored maximum seq + 1 equals the
// batch's first seq, and commits with synchronous=FULL: durable on return.
// A crash loses at most the uncommitted batch; there are no torn tails.
//
// # Loading
//
// Open and Inspect read the rows in seq order, rebuild each record and
// decode it exactly like a JSONL line, then run sessionlog.Load. Rows edited
// behind the backend's back — a seq gap, invalid JSON in a column, a header
// that disagrees with its columns — are sessionlog.ErrCorrupt naming the
// seq. Open commits the repair closers in one transaction before returning.
//
// # Locks
//
// One writer per session: Create and Open take an exclusive flock(2) on
// <dir>/<id>.lock (sessionlog.ErrInUse when held, by this process or
// another) until Writer.Close. SQLite's own locking serializes the
// transactions of different sessions (busy_timeout 10 s).
package sqlite
