package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How the pool of warm supervisors behaves.
const (
	// warmWait bounds how long a call waits for a warm supervisor to
	// take its command; past it (or at once, when the process is seen
	// stopped, traced or dead) the call starts a cold supervisor, so a
	// warm one that was stopped or killed costs a cold start, never a
	// hang.
	warmWait = 2 * time.Second
	// warmDefer bounds how long the next warm supervisor's start waits
	// for the call that has it started to end (see warmUp).
	warmDefer = 50 * time.Millisecond
	// warmPoll is how often the wait looks at the warm process's state.
	warmPoll = 20 * time.Millisecond
	// maxWarm bounds the warm supervisors waiting at once (one per key).
	maxWarm = 4
	// maxWarmFails is how many warm supervisors of one key in a row may
	// die or fail to answer before the Sandbox stops warming that key
	// (it cannot be confined here: every call would start a process in
	// vain).
	maxWarmFails = 3
)

// warmKey is what shapes a supervisor's confinement: every sandbox-exec
// argument but the command. A warm supervisor is only ever handed a
// command whose key is exactly its own.
type warmKey struct {
	mode    Mode
	root    string
	tmp     string
	network bool
}

// warm is a warm supervisor: started, confined, waiting for its command
// on conn.
type warm struct {
	cmd  *exec.Cmd
	conn *net.UnixConn
}

// discard ends a warm supervisor that will not be handed a command (or
// failed to take one) and reaps it.
func (w *warm) discard() {
	_ = w.conn.Close()
	_ = w.cmd.Process.Kill()
	go func() { _ = w.cmd.Wait() }()
}

// warmLaunch is the [tools.Launcher] of a command: it hands the command
// to the warm supervisor of its key when one is waiting, starts a cold
// supervisor otherwise, and in both cases has the next warm one started.
type warmLaunch struct {
	s    *Sandbox
	key  warmKey
	ctx  context.Context
	argv []string // the program and its arguments
}

// Error says why such a command cannot be started with Cmd.Start.
func (l *warmLaunch) Error() string {
	return "sandbox: this command starts through tools' launcher (a warm supervisor), not exec.Cmd.Start"
}

// Launch implements tools.Launcher.
func (l *warmLaunch) Launch(cmd *exec.Cmd) error {
	cmd.Err = nil
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	if err := l.ctx.Err(); err != nil {
		return err
	}
	if !warmable(cmd, l.s.exe) {
		return cmd.Start()
	}
	if w := l.s.takeWarm(l.key); w != nil {
		if l.s.hand(l.key, w, cmd, l.argv) {
			cmd.Process = w.cmd.Process
			l.s.warmUp(l.key, env, cmd.Process.Pid)
			return nil
		}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	l.s.warmUp(l.key, env, cmd.Process.Pid)
	return nil
}

// exitedOrLater returns once process pid has exited (a pidfd in the
// runtime's poller: no thread waits) or after d, whichever comes first; at
// once when pid cannot be watched.
func exitedOrLater(pid int, d time.Duration) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	_ = f.SetReadDeadline(time.Now().Add(d))
	raw, err := f.SyscallConn()
	if err != nil {
		return
	}
	first := true
	// Called again once the pidfd is readable (the process exited) or
	// the deadline passed.
	_ = raw.Read(func(uintptr) bool {
		done := !first
		first = false
		return done
	})
}

// warmable reports whether a warm supervisor can stand in for cmd's
// cold one: its streams are files (or nil), its only extra file is the
// liveness pipe, and its process attributes are the builder's plus a
// process group of its own, which the warm supervisor has.
func warmable(cmd *exec.Cmd, exe string) bool {
	if cmd.Path != exe || len(cmd.ExtraFiles) != 1 || cmd.Process != nil {
		return false
	}
	if cmd.Stdin != nil {
		if _, ok := cmd.Stdin.(*os.File); !ok {
			return false
		}
	}
	for _, w := range []any{cmd.Stdout, cmd.Stderr} {
		if w == nil {
			continue
		}
		if _, ok := w.(*os.File); !ok {
			return false
		}
	}
	a := cmd.SysProcAttr
	return a != nil && a.Setpgid && a.Pgid == 0 && !a.Setsid && !a.Setctty && !a.Noctty &&
		!a.Foreground && !a.Ptrace && a.Chroot == "" && a.Credential == nil
}

