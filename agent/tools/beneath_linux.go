package tools

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// openFunc opens rel (relative, slash-separated) beneath the directory
// dirfd with the semantics of openat2's RESOLVE_BENEATH |
// RESOLVE_NO_MAGICLINKS: every symbolic link is followed but no step may
// leave dirfd (".." above it or an absolute link target fails with EXDEV)
// and a /proc magic link is never followed.
type openFunc func(dirfd int, rel string, flags int, mode uint32) (int, error)

// opener returns the openFunc of how.
func opener(how resolveMode) openFunc {
	if how == resolveWalk {
		return walkBeneath
	}
	return func(dirfd int, rel string, flags int, mode uint32) (int, error) {
		fd, err := openat2Beneath(dirfd, rel, flags, mode)
		if errors.Is(err, unix.ENOSYS) {
			return walkBeneath(dirfd, rel, flags, mode)
		}
		return fd, err
	}
}

// openat2Beneath is openFunc by openat2(2). EAGAIN (a rename raced with
// the resolution of "..") and EINTR are retried a few times.
func openat2Beneath(dirfd int, rel string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{
		Flags:   uint64(flags) | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(mode)
	}
	var err error
	for range 16 {
		var fd int
		fd, err = unix.Openat2(dirfd, rel, &how)
		if err == nil {
			return fd, nil
		}
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			break
		}
	}
	return -1, err
}

// walkBeneath is openFunc without openat2: it walks rel one component at a
// time from dirfd, opening each with O_PATH|O_NOFOLLOW relative to the
// descriptor of the directory before it and never by a path, and resolves
// symbolic links itself by reading them through their own descriptor: an
// absolute target, or a ".." above dirfd, fails with EXDEV; more than 40
// links with ELOOP. ".." returns to the directory the walk came from. A
// /proc magic link reads as an absolute path or as a name like "pipe:[5]"
// that does not exist in its directory, so it is never followed out.
func walkBeneath(dirfd int, rel string, flags int, mode uint32) (int, error) {
	if strings.HasPrefix(rel, "/") {
		return -1, unix.EXDEV
	}
	flags |= unix.O_CLOEXEC
	stack := []int{dirfd} // stack[0] is the caller's; the rest are ours
	defer func() {
		for _, fd := range stack[1:] {
			unix.Close(fd)
		}
	}()
	todo := pathNames(rel)
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		if name == ".." {
			if len(stack) == 1 {
				return -1, unix.EXDEV
			}
			unix.Close(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			continue
		}
		dir, last := stack[len(stack)-1], len(todo) == 0
		fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if last && errors.Is(err, unix.ENOENT) && flags&unix.O_CREAT != 0 {
				// O_NOFOLLOW: a symbolic link planted since fails (ELOOP).
				return unix.Openat(dir, name, flags|unix.O_NOFOLLOW, mode)
			}
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		isLink := st.Mode&unix.S_IFMT == unix.S_IFLNK
		if last && flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL {
			unix.Close(fd) // O_EXCL fails on any existing name, a link too
			return -1, unix.EEXIST
		}
		if isLink {
			target, err := readlinkFd(fd)
			unix.Close(fd)
			if err != nil {
				return -1, err
			}
			if links++; links > maxLinks {
				return -1, unix.ELOOP
			}
			switch {
			case target == "":
				return -1, unix.ENOENT
			case strings.HasPrefix(target, "/"):
				return -1, unix.EXDEV
			}
			todo = append(pathNames(target), todo...)
			continue
		}
		if !last {
			if st.Mode&unix.S_IFMT != unix.S_IFDIR {
				unix.Close(fd)
				return -1, unix.ENOTDIR
			}
			stack = append(stack, fd)
			continue
		}
		if flags&unix.O_PATH != 0 {
			if flags&unix.O_DIRECTORY != 0 && st.Mode&unix.S_IFMT != unix.S_IFDIR {
				unix.Close(fd)
				return -1, unix.ENOTDIR
			}
			return fd, nil
		}
		unix.Close(fd)
		// O_NOFOLLOW: a symbolic link swapped in since fails (ELOOP).
		return unix.Openat(dir, name, flags|unix.O_NOFOLLOW, mode)
	}
	// rel named dirfd itself (or a directory on the way back to it).
	return unix.Openat(stack[len(stack)-1], ".", flags, mode)
}

