//go:build linux

package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The bytes a warm supervisor answers a command with.
const (
	warmAck   = 'A' // command taken: it runs now
	warmStale = 'S' // the workspace changed since it confined itself: start a cold one
)

// warmMaxPayload bounds the command a warm supervisor accepts (argv,
// environment and directory together).
const warmMaxPayload = 64 << 20

// superviseWarm is Exec with --warm-fd: it confines the process exactly
// as supervise does and makes it non-dumpable (so that no process of the
// user's — a confined command least of all — can read its /proc entries
// or trace it), then waits for its command on the socket. It exits
// quietly, having run nothing, on EOF on the socket or on the liveness
// pipe. Once it has a command it checks that the workspace's protected
// paths are still the ones it made read-only (else it answers warmStale
// and exits), acks and becomes the command's supervisor: its standard
// streams, environment and working directory become the command's, and it
// supervises the program as supervise does.
func superviseWarm(abi int, a execArgs) error {
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("%w: prctl(PR_SET_DUMPABLE): %w", ErrSetup, err)
	}
	var before []pathState
	if a.mode == WorkspaceWrite {
		// Before the mounts: what appears between this and shield is
		// protected anyway, and shows as a change below.
		before = workspaceState(a)
	}
	if err := confine(abi, a); err != nil {
		return err
	}
	// Off the command's path: the liveness watch and the signals.
	lost, sigs := watchEnd(a)
	c, err := awaitCommand(a)
	if err != nil {
		return err
	}
	stale := a.mode == WorkspaceWrite && !sameState(before, workspaceState(a))
	if stale || unix.Chdir(c.dir) != nil {
		_, _ = unix.Write(a.warmFD, []byte{warmStale})
		exitNow(0)
	}
	select {
	case <-sigs:
		// Signalled while waiting (not by reel, which never signals
		// a waiting supervisor): reel starts a cold one.
		exitNow(0)
	case <-lost:
		exitNow(0)
	default:
	}
	for i, fd := range c.fds {
		if err := unix.Dup3(fd, i, 0); err != nil {
			_, _ = unix.Write(a.warmFD, []byte{warmStale})
			exitNow(0)
		}
		_ = unix.Close(fd)
	}
	// From the ack on, the command is this process's: reel starts no
	// cold one for it any more (see handOver).
	if _, err := unix.Write(a.warmFD, []byte{warmAck}); err != nil {
		exitNow(0)
	}
	_ = unix.Close(a.warmFD)
	// The program is looked up in the command's PATH, as a cold
	// supervisor started with the command's environment does.
	_ = os.Setenv("PATH", "")
	for _, kv := range c.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			_ = os.Setenv("PATH", v)
		}
	}
	a.argv = c.argv
	path, err := exec.LookPath(a.argv[0])
	if err != nil {
		return fmt.Errorf("sandbox-exec: %w", err)
	}
	env := c.env
	if a.mode == WorkspaceWrite {
		env = setEnv(env, "TMPDIR", a.tmp)
	}
	return superviseProgram(a, path, env, lost, sigs)
}

// warmCommand is what a warm supervisor receives: the program's argv,
// environment and working directory, and its stdin, stdout and stderr.
type warmCommand struct {
	dir  string
	argv []string
	env  []string
	fds  []int
}

// awaitCommand waits for the command on a.warmFD, exiting quietly (exit
// status 0, nothing run) on EOF there or on the liveness pipe.
func awaitCommand(a execArgs) (warmCommand, error) {
	for {
		pfds := []unix.PollFd{{Fd: int32(a.warmFD), Events: unix.POLLIN}}
		if a.livenessFD >= 0 {
			pfds = append(pfds, unix.PollFd{Fd: int32(a.livenessFD), Events: unix.POLLIN})
		}
		if _, err := unix.Poll(pfds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return warmCommand{}, fmt.Errorf("%w: waiting for the command: %w", ErrSetup, err)
		}
		if len(pfds) > 1 && pfds[1].Revents != 0 {
			// reel closed the liveness pipe (or died).
			exitNow(0)
		}
		if pfds[0].Revents != 0 {
			break
		}
	}
	var buf []byte
	var fds []int
	oob := make([]byte, unix.CmsgSpace(3*4))
	chunk := make([]byte, 64<<10)
	want := -1
	for want < 0 || len(buf) < want {
		n, oobn, _, _, err := unix.Recvmsg(a.warmFD, chunk, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			// reel went away (or broke the socket) before the command came.
			exitNow(0)
		}
		if oobn > 0 {
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err != nil {
				exitNow(0)
			}
			for _, m := range msgs {
				got, err := unix.ParseUnixRights(&m)
				if err != nil {
					exitNow(0)
				}
				fds = append(fds, got...)
			}
		}
		buf = append(buf, chunk[:n]...)
		if want < 0 && len(buf) >= 8 {
			size := binary.LittleEndian.Uint64(buf[:8])
			if size > warmMaxPayload {
				exitNow(0)
			}
			want = 8 + int(size)
		}
	}
	c, ok := decodeCommand(buf[8:want])
	if !ok || len(fds) != 3 || len(buf) != want {
		exitNow(0)
	}
	c.fds = fds
	return c, nil
}

// decodeCommand reverses encodeCommand's body.
func decodeCommand(body []byte) (warmCommand, bool) {
	if len(body) == 0 || body[len(body)-1] != 0 {
		return warmCommand{}, false
	}
	fields := strings.Split(string(body[:len(body)-1]), "\x00")
	if len(fields) < 2 {
		return warmCommand{}, false
	}
	n, err := strconv.Atoi(fields[1])
	if err != nil || n < 1 || n > len(fields)-2 || fields[2] == "" {
		return warmCommand{}, false
	}
	return warmCommand{dir: fields[0], argv: fields[2 : 2+n], env: fields[2+n:]}, true
}

// pathState is what one path was: absent, or its device and inode.
type pathState struct {
	path     string
	exists   bool
	dev, ino uint64
}

// workspaceState records the workspace root, the temp dir and every
// [Protected] path of a.root: what the Landlock rules and the read-only
// mounts of a warm supervisor were made for.
func workspaceState(a execArgs) []pathState {
	var out []pathState
	for _, p := range append([]string{a.root, a.tmp}, Protected(a.root)...) {
		s := pathState{path: p}
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil {
			s.exists, s.dev, s.ino = true, st.Dev, st.Ino
		}
		out = append(out, s)
	}
	return out
}

// sameState reports whether two workspaceState records are the same.
func sameState(a, b []pathState) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
