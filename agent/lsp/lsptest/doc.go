// Package lsptest is a stand-in language server for tests of the lsp
// tool: `reel lsp-standin MODE` speaks the Language Server Protocol over
// stdio, well (ok) or as an attacker would (a server that hangs, dies
// mid-request, floods its output, breaks the framing, names places
// outside the workspace or forges result lines, starts a process of its
// own, or writes outside the workspace).
package lsptest
