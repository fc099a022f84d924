// Package storage is the plumbing the session-log backends share: the
// per-session writer lock, the checks every backend runs on a session id, a
// header and an append batch, and atomic file creation.
//
// # Locks
//
// The single-writer rule is enforced with one lock sidecar per session,
// <dir>/<id>.lock, held with flock(2) (github.com/gofrs/flock) for as long as
// a Writer is open. flock locks belong to an open file description, so two
// Stores in one process conflict exactly like two processes do. A holder
// removes its lock file on release, while it still holds the lock; a
// process that meanwhile opened the old file and locks it after the release
// finds that the path no longer names the file it locked, drops that lock
// and starts over, so two writers never both hold a session's lock. A
// process that dies leaves its lock file behind, unlocked, and the next
// writer takes it. Commands that rewrite a log file outside a
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
