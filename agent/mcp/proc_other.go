//go:build !linux

package mcp

import "syscall"

// sysProcAttr puts a stdio server in its own process group, so Close can
// end everything it started. (Without Linux's parent-death signal a
// server outlives a reel that dies without closing it until it notices
// its stdin ended.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
