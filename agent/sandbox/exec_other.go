//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"syscall"
)

var errNotLinux = errors.New("landlock and the supervisor exist only on Linux")

// Probe returns the Landlock ABI version the kernel offers; Landlock exists
// only on Linux, so it returns 0 and an error wrapping [ErrUnavailable].
func Probe() (abi int, err error) {
	return 0, fmt.Errorf("%w: %w", ErrUnavailable, errNotLinux)
}

// supervise is not supported off Linux.
func supervise(_ int, _ execArgs, path string, _ []string) error {
	return fmt.Errorf("%w: supervising %s: %w", ErrSetup, path, errNotLinux)
}

// superviseWarm is not supported off Linux.
func superviseWarm(_ int, _ execArgs) error {
	return fmt.Errorf("%w: a warm supervisor: %w", ErrSetup, errNotLinux)
}

// QuarantineNote starts the line sandbox-exec prints when it moved a .git
// or .reel the command created out of the way (Linux only).
const QuarantineNote = "reel sandbox: moved away"

// userNSAttr is Linux only: nothing to add elsewhere.
func userNSAttr() (*syscall.SysProcAttr, error) { return nil, nil }
