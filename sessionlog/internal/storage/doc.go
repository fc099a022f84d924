// Package storage is the plumbing the session-log backends share: the
// per-session writer lock, the checks every backend runs on a session id, a
// header and an append batch, and atomic file creation.
//
// # Locks
//
// The single-writer rule is enforced with one lock sidecar per session,
// <dir>/<id>.lock, held with flock(2) (github.com/gofrs/flock) for as long as
// a Writer is open. flock locks belong to an open file description, so two
// Stores in one process conflict exactly like two processes do. Lock files
// are never removed: unlinking a lock file that another process is about to
// lock would let two writers in. Commands that rewrite a log file outside a
// Store (`reel log repair`, `reel log convert`) take the same lock for the
// session the file belongs to and refuse the file while a writer holds it,
// so nothing renames a new file over a log a writer is appending to.
//
// # Files
//
// WriteAtomic and Commit make a file appear whole or not at all: content is
// written to "<dir>/.tmp-<name>-<random>", fsynced, renamed over the target
// and the directory fsynced. Backends skip names starting with '.'.
package storage