// pathNames splits a slash-separated path into its names, dropping empty
// ones and ".".
func pathNames(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// readlinkFd reads the target of the symbolic link fd (opened with
// O_PATH|O_NOFOLLOW), so the link read is the one just inspected.
func readlinkFd(fd int) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size >= 1<<16 {
			return "", unix.ENAMETOOLONG
		}
	}
}

// fileFlags are the flags of the target's open: read and write, and never
// block (a FIFO or device is refused after fstat, not waited on) nor
// acquire a controlling terminal.
const fileFlags = unix.O_RDWR | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC

// openTarget opens rel beneath root for reading and writing and returns
// the descriptor. With create it creates the missing parent directories
// (each by mkdirat on the held descriptor of its parent) and the file.
// created reports that the file did not exist.
func openTarget(open openFunc, root, rel string, create bool, ro []string) (fd int, created bool, err error) {
	rootfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, false, fmt.Errorf("cannot open the writable root %s: %w", root, err)
	}
	defer unix.Close(rootfd)
	fd, err = open(rootfd, rel, fileFlags, 0)
	if err == nil || !create || !errors.Is(err, unix.ENOENT) {
		return fd, false, err
	}
	if err := mkdirBeneath(open, rootfd, filepath.Dir(rel), ro); err != nil {
		return -1, false, err
	}
	fd, err = open(rootfd, rel, fileFlags|unix.O_CREAT|unix.O_EXCL, 0o644)
	if !errors.Is(err, unix.EEXIST) {
		return fd, err == nil, err
	}
	// rel ends in a dangling symbolic link (or another writer just made
	// the file): create through the link, still beneath root.
	fd, err = open(rootfd, rel, fileFlags|unix.O_CREAT, 0o644)
	return fd, err == nil, err
}

// mkdirBeneath makes the directory dir (relative to rootfd) and its missing
// parents, one component at a time: each prefix is opened beneath rootfd,
// and a missing one is made with mkdirat on the descriptor of its parent,
// which was itself opened beneath rootfd. Every directory opened on the
// way (so the one the file is then created in) is checked against the
// read-only directories ro first: nothing is made inside one.
func mkdirBeneath(open openFunc, rootfd int, dir string, ro []string) error {
	names := pathNames(dir)
	parent := rootfd
	defer func() {
		if parent != rootfd {
			unix.Close(parent)
		}
	}()
	const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC
	for i, name := range names {
		prefix := strings.Join(names[:i+1], "/")
		fd, err := open(rootfd, prefix, dirFlags, 0)
		if errors.Is(err, unix.ENOENT) {
			if err := unix.Mkdirat(parent, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				return err
			}
			fd, err = open(rootfd, prefix, dirFlags, 0)
		}
		if err != nil {
			return err
		}
		if parent != rootfd {
			unix.Close(parent)
		}
		parent = fd
		if err := shielded(fd, ro); err != nil {
			return err
		}
	}
	return nil
}

// shielded returns a *refusal when the file or directory fd lies in one of
// the read-only directories ro (absolute, symbolic links resolved), by the
// path the kernel gives for fd in /proc/self/fd: whatever symbolic links or
// ".." led there, that is where the descriptor is. When the path cannot be
// read it refuses too (fail closed).
func shielded(fd int, ro []string) error {
	if len(ro) == 0 {
		return nil
	}
	where, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return &refusal{fmt.Sprintf("cannot tell where the file lies (%v), and %s", err, ReadOnlyReason)}
	}
	for _, d := range ro {
		if where == d || strings.HasPrefix(where, d+"/") {
			return &refusal{fmt.Sprintf("it lies in %s: %s", d, ReadOnlyReason)}
		}
	}
	return nil
}

