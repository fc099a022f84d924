//go:build linux

package mcp

import "syscall"

// sysProcAttr puts a stdio server in its own process group, so Close can
// end everything it started, and has the kernel kill it should reel die
// without closing it (the rest of its group: see startReaper).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
