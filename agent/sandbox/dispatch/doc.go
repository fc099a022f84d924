// Package dispatch runs "reel sandbox-exec" from its package
// initialization, before the rest of reel's packages are initialized.
//
// A sandboxed command's supervisor is the reel binary executed again, and
// Go initializes every package a binary links before main runs: for reel
// that is the model clients, the session store's SQLite, the harness and
// more, none of which the supervisor uses. Go initializes a package as
// soon as the packages it imports are (taking the lexically smallest
// ready one first), so this package, which imports only package sandbox
// and what that needs, runs ahead of most of them, and its init never
// returns when the process was started as "reel sandbox-exec": it confines
// the process, supervises the command and exits, as cmd/reel's main did.
//
// Only cmd/reel imports it (blank): a test binary that imports package
// sandbox keeps its own TestMain dispatch.
package dispatch
