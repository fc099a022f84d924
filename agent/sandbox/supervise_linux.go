//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// supervise is the supervisor half of Exec: it confines the process (unless
// a.mode is danger-full-access), becomes a child subreaper, starts the
// program at path in a new session and ends as the program ended, after
// killing every remaining descendant. It returns only when the supervision
// could not be set up; the program has not run then.
func supervise(abi int, a execArgs, path string, env []string) error {
	// The program's parent-death signal follows the thread that forked
	// it, and it inherits that thread's bounding set (dropCapabilities
	// empties this thread's): keep that thread for the whole life of the
	// process.
	runtime.LockOSThread()
	if err := confine(abi, a); err != nil {
		return err
	}
	lost, sigs := watchEnd(a)
	return superviseProgram(a, path, env, lost, sigs)
}

// watchEnd returns a channel closed on EOF on a's liveness pipe (nil
// without one) and one that receives SIGTERM, SIGINT and SIGHUP, which
// supervise must get before the program exists, so that no signal meant
// for the tree kills only the supervisor.
func watchEnd(a execArgs) (lost <-chan struct{}, sigs chan os.Signal) {
	if a.livenessFD >= 0 {
		lost = watchLiveness(os.NewFile(uintptr(a.livenessFD), "liveness"))
	}
	sigs = make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	return lost, sigs
}

// confine is the first half of supervise: it marks every inherited
// descriptor from 3 on close-on-exec, checks the liveness fd, becomes a
// child subreaper and confines the process as a.mode demands (the
// workspace's protected paths read-only, a network namespace of its own
// with --network off, no capabilities, the Landlock ruleset). The calling
// thread must be locked.
func confine(abi int, a execArgs) error {
	// Nothing inherited but 0, 1 and 2 reaches the program; in particular
	// not the liveness pipe, whose holders would otherwise keep it open.
	if err := closeOnExecFrom(3); err != nil {
		return fmt.Errorf("%w: %w", ErrSetup, err)
	}
	if a.livenessFD >= 0 {
		if _, err := unix.FcntlInt(uintptr(a.livenessFD), unix.F_GETFD, 0); err != nil {
			return fmt.Errorf("%w: --liveness-fd %d is not open: %w", ErrSetup, a.livenessFD, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("%w: prctl(PR_SET_CHILD_SUBREAPER): %w", ErrSetup, err)
	}
	if a.mode == WorkspaceWrite {
		// Before the capabilities go: the mounts need CAP_SYS_ADMIN.
		if err := shield(a.root); err != nil {
			return fmt.Errorf("%w: mode %s: %w", ErrSetup, a.mode, err)
		}
		// The working directory was entered before the read-only
		// mounts: one inside .git (say) would still reach the writable
		// mount beneath. Enter it again, through them.
		wd, err := os.Getwd()
		if err == nil {
			err = unix.Chdir(wd)
		}
		if err != nil {
			return fmt.Errorf("%w: mode %s: entering the working directory again: %w", ErrSetup, a.mode, err)
		}
	}
	if !a.network && a.mode != DangerFullAccess {
		// Before the capabilities go: a network namespace needs
		// CAP_SYS_ADMIN.
		if err := isolateNetwork(); err != nil {
			return fmt.Errorf("%w: mode %s: %w", ErrSetup, a.mode, err)
		}
	}
	if a.mode != DangerFullAccess {
		// No capability survives into a confined program, even when reel
		// runs as root: without CAP_SYS_PTRACE it cannot read reel's
		// /proc entries (reel is non-dumpable), and so not the key.
		if err := dropCapabilities(); err != nil {
			return fmt.Errorf("%w: mode %s: %w", ErrSetup, a.mode, err)
		}
		if err := restrict(abi, a); err != nil {
			return fmt.Errorf("%w: mode %s: %w", ErrSetup, a.mode, err)
		}
		if !a.network {
			if err := denyTCPBypass(); err != nil {
				return fmt.Errorf("%w: mode %s: %w", ErrSetup, a.mode, err)
			}
		}
	}
	return nil
}

// superviseProgram is the second half of supervise, in a confined
// process: it starts the program at path in a new session and ends as the
// program ended, after killing every remaining descendant, or, killing
// them, on a signal from sigs or when lost is closed (see watchEnd). It
// returns only when the program could not be started.
func superviseProgram(a execArgs, path string, env []string, lost <-chan struct{}, sigs <-chan os.Signal) error {
	var watched *rootWatch
	if a.mode == WorkspaceWrite {
		watched = watchRoot(a.root)
	}
	if a.tty {
		if err := freeTerminal(); err != nil {
			return fmt.Errorf("%w: --tty: %w", ErrSetup, err)
		}
	}
	pid, err := syscall.ForkExec(path, a.argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{
			// A new session: no controlling terminal, so /dev/tty
			// cannot be opened and nothing can be pushed into one —
			// unless --tty gives it its own PTY (stdin) as one.
			Setsid:  true,
			Setctty: a.tty,
			Ctty:    0,
			// Should the supervisor itself be killed, the program goes
			// too.
			Pdeathsig: syscall.SIGKILL,
		},
	})
	if err != nil {
		return fmt.Errorf("%w: starting %s: %w", ErrSetup, path, err)
	}
	exited := make(chan syscall.WaitStatus, 1)
	go reapChildren(pid, exited)
	select {
	case ws := <-exited:
		killTree()
		moved := quarantine(watched)
		if ws.Signaled() {
			dieBySignal(ws.Signal())
		}
		if code := ws.ExitStatus(); code != 0 || !moved {
			exitNow(code)
		}
		// The command "succeeded" at something that was undone.
		exitNow(1)
	case sig := <-sigs:
		killTree()
		quarantine(watched)
		dieBySignal(sig.(syscall.Signal))
	case <-lost:
		killTree()
		quarantine(watched)
		dieBySignal(syscall.SIGHUP)
	}
	return nil // not reached
}

// closeOnExecFrom marks every descriptor from fd on close-on-exec.
func closeOnExecFrom(fd int) error {
	err := unix.CloseRange(uint(fd), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	// Kernels before 5.11: one by one.
	entries, rerr := os.ReadDir("/proc/self/fd")
	if rerr != nil {
		return fmt.Errorf("marking inherited descriptors close-on-exec: %w (close_range: %w)", rerr, err)
	}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < fd {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(n), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("marking descriptor %d close-on-exec: %w", n, err)
		}
	}
	return nil
}

// watchLiveness returns a channel closed when f reads EOF (or fails): the
// process holding the pipe's write end closed it or died.
func watchLiveness(f *os.File) <-chan struct{} {
	lost := make(chan struct{})
	go func() {
		defer close(lost)
		buf := make([]byte, 64)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
		}
	}()
	return lost
}

