// Package jsonl is reel's default session-log backend: one JSON Lines file
// per session, plain or zstd-compressed, behind the sessionlog.Store
// interface (Store), plus whole-file helpers (ReadFile, WriteFile) and the
// codec itself (Decode, Encode, AppendRecords).
//
// # Layout
//
// Line 1 is the session header object. Every further line is either one
// event record ({"type","seq","time","data","sourceEventSeqs"?,"surfaceOp"?},
// in that key order) or a packed chunk row that stores a run of at least three
// consecutive same-block assistant/chunk deltas:
//
//	{"type":"text-chunks"|"reasoning-chunks","seq0":S,"time0":T,
//	 "data":{"turn","step","index","dt":[gaps…],"texts":[…]}}
//	{"type":"tool-call-chunks","seq0":S,"time0":T,
//	 "data":{"turn","step","index","dt":[…],"id","name"?,"args":[…]}}
//
// Member k of a row is the event with seq seq0+k and time time0+dt[0]+…+dt[k-1].
// Readers accept packed, unpacked and mixed layouts; writers always produce
// the canonical packed layout, and only an event whose bytes are exactly what
// expansion rebuilds is packed, so decode→encode is lossless. A delta of
// 16 KiB or more (a long answer's merged deltas) is never packed: its data
// is stored verbatim, for views (below). Encode and
// WriteFile pack a whole log; a live Store packs each Sync batch on its own
// (a run split by a Sync becomes two rows or loose lines).
//
// # Files
//
// A Store keeps session <id> in <dir>/<id>.jsonl, or with Options.Compress
// in <dir>/<id>.jsonl.zst: standard zstd, one independent frame with a
// content checksum per write (the header line is the first frame, then one
// frame per Sync), so `zstd -d` yields the JSONL. Existing sessions keep
// their form. <dir>/<id>.lock is the writer lock (see below). Files starting
// with '.' (".tmp-…" while a file is being created) are not sessions.
//
// Create takes the session's lock and checks that the id is free; the
// writer's first Sync (or Close) writes the header and the events appended
// so far to a temporary file in dir, fsyncs it, renames it to the log's name
// and fsyncs dir: a log appears whole or not at all, and a new session's
// header and first events cost one file fsync and one directory fsync.
//
// # Appends and durability
//
// Writer.Append only buffers (after checking that seqs continue the log and
// that data is compact JSON). Writer.Sync encodes the buffer canonically,
// writes it with one write(2) — one zstd frame; a plain file's batch of
// more than 256 KiB (a long streamed answer) in 256 KiB pieces as it is
// encoded, so that it is never held encoded whole; a failed write cuts the
// file back to where the batch began — and fsyncs: it is the
// semantic checkpoint the agent calls before a model call is dispatched,
// before a tool runs, after each step's results and at turn end. Close
// syncs.
//
// # Views of written data
//
// After a successful Sync of a plain file that wrote 256 KiB or more of them,
// the data of every event of 16 KiB or more that it wrote is handed back (sessionlog.DataViews) as a view of
// the file: one read-only shared mapping per Sync, each span checked byte for
// byte against the appended data (read back with pread) before it is handed
// out. sessionlog.Session.Checkpoint then lets the log read those events'
// data from the views, so a long answer (its deltas, its block-end, its
// message) is not held in memory; its pages are the file's, read on access
// and dropped again at the next Sync that maps or on ReleaseViews. Mappings
// live as long as the process (a view may be shared by any copy of an event);
// a compressed file, and a log read by Open or Inspect, keep their data in
// memory. The file must not shrink under a live mapping: nothing in reel
// truncates a log below what a Sync made durable ("nothing rewrites a live
// log"), and a process that did would make a later read of a view fault.
//
// # Failures
//
// After its file exists, a writer does four things to it: write, fsync,
// truncate and close. Every error names the session, the file and the
// operation (and the seqs a write or fsync was for), and wraps the
// underlying error (errors.Is works).
//
// The first failed write or fsync fails the writer for good: that Sync,
// and every later Append and Sync, return an error, and Close closes the
// file, releases the lock and returns the error too. After a failed
// write(2) part of the batch may be in the file, and after a failed fsync
// the kernel may have dropped pages it reported written, so the writer no
// longer knows what its file's tail holds; rather than guess which retry
// is safe, it writes nothing more. Recovery is Close and Store.Open, which
// reads the file as it is: every event a successful Sync acknowledged is
// there; of the batch whose Sync failed there is nothing, all of it, or
// (plain JSONL only) a prefix of whole records, a partial record at the end
// being a torn tail that Open drops; and the turn is repaired. So Sync
// never returns nil for bytes that are not durable, and nothing is ever
// written after a partial record.
//
// A failed write is also truncated back to the end of the last complete
// write at once (best effort: if that truncate fails, the partial record
// stays as a torn tail, and the joined error says so). Open fails, with
// nothing written, when the file cannot be opened for appending or its torn
// tail cannot be truncated; if writing or syncing the repair closers fails,
// Open fails as Sync does and the next Open repairs again. Create removes
// the new file when it cannot be opened for appending, so a failed Create
// leaves no session behind.
//
// # Locks
//
// Create and Open take an exclusive flock(2) on <id>.lock (it never blocks;
// a held lock is sessionlog.ErrInUse) and hold it until Writer.Close. Inspect
// and List take no lock. Writer.Close removes the lock file while it still
// holds the lock (see sessionlog/internal/storage for why that is safe).
//
// # Torn tails
//
// A crash can only damage the last write. On load, damage (an unparsable
// line, an empty line, a malformed row, a seq gap or duplicate; for zstd a
// frame cut short, failing its checksum or followed by garbage) after the
// last complete turn/end is a torn tail: it is dropped (Decoded.Torn, a
// warning on Options.Logger) and Open truncates it away before appending —
// for zstd at a frame boundary, re-appending the intact part of a partly
// damaged frame. A final record that is complete but lacks its '\n' is kept
// and terminated before the next append. Damage before the last complete
// turn/end, or a damaged zstd frame followed by an intact one, is corruption
// (sessionlog.ErrCorrupt): the session is refused with an error naming the
// file and line, and nothing is written.
//
// Open then runs sessionlog.Load (every rule; legacy encodings refused) and
// appends and syncs the repair closers before returning the writer.
package jsonl
