// Package acpserver is reel's Agent Client Protocol adapter: it implements
// acp.Agent on top of the turn engine (package agent), which knows nothing
// of ACP.
//
// It maps the protocol onto engine calls (session/new, session/load,
// session/prompt, session/set_mode, session/list, session/close), turns
// what a turn reports into session/update notifications and its escalations
// into session/request_permission, replays a loaded session's history, and
// guards the connection: a frame filter answers malformed or oversized
// frames itself, and a write deadline treats a client that stopped reading
// as gone. It never appends to a session log; the engine does.
//
// stdout carries protocol frames only; diagnostics go to the injected
// *slog.Logger (stderr in reel acp).
package acpserver
