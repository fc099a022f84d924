//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// dropCapabilities removes every capability from the calling process, on
// all its threads, and from the ambient sets, and empties the bounding set
// of the calling thread, so that neither it nor any program it executes
// holds one — not even when reel runs as root. A confined command is then
// an ordinary process: without CAP_SYS_PTRACE it cannot read the /proc
// entries of reel (which is non-dumpable), without CAP_DAC_OVERRIDE it
// cannot read other users' files, and without CAP_SYS_ADMIN it cannot push
// input into a terminal.
//
// The caller must be locked to its OS thread (runtime.LockOSThread) and
// start every program from that thread: the bounding set is a per-thread
// attribute that only matters at execve, where the new program inherits
// the forking thread's. The supervisor's other threads end with no
// effective, permitted, inheritable or ambient capability, so they can
// regain none; only their bounding sets stay, and nothing is executed from
// them. Dropping the bounding set on this thread alone takes one plain
// prctl per capability, where broadcasting each drop to every thread (psx)
// cost 3.5–9 ms per command on a shared 2-core machine.
//
// Dropping from the bounding set needs CAP_SETPCAP; a process without it
// has no capabilities worth dropping there, so EPERM is not an error.
func dropCapabilities() error {
	last, err := lastCap()
	if err != nil {
		return err
	}
	for c := 0; c <= last; c++ {
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0, 0); e != 0 && e != syscall.EPERM && e != syscall.EINVAL {
			return fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %w", c, e)
		}
	}
	if _, _, e := psx.Syscall6(syscall.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 && e != syscall.EINVAL {
		return fmt.Errorf("prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w", e)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := psx.Syscall3(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset(0): %w", e)
	}
	return nil
}

// lastCap returns the highest capability number the kernel knows.
func lastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if errors.Is(err, os.ErrNotExist) {
		return 63, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading cap_last_cap: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("parsing cap_last_cap %q: %w", b, err)
	}
	return n, nil
}
