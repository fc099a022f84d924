//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
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
