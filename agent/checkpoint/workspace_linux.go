//go:build linux

package checkpoint

import (
	"errors"
	"fmt"
	"path"
	"strconv"

	"golang.org/x/sys/unix"
)

// beneath is how every path of a restore is resolved: beneath the
// workspace, following no symbolic link and no /proc magic link.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// workspace is the open root of a restore.
type workspace struct {
	rootfd int
	seq    int
}

func openWorkspace(root string) (*workspace, error) {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open the workspace %s: %w", root, err)
	}
	return &workspace{rootfd: fd}, nil
}

func (w *workspace) close() { unix.Close(w.rootfd) }

// open opens rel beneath the root with openat2 (no symbolic link on the
// way, the last name included, is followed).
func (w *workspace) open(rel string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags) | unix.O_CLOEXEC | unix.O_NOFOLLOW, Resolve: beneath}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(mode)
	}
	for range 16 {
		fd, err := unix.Openat2(w.rootfd, rel, &how)
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

// dir opens the directory dir (relative, slash separated; "." the root),
// making the missing ones with create, each by mkdirat on its held
// parent.
func (w *workspace) dir(dir string, create bool) (int, error) {
	const flags = unix.O_PATH | unix.O_DIRECTORY
	if dir == "." || dir == "" {
		return w.open(".", flags, 0)
	}
	fd, err := w.open(dir, flags, 0)
	if err == nil || !create || !errors.Is(err, unix.ENOENT) {
		return fd, describe(dir, err)
	}
	parent, err := w.dir(path.Dir(dir), true)
	if err != nil {
		return -1, err
	}
	defer unix.Close(parent)
	if err := unix.Mkdirat(parent, path.Base(dir), 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, describe(dir, err)
	}
	fd, err = w.open(dir, flags, 0)
	return fd, describe(dir, err)
}

// describe names a refusal of the beneath rule.
func describe(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV), errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("refused: %s is reached through a symbolic link or is not a directory (a restore follows no link): %w", p, err)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// remove removes the file rel (a symbolic link itself, never its target);
// a file already gone is no error.
func (w *workspace) remove(rel string) error {
	parent, err := w.dir(path.Dir(rel), false)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	err = unix.Unlinkat(parent, path.Base(rel), 0)
	if errors.Is(err, unix.EISDIR) {
		err = unix.Unlinkat(parent, path.Base(rel), unix.AT_REMOVEDIR)
	}
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// write puts data at rel with the git mode: a temporary file (or
// symbolic link) in rel's directory, renamed over rel. Whatever rel was
// (a hard link to a file elsewhere, a symbolic link) is replaced, never
// written through.
func (w *workspace) write(rel, mode string, data []byte) error {
	if mode == "160000" {
		return nil // a nested repository: its files are its own
	}
	parent, err := w.dir(path.Dir(rel), true)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	// A name someone planted is skipped (O_EXCL), never reused.
	var tmp string
	for range 100 {
		w.seq++
		tmp = ".reel-restore-" + strconv.Itoa(unix.Getpid()) + "-" + strconv.Itoa(w.seq)
		if err = w.writeTemp(parent, tmp, mode, data); !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		return err
	}
	base := path.Base(rel)
	err = unix.Renameat(parent, tmp, parent, base)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
		// A directory stands where the file was: it goes if it is empty.
		if rerr := unix.Unlinkat(parent, base, unix.AT_REMOVEDIR); rerr == nil {
			err = unix.Renameat(parent, tmp, parent, base)
		}
	}
	if err != nil {
		_ = unix.Unlinkat(parent, tmp, 0)
		return err
	}
	return nil
}

// writeTemp creates tmp in parent (O_EXCL: never an existing name) as
// the file or symbolic link the git mode says, with data.
func (*workspace) writeTemp(parent int, tmp, mode string, data []byte) error {
	if mode == "120000" {
		return unix.Symlinkat(string(data), parent, tmp)
	}
	perm := uint32(0o644)
	if mode == "100755" {
		perm = 0o755
	}
	fd, err := unix.Openat(parent, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return err
	}
	err = writeAll(fd, data)
	if err == nil {
		err = unix.Fchmod(fd, perm)
	}
	if err == nil {
		err = unix.Fsync(fd)
	}
	unix.Close(fd)
	if err != nil {
		_ = unix.Unlinkat(parent, tmp, 0)
	}
	return err
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
