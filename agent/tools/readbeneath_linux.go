package tools

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrOutsideRoot reports a path that lies outside the root it must be read
// beneath, by its name or as the kernel resolves it (a symbolic link or
// ".." leading out, a /proc magic link).
var ErrOutsideRoot = errors.New("tools: outside the root")

// ReadBeneath reads the regular file p (absolute and clean) whole, within
// limit bytes, resolving it beneath root in one step as the confined
// writes do (openat2 with RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS, or the
// walk where the kernel lacks it): a path that names a place outside
// root, or reaches one through a symbolic link or "..", fails with
// ErrOutsideRoot; anything but a regular file, or a file of procfs or
// sysfs, with ErrNotRegular; a longer file with ErrTooLarge. The open
// cannot block (O_NONBLOCK). It returns the content and p as found
// beneath root (root's own symbolic links resolved).
func ReadBeneath(root, p string, limit int64) ([]byte, string, error) {
	base, rel, ok := beneathRoots(p, []string{root})
	if !ok {
		return nil, "", fmt.Errorf("%w: %s is not beneath %s", ErrOutsideRoot, p, root)
	}
	rootfd, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", fmt.Errorf("cannot open the root %s: %w", base, err)
	}
	defer unix.Close(rootfd)
	fd, err := opener(resolveAuto)(rootfd, filepath.ToSlash(rel), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.EXDEV), errors.Is(err, unix.ELOOP):
		return nil, "", fmt.Errorf("%w: %s leads outside %s", ErrOutsideRoot, p, root)
	case err != nil:
		return nil, "", &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, "", &os.PathError{Op: "stat", Path: p, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || pseudoFS(fd) {
		return nil, "", fmt.Errorf("%w: %s", ErrNotRegular, p)
	}
	if st.Size > limit {
		return nil, "", fmt.Errorf("%w: %s has %d bytes, more than %d", ErrTooLarge, p, st.Size, limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(b)) > limit {
		return nil, "", fmt.Errorf("%w: %s has more than %d bytes", ErrTooLarge, p, limit)
	}
	real := base
	if r, err := filepath.EvalSymlinks(base); err == nil {
		real = r
	}
	return b, filepath.Join(real, rel), nil
}