// takeWarm removes the warm supervisor of key from the pool and returns
// it (nil when none waits), waiting for one whose start is under way (at
// most warmWait). Every warm supervisor of the same root with another key
// — the session switched mode — is ended.
func (s *Sandbox) takeWarm(key warmKey) *warm {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	for k, w := range s.warms {
		if k.root == key.root && k != key {
			delete(s.warms, k)
			w.discard()
		}
	}
	if s.warms[key] == nil {
		if st := s.warming[key]; st != nil && st.spawned {
			// Its process is starting: waiting for it costs less than
			// a cold start. One still waiting for the call before to
			// end (a background job, calls in parallel) is not waited
			// for: this call starts cold at once.
			s.mu.Unlock()
			t := time.NewTimer(warmWait)
			select {
			case <-st.done:
			case <-t.C:
			}
			t.Stop()
			s.mu.Lock()
		}
	}
	w := s.warms[key]
	delete(s.warms, key)
	return w
}

// warmUp starts the next warm supervisor of key in the background, with
// the entries of env (the environment of the command just started) that
// warmKeep names (the warm one gets its own command's environment at
// hand-over), unless one waits or starts already. It starts it once
// process after (the supervisor of the call just started) has exited, or
// warmDefer later when that call runs on: a whole reel process starting
// beside a short call would slow it down on a busy machine.
func (s *Sandbox) warmUp(key warmKey, env []string, after int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.warmOn || s.warms[key] != nil || s.warming[key] != nil || s.warmFails[key] >= maxWarmFails {
		return
	}
	for k, w := range s.warms {
		if len(s.warms) < maxWarm {
			break
		}
		delete(s.warms, k)
		w.discard()
	}
	st := &warmStart{done: make(chan struct{})}
	s.warming[key] = st
	s.warmStarts.Add(1)
	go func() {
		defer s.warmStarts.Done()
		exitedOrLater(after, warmDefer)
		s.mu.Lock()
		st.spawned = true
		s.mu.Unlock()
		w, err := s.startWarm(key, env)
		s.mu.Lock()
		defer s.mu.Unlock()
		defer close(st.done)
		delete(s.warming, key)
		switch {
		case err != nil:
			s.warmFails[key]++
		case s.closed || s.warms[key] != nil:
			w.discard()
		default:
			s.warms[key] = w
		}
	}()
}

// warmStart is a key's next warm supervisor, due: spawned once its
// process is being started (guarded by the Sandbox's mu), done closed
// once it started or failed to.
type warmStart struct {
	done    chan struct{}
	spawned bool
}

// startWarm starts a warm supervisor of key: reel sandbox-exec with the
// key's arguments and --warm-fd 4, fd 3 the liveness pipe and fd 4 its
// end of a fresh unix socket pair, in a process group of its own.
func (s *Sandbox) startWarm(key warmKey, env []string) (*warm, error) {
	live, err := s.liveness()
	if err != nil {
		return nil, err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: warm supervisor: socketpair: %w", err)
	}
	ours := os.NewFile(uintptr(pair[0]), "warm supervisor socket")
	theirs := os.NewFile(uintptr(pair[1]), "warm supervisor socket")
	defer theirs.Close()
	fc, err := net.FileConn(ours)
	_ = ours.Close()
	if err != nil {
		return nil, fmt.Errorf("sandbox: warm supervisor: %w", err)
	}
	conn, ok := fc.(*net.UnixConn)
	if !ok {
		_ = fc.Close()
		return nil, errors.New("sandbox: warm supervisor: the socket is not a unix socket")
	}
	args := append(s.supervisorArgs(key, false, "--liveness-fd", "3", "--warm-fd", "4"), "--")
	cmd := exec.Command(s.exe, args...)
	cmd.Env = []string{}
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); slices.Contains(s.warmKeep, k) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Dir = key.root
	attr, err := s.supervisorAttr(key)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Setpgid = true
	cmd.SysProcAttr = attr
	cmd.ExtraFiles = []*os.File{live, theirs}
	if err := cmd.Start(); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("sandbox: starting a warm supervisor: %w", err)
	}
	return &warm{cmd: cmd, conn: conn}, nil
}

// hand gives cmd's command (argv, cmd's environment, directory and
// streams) to w. It reports whether w now runs the command; when not, w
// has been ended and nothing of the command ran.
func (s *Sandbox) hand(key warmKey, w *warm, cmd *exec.Cmd, argv []string) bool {
	ok, failed := handOver(w, cmd, argv)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case ok:
		delete(s.warmFails, key)
	case failed:
		s.warmFails[key]++
	}
	return ok
}

