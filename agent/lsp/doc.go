// Package lsp is reel's lsp tool: precise code navigation — go to
// definition, find references, go to implementation, hover — answered by
// a real language server speaking the Language Server Protocol over its
// stdio (JSON-RPC 2.0 framed by Content-Length headers, through
// github.com/sourcegraph/jsonrpc2 with reel's own bounded framing).
//
// The tool is opt-in, as in the reference agent, whose composition adds it
// next to the default tools (reel acp --lsp, or --lsp-server). Its schema
// and result texts are the reference's: one-based line and UTF-16
// character in; locations out as path:line:character, one per line,
// grouped by file, capped by count ("… N more locations omitted (limit
// M).") and by size; "No results." and "No hover information." when the
// server found nothing.
//
// # Servers
//
// A server is picked by the file's final extension ([Config.Servers];
// by default typescript-language-server for TypeScript and JavaScript and
// gopls for Go). It is started on the first call that needs it, for the
// session's workspace (its cwd), and kept for the session in the
// session's tools.Keep: the session's close stops it (LSP shutdown and
// exit, then its process tree). A server that is not installed is a clear
// error naming it and how to install it.
//
// A language server executes workspace code (build scripts, plugins,
// go list), so it runs exactly as bash does: through the session's
// tools.Env.Exec, that is under the reel sandbox-exec supervisor in the
// session's sandbox mode (Landlock in read-only and workspace-write), with
// the model keys scrubbed from its environment. The supervisor watches
// reel's liveness pipe, so when reel dies, however it dies, the server's
// whole tree is killed (reel puts the supervisor in a process group of its
// own, and gives it no parent-death signal, which would end it before it
// could kill the tree). A switch of the session's mode (or an
// ancestor's) stops its servers at once, as it stops wider background
// jobs; the next call starts them again under the new mode.
//
// # Bounds
//
// Every call is bounded by [Config.Timeout], covering the server's start,
// its initialize handshake and the request; a server that does not
// answer in time is stopped (a write blocked on a server that reads
// nothing ends with it) and the call fails with a clear error; the next
// call starts it again. A server that exits mid-request fails the call
// with its exit status and the end of its stderr. Each message from the
// server is bounded ([Config.MaxMessageBytes], header lines too); a
// larger one ends the server. Notifications (logs, diagnostics) are
// dropped as they arrive, so a server flooding them costs no memory. A
// cancelled call stops the server under it rather than leave a request
// running into the next call's document.
//
// # Paths
//
// file_path comes from the model and is hostile. It must lie beneath the
// session's cwd as the kernel resolves it — the same resolution the
// confined writes use (openat2 RESOLVE_BENEATH, no symbolic link or ".."
// out, no /proc magic link) — and be a regular UTF-8 file within
// [Config.MaxDocumentBytes]; reel reads it and sends its text to the
// server (didOpen, then didClose after the request).
//
// Locations the server returns outside the workspace (a library's
// declaration, the standard library) are shown, not refused, as the
// reference shows them: as absolute paths. They are text only; reel
// reads none of them (the read tool reads outside the workspace anyway).
// A location beneath the workspace is shown relative to it. A URI that is
// not a local file: URI is shown as given, and any path or URI holding a
// control character is shown quoted, so a server cannot forge result
// lines.
package lsp
