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
// # What the write-ahead log guarantees, and what it does not
//
// Commits go to <dir>/sessions.db-wal first. Every WAL frame carries a
// checksum chained over the WAL header and every frame before it (and the
// header's salts). SQLite verifies the chain only when it recovers a WAL,
// on the first open after a process died without checkpointing: recovery
// stops at the first frame that does not match, and that frame and every
// later one are ignored, committed or not. So a damaged byte in a WAL frame
// loses the transaction holding it and every later transaction: the store
// then loads the log as of the last commit before the damage — a valid
// prefix that ends at a Sync boundary (each Sync is one transaction; an
// unfinished turn is closed by the repair closers, as after a crash) — and
// reports nothing, because SQLite reports nothing; a
// damaged WAL header drops the whole WAL. TestWALByteFlip pins exactly
// this. The store keeps no high-water mark outside the database to tell
// such a shortened log from one that was never longer: it would cost a
// second fsync'd file per commit, and would not cover the main database
// file, whose pages SQLite does not checksum at all (a damaged page there
// is "database disk image is malformed", or wrong rows that fail the load
// checks above). What the store does do is keep the exposure short: Close
// checkpoints the WAL into the database and truncates it, so a cleanly
// closed store has nothing in its WAL, and only the commits of a process
// that died since its last clean close ever depend on WAL recovery.
//
// # Files
//
// sessions.db is created 0600 (an existing one is made 0600 on Open); its
// -wal and -shm take the database file's mode, so all three are private,
// like the JSONL logs.
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