// handOver is hand's exchange: it sends the command and waits for the
// ack, past which the command is w's. A warm supervisor that does not
// ack in time (or at once, when seen stopped, traced or dead) is killed;
// should its ack have crossed the kill, the command may have started and
// w (killed) is the command's process all the same, so that a command
// never runs twice. failed reports a warm supervisor that died or did
// not answer in time (not one that found the workspace changed).
func handOver(w *warm, cmd *exec.Cmd, argv []string) (ok, failed bool) {
	pid := w.cmd.Process.Pid
	if halted(pid) {
		w.discard()
		return false, true
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	payload, good := encodeCommand(cmd.Dir, argv, dedupEnv(env))
	if !good {
		w.discard()
		return false, false
	}
	var files []*os.File
	for _, x := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		f, _ := x.(*os.File)
		if f == nil {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				w.discard()
				return false, false
			}
			defer null.Close()
			f = null
		}
		files = append(files, f)
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	deadline := time.Now().Add(warmWait)
	_ = w.conn.SetDeadline(deadline)
	n, _, err := w.conn.WriteMsgUnix(payload, unix.UnixRights(fds...), nil)
	runtime.KeepAlive(files)
	if err == nil && n < len(payload) {
		_, err = w.conn.Write(payload[n:])
	}
	var b [1]byte
	for err == nil {
		next := time.Now().Add(warmPoll)
		if next.After(deadline) {
			next = deadline
		}
		_ = w.conn.SetReadDeadline(next)
		if n, rerr := w.conn.Read(b[:]); n == 1 {
			break
		} else if !errors.Is(rerr, os.ErrDeadlineExceeded) || time.Now().After(deadline) || halted(pid) {
			err = fmt.Errorf("no answer: %w", rerr)
		}
	}
	if err == nil && b[0] == warmAck {
		_ = w.conn.Close()
		return true, false
	}
	// Not taken: end it, and see whether an ack crossed the kill.
	_ = w.cmd.Process.Kill()
	var info unix.Siginfo
	for {
		werr := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(werr, unix.EINTR) {
			break
		}
	}
	if err != nil && ackedLate(w.conn) {
		_ = w.conn.Close()
		return true, false
	}
	_ = w.conn.Close()
	go func() { _ = w.cmd.Wait() }()
	return false, err != nil
}

// ackedLate reports whether an ack waits unread on conn, without
// waiting for one.
func ackedLate(conn *net.UnixConn) bool {
	_ = conn.SetReadDeadline(time.Time{})
	raw, err := conn.SyscallConn()
	if err != nil {
		return false
	}
	var b [1]byte
	n := 0
	_ = raw.Read(func(fd uintptr) bool {
		n, _ = unix.Read(int(fd), b[:])
		return true
	})
	return n == 1 && b[0] == warmAck
}

// halted reports whether the child pid is stopped or dead, without
// reaping it (waitid WNOWAIT; not /proc, whose dentries would make
// reaping it slow). A warm supervisor cannot be traced: a tracer's stop
// is not shown to the parent, and needs none.
func halted(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WSTOPPED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err != nil {
		return !errors.Is(err, unix.EINTR)
	}
	// si_signo is SIGCHLD when it reported a stop or an exit, 0 when
	// there was none.
	return info.Signo != 0
}

// dedupEnv is env with only the last entry of each name, as exec.Cmd
// passes it.
func dedupEnv(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		last[k] = i
	}
	out := make([]string, 0, len(last))
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if last[k] == i {
			out = append(out, kv)
		}
	}
	return out
}

// encodeCommand is the payload reel sends a warm supervisor: an 8-byte
// little-endian length, then NUL-terminated strings: the directory, the
// number of argv entries, the argv entries, the environment entries. ok
// is false when a string holds a NUL (exec would refuse it anyway).
func encodeCommand(dir string, argv, env []string) (payload []byte, ok bool) {
	fields := append(append([]string{dir, strconv.Itoa(len(argv))}, argv...), env...)
	b := make([]byte, 8, 8+64)
	for _, f := range fields {
		if strings.IndexByte(f, 0) >= 0 {
			return nil, false
		}
		b = append(append(b, f...), 0)
	}
	binary.LittleEndian.PutUint64(b[:8], uint64(len(b)-8))
	return b, true
}