// reapChildren reaps every child of the process, the program and the
// orphans reparented to this subreaper alike, and sends the program's
// status on exited. It returns when there are no children left.
func reapChildren(program int, exited chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		if pid == program {
			exited <- ws
		}
	}
}

// killTree kills every descendant of the process with SIGKILL, again and
// again, until none is left: a process forked between two rounds is found
// in the next one, reparented to this subreaper if its parent died. The
// zombies are reaped by reapChildren; a descendant is listed until then.
func killTree() {
	delay := time.Millisecond
	for {
		if noChildren() {
			// No child, so no descendant: an orphan is reparented to
			// this subreaper. Nothing to look up in /proc, whose
			// dentries would make reaping this process slow.
			return
		}
		pids := descendants()
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(delay)
		delay = min(2*delay, 20*time.Millisecond)
	}
}

// noChildren reports whether the process has no child at all, not even
// one not yet reaped.
func noChildren() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD)
}

// descendants lists the process's descendants, following
// /proc/PID/task/TID/children from the process itself (or, on a kernel
// without that file, the parent pids of /proc/PID/stat).
func descendants() []int {
	children := childrenFiles
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d/children", os.Getpid(), os.Getpid())); err != nil {
		children = parentScan()
	}
	var out []int
	seen := map[int]bool{}
	queue := []int{os.Getpid()}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children(p) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// childrenFiles lists the children of every thread of pid.
func childrenFiles(pid int) []int {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// parentScan reads the parent pid of every process in /proc and returns a
// lookup of children by parent.
func parentScan() func(int) []int {
	byParent := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parens.
		st := string(b)
		i := strings.LastIndexByte(st, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(st[i+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			byParent[ppid] = append(byParent[ppid], pid)
		}
	}
	return func(pid int) []int { return byParent[pid] }
}

// dieBySignal ends the process by sig, so that its parent sees the same
// "killed by signal" status as the program's: it restores the signal's
// default action (bypassing the Go runtime's handler), unblocks it and
// sends it to the calling thread. No core is dumped. Should the process
// survive (sig does not terminate by default), it exits with 128+sig.
func dieBySignal(sig syscall.Signal) {
	signal.Reset()
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	if sig != syscall.SIGKILL && sig != syscall.SIGSTOP {
		// struct sigaction all zero: SIG_DFL, no flags, empty mask.
		var act [4]uint64
		_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	}
	var set unix.Sigset_t
	set.Val[(int(sig)-1)/64] |= 1 << ((uint(sig) - 1) % 64)
	_ = unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
	_ = unix.Tgkill(os.Getpid(), unix.Gettid(), sig)
	time.Sleep(100 * time.Millisecond)
	exitNow(128 + int(sig))
}

// exitNow ends the supervisor at once with code. It is syscall.Exit, not
// os.Exit: nothing of the supervisor's own may reach the command's output
// after the program ran (a coverage-instrumented build would otherwise try
// to write its counters at exit, be denied by the ruleset, and say so on
// the program's stderr), and the supervisor has nothing to flush.
func exitNow(code int) { syscall.Exit(code) }

// freeTerminal checks that stdin is a terminal that is no process's
// controlling terminal: never one a user's shell holds (reel's own
// terminal, were it stdin), which the program — as root, in
// danger-full-access — could otherwise take over (TIOCSCTTY steals).
func freeTerminal() error {
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err != nil {
		return fmt.Errorf("stdin is not a terminal: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(0, &st); err != nil {
		return fmt.Errorf("stdin: %w", err)
	}
	major, minor := unix.Major(st.Rdev), unix.Minor(st.Rdev)
	// /proc/PID/stat's tty_nr is the kernel's new_encode_dev.
	ttyNr := int64(minor&0xff | major<<8 | (minor&^0xff)<<12)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		// state ppid pgrp session tty_nr
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 4 {
			if nr, err := strconv.ParseInt(f[4], 10, 64); err == nil && nr == ttyNr {
				return fmt.Errorf("stdin is the controlling terminal of process %s", e.Name())
			}
		}
	}
	return nil
}
