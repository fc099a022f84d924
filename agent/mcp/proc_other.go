//go:build !linux

package mcp

import "syscall"

// sysProcAttr puts a stdio server in its own process group, so Close can
// end everything it started. (Without Linux's parent-death signal, a
// reel that dies without closing it leaves the group's end to the reaper,
// see startReaper.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
