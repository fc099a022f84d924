// Package sessionquery holds the model-facing session query tool,
// session_event_read: the model reads one event of its own session's log,
// unabridged, by seq, with optional summaries of its neighbours — the
// reference agent's tool of that name (its tool-session-query package),
// with its schema, bounds and result text.
//
// # What it reads
//
// Only the calling session's own log (tools.Env.History, which the engine
// sets to the live session). A session_id naming any other session — a
// sibling, a parent, a child, a path — is refused with the reference's
// wording for a target outside the caller's reach ("session target is
// outside the caller workspace"); nothing is opened. The reference lets a
// caller read any session of the same workspace; reel keeps a session to
// its own log, so a model cannot read what another session (another
// user's task in the same folder, a child's tool output) holds.
//
// # Bounds
//
// seq, before and after are non-negative safe integers (at most 2^53-1,
// as the reference's Number.isSafeInteger); before and after are at most
// [MaxWindow]. A seq past the log's end is the reference's "has no event
// at seq N". The arguments are parsed once, strictly ([ParseEventReadArgs]:
// exact names, each once, no unknown member). The result text is written
// into a tools.Output, so a huge event (a long tool result, a large
// request header) is shown as head and tail with the whole saved to a
// spill file, within bounded memory.
//
// # Result text
//
//	Session ID — TITLE
//	Target event seq N:
//	```json
//	{ the event, indented by two spaces }
//	```
//
// then, when before/after ask for them, "Before:" and "After:" sections
// with one entry a neighbour, "- seq N | TYPE | ISO-TIME" and its semantic
// text indented below (or " | (no semantic text)"). TITLE is the latest
// session/title, else "untitled".
package sessionquery