// rewriteBeneath is rewriteConfined's work on Linux: open rel beneath root
// (see openTarget), refuse a file in one of the read-only directories ro
// (see shielded), refuse anything but a regular file with one link, read
// the current content (bounded), then truncate and write through the same
// descriptor, and return the version the descriptor has after the write.
func rewriteBeneath(p, root, rel string, create bool, how resolveMode, ro []string, change changeFunc) (*string, string, FileVersion, error) {
	fd, created, err := openTarget(opener(how), root, rel, create, ro)
	if _, ok := errors.AsType[*refusal](err); ok {
		return nil, "", FileVersion{}, err
	}
	if err != nil {
		return nil, "", FileVersion{}, openFailure(p, root, create, err)
	}
	defer unix.Close(fd)
	if err := shielded(fd, ro); err != nil {
		return nil, "", FileVersion{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, "", FileVersion{}, fmt.Errorf("cannot access %s: %w", p, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return nil, "", FileVersion{}, fmt.Errorf("%s is a directory, not a file", p)
	default:
		return nil, "", FileVersion{}, fmt.Errorf("%s is not a regular file (%s); write and edit only change regular files", p, nonRegularName(st.Mode))
	}
	if st.Nlink > 1 {
		return nil, "", FileVersion{}, &refusal{fmt.Sprintf("the file has %d hard links and may be shared with a file outside the writable roots", st.Nlink)}
	}
	if st.Size > maxFileBytes {
		return nil, "", FileVersion{}, tooLarge(p, st.Size)
	}
	b, err := readAllFd(fd, int(st.Size))
	if err != nil {
		return nil, "", FileVersion{}, fmt.Errorf("cannot read the current content of %s: %w", p, err)
	}
	if len(b) > maxFileBytes {
		return nil, "", FileVersion{}, tooLarge(p, int64(len(b)))
	}
	var old *string
	if s := string(b); !created || s != "" {
		old = &s
	}
	updated, err := change(old, opened{created: created, version: versionOfUnix(&st)})
	if err != nil {
		return old, "", FileVersion{}, err
	}
	if err := unix.Ftruncate(fd, 0); err != nil {
		return old, "", FileVersion{}, fmt.Errorf("cannot write %s: %w", p, err)
	}
	if err := pwriteAll(fd, []byte(updated)); err != nil {
		return old, "", FileVersion{}, fmt.Errorf("cannot write %s: %w", p, err)
	}
	var after FileVersion
	if err := unix.Fstat(fd, &st); err == nil {
		after = versionOfUnix(&st)
	}
	return old, updated, after, nil
}

// readAllFd reads fd from offset 0 to its end, or to one byte past
// maxFileBytes, whichever comes first. size is the expected length.
func readAllFd(fd, size int) ([]byte, error) {
	b := make([]byte, 0, min(size, maxFileBytes)+1)
	for len(b) <= maxFileBytes {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Pread(fd, b[len(b):min(cap(b), maxFileBytes+1)], int64(len(b)))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		b = b[:len(b)+n]
	}
	return b, nil
}

// pwriteAll writes b to fd from offset 0.
func pwriteAll(fd int, b []byte) error {
	for off := 0; off < len(b); {
		n, err := unix.Pwrite(fd, b[off:], int64(off))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		off += n
	}
	return nil
}

// openFailure explains a failed confined open of p beneath root.
func openFailure(p, root string, create bool, err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("cannot open %s: %w", p, err)
	}
	switch errno {
	case unix.EXDEV:
		return &refusal{fmt.Sprintf(`a symbolic link or ".." in the path leads outside the writable root %s`, root)}
	case unix.ELOOP:
		return &refusal{"too many levels of symbolic links, or a /proc magic link, in the path"}
	case unix.EISDIR:
		return fmt.Errorf("%s is a directory, not a file", p)
	case unix.ENXIO, unix.EOPNOTSUPP:
		return fmt.Errorf("%s is not a regular file; write and edit only change regular files: %w", p, errno)
	case unix.ENOENT:
		if !create {
			return &notFoundError{p}
		}
	}
	return fmt.Errorf("cannot write %s: %w", p, errno)
}

// nonRegularName names the type of a non-regular file for the model.
func nonRegularName(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFLNK:
		return "a symbolic link"
	}
	return fmt.Sprintf("file type %#o", mode&unix.S_IFMT)
}
