package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// FileVersion identifies one state of a file on disk: its device and inode,
// size, and modification and status-change times in nanoseconds. Two stats
// of a file give equal versions only if nothing wrote to, truncated,
// replaced or re-linked it in between. The zero FileVersion stands for a
// file known only through Env.FS (no file on disk).
type FileVersion struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64
}

// Observation is what the file tools last saw of one file in a session:
// present at a version (read it, wrote it, edited it), or confirmed absent
// (read found nothing there).
type Observation struct {
	// Present is false for a confirmed absence.
	Present bool
	// Version is the file's version when it was seen (zero when absent).
	Version FileVersion
	// Buffer says the file was seen through Env.FS (the editor's buffer),
	// not on disk.
	Buffer bool
}

// Observations is a session's record of what read, write and edit saw of
// each file, the basis of the read-before-edit rule: edit refuses a file
// the session has not seen, write refuses to replace an existing file it
// has not seen, and both refuse a file that changed on disk since it was
// seen (see the package documentation, section Read before edit). Keys
// are file identities as the tools compute them (the path with its
// symbolic links resolved). Implementations must be safe for concurrent
// use; the tools call Observe only after a call succeeded (or, for read,
// found nothing).
type Observations interface {
	// Observation returns the last observation of key, if any.
	Observation(key string) (Observation, bool)
	// Observe records o as the last observation of key.
	Observe(key string, o Observation)
}

// The read-before-edit refusals, worded as the reference agent words them
// (with its recovery advice), for the file shown as p.
// The path goes between plain double quotes, unescaped, as the reference
// writes it.
func notReadForEdit(p string) string {
	return `edit requires reading "` + p + `" first — read the file, then retry`
}

func absentForEdit(p string) string { return `cannot edit "` + p + `": not found` }

func changedSinceRead(verb, p string) string {
	return "cannot " + verb + ` "` + p + `": file changed since it was read — re-read the file, then retry`
}

func goneSinceRead(p string) string {
	return `cannot write "` + p + `": file no longer exists — re-read the file, then retry`
}

func overwriteUnread(p string) string {
	return `cannot overwrite existing "` + p + `" without reading it first — read the file, then retry`
}

// fileKey is the identity of the file at the clean absolute path p: p with
// its symbolic links resolved, or, when p does not resolve (it does not
// exist, or ends in a dangling link), its nearest existing ancestor
// resolved with the rest of p appended. Two names of one file share a key;
// a name whose link was pointed elsewhere gets the new target's key.
func fileKey(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	rest := filepath.Base(p)
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(dir) == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// observation returns the session's last observation of key; seen is
// false when there is none (or no Observations to ask).
func (e *Env) observation(key string) (o Observation, seen bool) {
	if e.Observed == nil {
		return Observation{}, false
	}
	return e.Observed.Observation(key)
}

// guarded reports whether the read-before-edit rule applies.
func (e *Env) guarded() bool { return e.Observed != nil }

// observe records an observation of key, if the Env keeps them.
func (e *Env) observe(key string, o Observation) {
	if e.Observed != nil {
		e.Observed.Observe(key, o)
	}
}

// observeBuffer records p as seen through Env.FS, at its current version
// on disk (a zero version when it exists only for Env.FS).
func (e *Env) observeBuffer(key, p string) {
	if e.Observed == nil {
		return
	}
	var v FileVersion
	if fi, err := os.Stat(p); err == nil {
		v = versionOf(fi)
	}
	e.Observed.Observe(key, Observation{Present: true, Version: v, Buffer: true})
}

// VersionOf is the version of the file a stat described.
func VersionOf(fi fs.FileInfo) FileVersion { return versionOf(fi) }

// diskState is what a stat of a path (following symbolic links) found.
type diskState struct {
	exists  bool
	regular bool
	version FileVersion
	err     error // a failure other than "does not exist"
}

// statPath stats p, following symbolic links.
func statPath(p string) diskState {
	fi, err := os.Stat(p)
	switch {
	case err == nil:
		return diskState{exists: true, regular: fi.Mode().IsRegular(), version: versionOf(fi)}
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return diskState{}
	}
	return diskState{err: err}
}

// onDisk reports whether the observed file was seen on disk (not only
// through Env.FS).
func (o Observation) onDisk() bool { return o.Version != (FileVersion{}) }

// matches reports whether a file now at version cur is the one observed
// in o. A zero observed version (seen only through Env.FS) matches
// whatever is on disk.
func (o Observation) matches(cur FileVersion) bool {
	return o.Version == (FileVersion{}) || o.Version == cur
}
