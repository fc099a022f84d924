//go:build !linux

package tools

// pseudoFS reports whether fd is on a kernel pseudo file system; outside
// Linux none is known.
func pseudoFS(int) bool { return false }
