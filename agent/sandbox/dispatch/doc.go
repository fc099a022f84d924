// Package dispatch runs "reel sandbox-exec" from its package
// initialization, before much of reel is initialized.
//
// A sandboxed command's supervisor is the reel binary executed again, and
// Go initializes every package a binary links before main runs, none of
// which the supervisor needs beyond package sandbox. Go initializes
// packages in import-path order, each as soon as everything it imports is
// initialized, so this package's init runs right after package sandbox's
// dependencies: ahead of the OpenAI and MCP clients, the engine, the ACP
// server and the harness (those ordered before sandbox's last dependency,
// such as SQLite and goja, still run). When the process was started as
// "reel sandbox-exec" the init never returns: it confines the process,
// supervises the command and exits, as cmd/reel's main did.
//
// Only cmd/reel imports it (blank): a test binary that imports package
// sandbox keeps its own TestMain dispatch.
package dispatch
