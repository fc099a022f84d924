//go:build !linux

package tools

import "fmt"

// rewriteBeneath fails closed where confined writes are not implemented:
// without openat2-style resolution beneath a directory descriptor a write
// cannot be kept inside its root, so it is refused.
func rewriteBeneath(p, root, _ string, _ bool, _ resolveMode, _ []string, _ changeFunc) (*string, string, FileVersion, error) {
	return nil, "", FileVersion{}, &refusal{fmt.Sprintf("confined writes beneath %s are only supported on Linux", root)}
}
