// Package checkpoint captures and restores the files of a workspace, so a
// session's turns can be undone.
//
// A Store is a shadow git repository under reel's state dir (never the
// user's .git), driven as git --git-dir=<store> --work-tree=<workspace>:
// Capture is `git add -A` then `git write-tree`, so it respects the
// workspace's .gitignore files, stores content once (content addressed)
// and costs what changed since the previous capture (git's stat cache).
// A capture is bounded: files above Limits.MaxFile bytes are left out
// (and named), and a capture whose files add up to more than
// Limits.MaxTotal bytes is skipped with a note; neither is ever read.
//
// Restore brings the workspace back to a captured tree. It never follows
// a symbolic link and never writes outside the workspace: every directory
// is opened beneath the workspace with openat2's RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS (a symbolic link on the way is refused, not
// followed), and each file is written to a temporary name in its
// directory and renamed over the old one, so a hard link to a file
// outside is replaced, never written through, and a SIGKILL leaves each
// file either old or restored. The restore's journal (one line per file
// done, synced) says which.
package checkpoint
