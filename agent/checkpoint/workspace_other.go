//go:build !linux

package checkpoint

import "errors"

// workspace is the open root of a restore; restoring needs Linux's
// openat2 to stay beneath the workspace.
type workspace struct{}

func openWorkspace(string) (*workspace, error) {
	return nil, errors.New("restoring a checkpoint needs Linux (openat2)")
}

func (*workspace) close()                             {}
func (*workspace) remove(string) error                { return errors.ErrUnsupported }
func (*workspace) write(string, string, []byte) error { return errors.ErrUnsupported }
