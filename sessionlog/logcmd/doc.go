// Package logcmd implements the `reel log` subcommands: list, verify, show,
// surface, request, encode, convert and repair. It reads and writes logs
// through the backends and prints to the writers it is given.
//
// A SQLite database may hold several sessions (a store's sessions.db):
// commands that read one log take --session ID to pick one, and without it
// refuse such a database with a *SessionError listing the ids; verify
// checks every session; list prints them all.
//
// Commands that write a log file (repair, convert) hold the per-session
// writer lock the agent's store takes (<dir>/<id>.lock beside the file; the
// id is a JSONL file's base name or a SQLite file's session) while they
// write, and refuse a log whose lock a running reel holds (*LiveError).
//
// Every command prints its help to stdout and succeeds on -h or --help.
//
// A log holds what a model and its tools wrote, so human output (list,
// verify, show, surface, repair, an added command such as diff) and
// anything written to stderr go through a termtext.Writer: control
// characters, bidi controls and invalid UTF-8 are shown escaped. request
// and surface --json print exact JSON (DEL, C1 and bidi as \u escapes);
// encode prints the canonical JSONL as it is, for files.
//
// A caller may add commands that live where logcmd cannot reach (a
// Command passed to Run): cmd/reel adds `diff`, the harness's semantic
// comparison of two runs.
package logcmd
