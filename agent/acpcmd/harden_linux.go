//go:build linux

package acpcmd

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// hideProcess marks reel non-dumpable: its /proc entries (environ, which
// holds the key reel was started with, mem, maps, fd) become unreadable to
// every other process that lacks CAP_SYS_PTRACE, confined commands
// included (sandbox-exec drops every capability before a confining mode
// runs its program). The flag is not inherited across execve, so tools run
// as usual.
func hideProcess() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}
