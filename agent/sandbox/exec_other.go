//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
)

var errNotLinux = errors.New("landlock exists only on Linux")

// Probe returns the Landlock ABI version the kernel offers; Landlock exists
// only on Linux, so it returns 0 and an error wrapping [ErrUnavailable].
func Probe() (abi int, err error) {
	return 0, fmt.Errorf("%w: %w", ErrUnavailable, errNotLinux)
}

// restrict cannot confine anything off Linux.
func restrict(int, execArgs) error { return errNotLinux }

// execProgram is not supported off Linux.
func execProgram(path string, _, _ []string) error {
	return fmt.Errorf("%w: exec %s: %w", ErrSetup, path, errNotLinux)
}
