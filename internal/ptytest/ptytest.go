// Package ptytest opens real pseudo-terminals for tests that attack a
// controlling terminal (TIOCSTI). It is imported only by test code.
package ptytest

import (
	"fmt"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Open returns a new pseudo-terminal's master and slave and the slave's
// path, closed when the test ends; what is written to the master side is
// drained so the terminal never fills. Where the machine has no
// pseudo-terminals the test skips loudly, and fails under CI=true.
func Open(t testing.TB) (master, slave *os.File, path string) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no pseudo-terminals (/dev/ptmx: %v): the terminal attack cannot be tested", err)
		}
		t.Skipf("!!! SKIPPED LOUDLY: no pseudo-terminals (/dev/ptmx: %v); the terminal attack is not tested", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { _ = master.Close() })
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	path = fmt.Sprintf("/dev/pts/%d", n)
	slave, err = os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = slave.Close() })
	go func() { _, _ = io.Copy(io.Discard, master) }()
	return master, slave, path
}
