package tools

import (
	"errors"
	"fmt"
	"io"
)

// Errors of ReadRegularFile, matched with errors.Is.
var (
	// ErrNotRegular reports a path that is not a regular file (a FIFO, a
	// device, a socket, a directory) or lies on a kernel pseudo file system
	// (procfs, sysfs), whose files are never read whole.
	ErrNotRegular = errors.New("tools: not a regular file")
	// ErrTooLarge reports a file longer than the limit it was read with.
	ErrTooLarge = errors.New("tools: file too large")
)

// ReadRegularFile reads the regular file p whole, following symbolic
// links, within bounds: the open cannot block (O_NONBLOCK, so a FIFO
// swapped in fails instead of waiting), the type is checked on the opened
// descriptor (anything but a regular file, and any file of procfs or sysfs
// such as /proc/self/environ, is ErrNotRegular), and a file of more than
// limit bytes, by its size or by what reading it yields, is ErrTooLarge
// without being read further. It returns the content and the version the
// descriptor had when opened. A missing file is an error matching
// fs.ErrNotExist.
func ReadRegularFile(p string, limit int64) ([]byte, FileVersion, error) {
	f, err := openRegular(p, false)
	if _, ok := errors.AsType[*notRegularError](err); ok {
		return nil, FileVersion{}, fmt.Errorf("%w: %v", ErrNotRegular, err)
	}
	if err != nil {
		return nil, FileVersion{}, err
	}
	defer f.Close()
	if pseudoFS(f.fd) {
		return nil, FileVersion{}, fmt.Errorf("%w: %s is on a kernel pseudo file system", ErrNotRegular, p)
	}
	if f.size > limit {
		return nil, FileVersion{}, fmt.Errorf("%w: %s has %d bytes, more than %d", ErrTooLarge, p, f.size, limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, FileVersion{}, err
	}
	if int64(len(b)) > limit {
		return nil, FileVersion{}, fmt.Errorf("%w: %s has more than %d bytes", ErrTooLarge, p, limit)
	}
	return b, f.version, nil
}
