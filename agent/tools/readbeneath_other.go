//go:build !linux

package tools

import "fmt"

// ErrOutsideRoot reports a path that lies outside the root it must be read
// beneath.
var ErrOutsideRoot = fmt.Errorf("tools: outside the root")

// ReadBeneath fails closed where reads beneath a directory descriptor are
// not implemented.
func ReadBeneath(root, p string, _ int64) ([]byte, string, error) {
	return nil, "", fmt.Errorf("%w: reading %s beneath %s is only supported on Linux", ErrOutsideRoot, p, root)
}
