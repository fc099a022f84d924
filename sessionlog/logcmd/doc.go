// Package logcmd implements the `reel log` subcommands: verify, show,
// surface, request, encode, convert and repair. It reads and writes logs
// through the backends and prints to the writers it is given.
//
// Commands that write a log file (repair, convert) hold the per-session
// writer lock the agent's store takes (<dir>/<id>.lock beside the file; the
// id is a JSONL file's base name or a SQLite file's session) while they
// write, and refuse a log whose lock a running reel holds (*LiveError).
package logcmd
