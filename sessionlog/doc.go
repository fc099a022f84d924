// Package sessionlog owns reel's session log: the dsh session format version 0.
//
// # On-disk model
//
// A log starts with a header record
//
//	{"type":"session","version":0,"id":"…","createdAt":<int ms>,"cwd":"…",…}
//
// followed by events, one logical record each:
//
//	{"type":"…","seq":N,"time":<int ms>,"data":{…},"sourceEventSeqs":[…],"surfaceOp":…}
//
// Event i has seq i (seqs are contiguous from 0). data is kept as raw JSON and
// decoded on demand by the typed accessors, so a foreign log re-encodes byte for
// byte; event types reel does not know are kept verbatim and never reach the
// surface. Storage backends (sessionlog/jsonl, sessionlog/sqlite) decide the
// physical layout; this package owns the logical rules.
//
// # Surface
//
// The surface is the ordered []int of event seqs that produce model messages
// (user/message, assistant/message, tool/result). surfaceOp "append" pushes a
// seq; {"op":"replace","start":s,"end":e} swaps the inclusive range s…e for the
// new seq, and the event's sourceEventSeqs must name every shadowed seq. A
// replace-generation counter lets caches notice rewritten history.
//
// # Request headers
//
// request/header events carry full canonical snapshots (config, system prompt,
// tool schemas; empty system and tools absent) with reason initial, resume,
// change or series. The header in force is the latest snapshot. Legacy
// request/header-delta events and the reason fallback are refused everywhere
// (ErrLegacy).
//
// # Validation, reconstruction, repair
//
// Log validates every event on Append, and Seed runs the very same code path
// over a loaded list. Reconstruct rebuilds the exact request any step sent.
// Repair computes the synthetic closers for a crashed tail (error tool results,
// step/end, turn/end interrupted); persisting them is the backends' job.
//
// # Persistence
//
// Store and Writer are the backend contract (sessionlog/jsonl,
// sessionlog/sqlite; both pass sessionlog/sessionlogtest). Writer.Append
// buffers, Writer.Sync is the durable checkpoint: the agent syncs before a
// model call is dispatched, before a tool runs, after each step's results
// and at turn end. One session has one writer (ErrInUse otherwise). On load
// an incomplete final record is dropped (a torn tail); damage before the
// last complete turn/end is ErrCorrupt. Every backend loads through Load:
// the rules above, then the repair closers, which Open commits before it
// returns and Inspect only reports.
package sessionlog
