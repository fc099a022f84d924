//go:build linux

package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// QuarantineNote starts the line sandbox-exec prints to the command's
// stderr when it moved a .git or .reel the command created at the
// workspace root out of git's and reel's way.
const QuarantineNote = "reel sandbox: moved away"

// shield keeps the [Protected] paths of root read-only to everything the
// calling thread starts from now on: it moves the thread into a private
// mount namespace (mount propagation off, so nothing reaches the host) and
// bind-mounts each protected path that exists read-only over itself.
// Landlock alone cannot do this: it grants subtrees and never denies one
// inside a granted one. The thread must be locked (runtime.LockOSThread)
// and must start the program itself. It needs CAP_SYS_ADMIN in its user
// namespace: reel running as root has it, and otherwise Sandbox starts
// sandbox-exec in a user namespace of its own with the capability
// (see userNSAttr). Without it shield fails: the command must not run.
func shield(root string) error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("making a private mount namespace (to keep the workspace's .git and .reel read-only): %w; workspace-write needs reel to run as root or unprivileged user namespaces to be enabled", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mount namespace private: %w", err)
	}
	for _, p := range Protected(root) {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return fmt.Errorf("protecting %s: %w", p, err)
		}
		if err := bindReadOnly(p); err != nil {
			return fmt.Errorf("protecting %s: %w", p, err)
		}
	}
	return nil
}

// bindReadOnly bind-mounts p (with every mount below it) over itself and
// makes the new mounts read-only.
func bindReadOnly(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind mount: %w", err)
	}
	err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("mount_setattr(MOUNT_ATTR_RDONLY): %w", err)
	}
	// Kernels before 5.12: remount the top mount read-only, keeping the
	// flags a user namespace may not clear.
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return fmt.Errorf("statfs: %w", err)
	}
	keep := uintptr(st.Flags) & (unix.ST_NOSUID | unix.ST_NODEV | unix.ST_NOEXEC | unix.ST_NOATIME | unix.ST_NODIRATIME | unix.ST_RELATIME)
	if err := unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|keep, ""); err != nil {
		return fmt.Errorf("remount read-only: %w", err)
	}
	return nil
}

// rootWatch is what sandbox-exec recorded of the workspace root when the
// command started: its protected names, and whether the root itself was a
// git directory (rootGitDir).
type rootWatch struct {
	root    string
	entries []rootEntry
	gitDir  bool
}

// rootEntry identifies what a protected name at the workspace root was
// when the command started.
type rootEntry struct {
	path     string
	exists   bool
	dev, ino uint64
}

// watchRoot records the protected names directly at root (.git, .reel,
// …) and whether root is itself a git directory.
func watchRoot(root string) *rootWatch {
	w := &rootWatch{root: filepath.Clean(root), gitDir: rootGitDir(root)}
	for _, n := range protectedNames {
		e := rootEntry{path: filepath.Join(filepath.Clean(root), n)}
		var st unix.Stat_t
		if unix.Lstat(e.path, &st) == nil {
			e.exists, e.dev, e.ino = true, st.Dev, st.Ino
		}
		w.entries = append(w.entries, e)
	}
	return w
}

// quarantine moves each protected name at the root that the command
// created (absent, or another file, when it started) to a name git and
// reel do not look at, and says so on stderr, so that the user's next git
// command does not run what the command planted in a git directory of its
// own; and when the command made the root itself a git directory, it
// moves the root's HEAD away likewise. It reports whether it moved
// anything. A nil w (no mode to watch) moves nothing.
func quarantine(w *rootWatch) bool {
	if w == nil {
		return false
	}
	moved := false
	if !w.gitDir && rootGitDir(w.root) {
		head := filepath.Join(w.root, "HEAD")
		if to, err := moveAside(head); err != nil {
			fmt.Fprintf(os.Stderr, "%s: could not move %s out of the way: %v; %s: do not run git there before checking it\n", QuarantineNote, head, err, gitDirNote)
		} else {
			fmt.Fprintf(os.Stderr, "%s %s to %s: %s\n", QuarantineNote, head, to, gitDirNote)
		}
		moved = true
	}
	for _, e := range w.entries {
		var st unix.Stat_t
		if unix.Lstat(e.path, &st) != nil || e.exists && st.Dev == e.dev && st.Ino == e.ino {
			continue
		}
		var b [6]byte
		_, _ = rand.Read(b[:])
		to := e.path + ".reel-quarantine-" + hex.EncodeToString(b[:])
		if err := unix.Renameat2(unix.AT_FDCWD, e.path, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE); err != nil {
			fmt.Fprintf(os.Stderr, "%s: could not move %s, which the command created, out of the way: %v; its contents may run outside the sandbox: do not run git there before checking it\n", QuarantineNote, e.path, err)
			moved = true
			continue
		}
		fmt.Fprintf(os.Stderr, "%s %s, which the command created, to %s: the workspace's .git and the agents' folders (.reel, .dsh, .agents, .claude) are read-only in workspace-write (git and the agents would run what they hold outside the sandbox); creating them needs an approved escalation\n", QuarantineNote, e.path, to)
		moved = true
	}
	return moved
}

// userNSAttr returns the process attributes sandbox-exec needs to start
// with for shield: nil when reel runs as root (it may unshare the mount
// namespace itself); otherwise a new user namespace mapping the user to
// itself, with CAP_SYS_ADMIN (in that namespace only) kept across exec so
// that sandbox-exec can make its mounts before it drops every capability.
// It fails when this kernel does not let unprivileged users make user
// namespaces.
func userNSAttr() (*syscall.SysProcAttr, error) {
	if os.Geteuid() == 0 {
		return nil, nil
	}
	for _, f := range []string{"/proc/sys/user/max_user_namespaces", "/proc/sys/kernel/unprivileged_userns_clone"} {
		if b, err := os.ReadFile(f); err == nil && len(b) > 0 && b[0] == '0' {
			return nil, fmt.Errorf("sandbox: workspace-write keeps the workspace's .git and the agents' folders read-only with a private mount namespace, and --network off runs commands in a private network namespace; both need reel to run as root or unprivileged user namespaces (%s is 0); nothing was run", f)
		}
	}
	uid, gid := os.Geteuid(), os.Getegid()
	return &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		AmbientCaps:                []uintptr{unix.CAP_SYS_ADMIN},
	}, nil
}
