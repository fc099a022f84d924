package terminal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// Bounds and timings of a terminal.
const (
	// MaxTerminals is how many terminals one session may have open.
	MaxTerminals = 8
	// ScrollbackBytes and ScrollbackLines bound what a terminal keeps of
	// its output for terminal_read: the newest bytes and lines.
	ScrollbackBytes = 1 << 20
	ScrollbackLines = 10000
	// ViewportBytes bounds what one send keeps of its output (the newest).
	ViewportBytes = 64 << 10
	// MaxResultBytes bounds one tool result's text.
	MaxResultBytes = 64 << 10
	// SendTimeout bounds one send's wait.
	SendTimeout = 30 * time.Second
	// IdleSilence is how long a send waits on silent output before it
	// settles as inferred_idle.
	IdleSilence = 3 * time.Second
	// pollInterval is how often a send looks at the terminal.
	pollInterval = 25 * time.Millisecond
	// probeAfter is how long a send lets the input be taken before a
	// program blocked reading the terminal counts as waiting for input,
	// unless the input is known to be taken sooner (inputTaken).
	probeAfter = 150 * time.Millisecond
	// closeGrace is how long a close waits for the supervisor to end the
	// tree before it kills what is left itself.
	closeGrace = 3 * time.Second
	// rows and cols are the terminal's size.
	rows, cols = 40, 160
)

// Wait reasons of a send.
const (
	WaitStdin   = "stdin_read"
	WaitIdle    = "inferred_idle"
	WaitTimeout = "timeout"
	WaitExit    = "session_exit"
)

// Status is a terminal's top-level process status.
type Status struct {
	// Running is true until the shell (its supervisor) exited.
	Running bool
	// ExitCode is the exit status, nil when a signal ended it.
	ExitCode *int
	// Signal is the signal's name ("SIGKILL") when one ended it.
	Signal string
}

// String renders the status as the results do: "running", "exited
// code=0 signal=null".
func (s Status) String() string {
	if s.Running {
		return "running"
	}
	code, sig := "null", "null"
	if s.ExitCode != nil {
		code = strconv.Itoa(*s.ExitCode)
	}
	if s.Signal != "" {
		sig = s.Signal
	}
	return "exited code=" + code + " signal=" + sig
}

// SendResult is how one send settled.
type SendResult struct {
	// Viewport is the output the send produced (its newest ViewportBytes).
	Viewport string
	// WaitReason is one of the Wait constants.
	WaitReason string
	// Status is the shell's status at settlement.
	Status Status
	// Truncated reports output dropped from the viewport or scrollback.
	Truncated bool
	// by is how the send settled (the by constants).
	by string
}

// ReadResult is one page of the scrollback.
type ReadResult struct {
	Text                           string
	TotalLines, LineBegin, LineEnd int
	Truncated                      bool
}

// Terminal is one persistent shell on a PTY.
type Terminal struct {
	// ID, Name and Type are the terminal's id (pty-N), its optional
	// display name and its backend type.
	ID, Name, Type string
	// Mode is the sandbox mode it was opened under.
	Mode sandbox.Mode

	cmd    *exec.Cmd
	master *os.File
	sid    atomic.Int64 // the shell's session (its pid), once known
	slave  string       // the PTY's slave device path
	slaveF *os.File     // reel's descriptor of it, open while the shell runs
	exited chan struct{}

	sendMu sync.Mutex // held by the send in progress
	readMu sync.Mutex // held by readLoop from a read to its recording

	mu     sync.Mutex
	san    Sanitizer
	scroll *ring
	view   *ring  // the active send's output, nil when none
	outs   uint64 // output appends so far
	// readsAt is what the processes blocked reading the terminal had
	// read (rchar) when the active send wrote its input; nil when none.
	readsAt   map[int]uint64
	lastOut   time.Time
	status    Status
	readDone  bool
	changed   chan struct{} // closed and replaced on output
	closeOnce sync.Once
}

// shellScript starts the interactive shell under the command builder's
// `bash -c`.
const shellScript = "exec bash --noprofile --norc -i"

// start opens a PTY, starts the shell on it in dir with build (nil: bash
// directly, in a new session of its own) and waits for its first prompt.
func start(ctx context.Context, build tools.CommandFunc, base []string, dir string, env ...string) (*Terminal, string, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, "", fmt.Errorf("opening a pseudo-terminal: %w", err)
	}
	// reel keeps the slave open while the shell runs, to see whether a
	// program has taken its input (TIOCINQ); it is closed when the shell
	// exited, so the reads of the master end.
	keep := false
	defer func() {
		if !keep {
			_ = slave.Close()
		}
	}()
	if err := pty.Setsize(master, &pty.Winsize{Rows: rows, Cols: cols}); err != nil {
		_ = master.Close()
		return nil, "", fmt.Errorf("sizing the pseudo-terminal: %w", err)
	}
	var cmd *exec.Cmd
	if build != nil {
		// The supervisor's own life is the terminal's, not the call's.
		cmd, err = build(context.WithoutCancel(ctx), shellScript, dir)
		if err != nil {
			_ = master.Close()
			return nil, "", err
		}
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		// The supervisor in a group of its own, as bash's are; it makes
		// the PTY the shell's controlling terminal (--tty).
		cmd.SysProcAttr.Setpgid = true
	} else {
		cmd = exec.Command("bash", "--noprofile", "--norc", "-i")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
		cmd.Env = base
	}
	if cmd.Dir == "" {
		cmd.Dir = dir
	}
	base = cmd.Env
	if base == nil {
		base = os.Environ()
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		_ = master.Close()
		return nil, "", fmt.Errorf("drawing the terminal's marker nonce: %w", err)
	}
	nonce := hex.EncodeToString(raw[:])
	cmd.Env = append(append(base, env...),
		"TERM=dumb", "PAGER=cat", "GIT_PAGER=cat",
		"PS1="+Prompt,
		`PROMPT_COMMAND=printf "\033]`+promptMarker+`%s;`+nonce+`\007" "$?"; PS1='`+Prompt+`'`,
	)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	if err := cmd.Start(); err != nil {
		_ = master.Close()
		return nil, "", fmt.Errorf("starting the shell: %w", err)
	}
	t := &Terminal{cmd: cmd, master: master, slave: slave.Name(), slaveF: slave, exited: make(chan struct{}), scroll: newRing(ScrollbackBytes),
		lastOut: time.Now(), status: Status{Running: true}, changed: make(chan struct{}), san: Sanitizer{Nonce: nonce}}
	keep = true
	// The start-up send begins before anything is read, so the shell's
	// first output (its prompt) lands in the send's viewport and its
	// sanitizer: read before, it was only in the scrollback, and the
	// start-up waited IdleSilence and returned no output.
	began, err := t.begin("", false)
	go t.readLoop()
	go t.waitLoop()
	if err != nil {
		t.Close()
		return nil, "", fmt.Errorf("starting the shell: %w", err)
	}
	res, err := t.await(ctx, began, true)
	if err == nil && res.WaitReason != WaitStdin && res.WaitReason != WaitIdle {
		err = fmt.Errorf("the shell did not reach its prompt (%s)", res.WaitReason)
	}
	if err != nil {
		t.Close()
		return nil, "", fmt.Errorf("starting the shell: %w", err)
	}
	return t, res.Viewport, nil
}

// readLoop reads the PTY until the last slave descriptor is gone. Each
// read and the recording of what it read happen under readMu, so
// outputDrained can tell output still in flight from none.
func (t *Terminal) readLoop() {
	buf := make([]byte, 32<<10)
	rc, err := t.master.SyscallConn()
	for err == nil {
		// Wait for output without the lock: a blocked read would hold
		// it. The file's reference (Control) keeps the descriptor
		// from being closed and reused meanwhile.
		var perr error
		err = rc.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			_, perr = unix.Poll(fds, -1)
		})
		if err != nil || perr == unix.EINTR {
			continue
		}
		if perr != nil {
			break
		}
		var n int
		var rerr error
		t.readMu.Lock()
		err = rc.Control(func(fd uintptr) { n, rerr = unix.Read(int(fd), buf) })
		if n > 0 {
			t.mu.Lock()
			text, _ := t.san.Push(buf[:n])
			t.appendLocked(text)
			t.mu.Unlock()
		}
		t.readMu.Unlock()
		switch {
		case err != nil:
		case rerr == unix.EAGAIN || rerr == unix.EINTR:
		case rerr != nil:
			err = rerr // EIO: no slave descriptor is left
		case n == 0:
			err = io.EOF
		}
	}
	t.mu.Lock()
	t.appendLocked(t.san.Flush())
	t.readDone = true
	t.notifyLocked()
	t.mu.Unlock()
}

// outputDrained reports whether all the output the PTY's slave side has
// written is recorded: no read is in flight and the master has nothing to
// read. A poll of the master, unlike TIOCINQ, first moves what waits in
// the kernel's flip buffer to the line discipline (n_tty_poll flushes
// it), so output a program wrote before it went to sleep is counted.
func (t *Terminal) outputDrained() bool {
	rc, err := t.master.SyscallConn()
	if err != nil {
		return false
	}
	t.readMu.Lock()
	defer t.readMu.Unlock()
	readable := true
	cerr := rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		readable = err != nil || n > 0 && fds[0].Revents&unix.POLLIN != 0
	})
	return cerr == nil && !readable
}

// appendLocked records output; t.mu is held.
func (t *Terminal) appendLocked(text []byte) {
	if len(text) == 0 {
		return
	}
	t.scroll.Write(text)
	if t.view != nil {
		t.view.Write(text)
	}
	t.lastOut = time.Now()
	t.outs++
	t.notifyLocked()
}

func (t *Terminal) notifyLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// waitLoop reaps the shell (its supervisor) and records how it ended.
func (t *Terminal) waitLoop() {
	err := t.cmd.Wait()
	st := Status{}
	var ee *exec.ExitError
	switch {
	case err == nil:
		zero := 0
		st.ExitCode = &zero
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			st.Signal = signalName(ws.Signal())
		} else {
			code := ee.ExitCode()
			st.ExitCode = &code
		}
	}
	t.mu.Lock()
	t.status = st
	t.notifyLocked()
	t.mu.Unlock()
	_ = t.slaveF.Close()
	close(t.exited)
}

// Status returns the shell's status now.
func (t *Terminal) Status() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// PID is the shell's process id (its supervisor's when confined).
func (t *Terminal) PID() int { return t.cmd.Process.Pid }

// ErrSendActive reports a send refused because another one runs.
var ErrSendActive = errors.New("already has an active send")

// Send writes text (and a carriage return when submit) and waits as the
// package documentation says. Cancelling ctx interrupts the foreground
// process group and returns ctx's error.
func (t *Terminal) Send(ctx context.Context, text string, submit bool) (SendResult, error) {
	return t.send(ctx, text, submit, false)
}

func (t *Terminal) send(ctx context.Context, text string, submit, startup bool) (SendResult, error) {
	began, err := t.begin(text, submit)
	if err != nil {
		return SendResult{}, err
	}
	return t.await(ctx, began, startup)
}

// begin starts a send: it takes the terminal's one send slot (or fails
// with ErrSendActive) and writes the input. A nil error leaves the slot
// held: await releases it.
func (t *Terminal) begin(text string, submit bool) (time.Time, error) {
	if !t.sendMu.TryLock() {
		return time.Time{}, fmt.Errorf("PTY session %s %w", t.ID, ErrSendActive)
	}
	t.mu.Lock()
	if !t.status.Running {
		t.mu.Unlock()
		t.sendMu.Unlock()
		return time.Time{}, fmt.Errorf("PTY session %s has exited", t.ID)
	}
	t.view = newRing(ViewportBytes)
	t.san.Reset()
	t.mu.Unlock()
	input := text
	if submit {
		input += "\r"
	}
	// Taken before the write: a program that reads after it took input.
	readsAt := t.readers(len(input))
	t.mu.Lock()
	t.readsAt = readsAt
	began := time.Now()
	t.lastOut = began
	t.mu.Unlock()
	if input != "" {
		if _, err := t.master.Write([]byte(input)); err != nil {
			t.endSend()
			return time.Time{}, fmt.Errorf("writing to PTY session %s: %w", t.ID, err)
		}
	}
	return began, nil
}

// endSend releases the send slot.
func (t *Terminal) endSend() {
	t.mu.Lock()
	t.view = nil
	t.mu.Unlock()
	t.sendMu.Unlock()
}

// How a send settled (SendResult.by), for tests: the reason alone does not
// tell a prompt from a program waiting for input.
const (
	// byPrompt: the shell printed its nonce marker and prompt and sits
	// in its read of the terminal with nothing queued either way.
	byPrompt = "prompt"
	// byPromptQuiet: marker and prompt, the shell in the foreground and
	// pollInterval of silence, where the shell's state cannot be read.
	byPromptQuiet = "prompt-quiet"
	// byProbe: a program of the foreground group blocked reading the
	// terminal, seen twice pollInterval apart.
	byProbe = "probe"
	// byTaken: the send's input taken (inputTaken) and a program of the
	// foreground group asleep in a read of the terminal again.
	byTaken = "taken"
	byIdle  = "idle"
	byLimit = "timeout"
	byExit  = "exit"
)

// promptRetry is the first pause before a send looks again at a shell
// that printed its prompt but is not in its read yet; it doubles up to
// pollInterval.
const promptRetry = 200 * time.Microsecond

// sendWait is what a send's wait remembers between looks.
type sendWait struct {
	began   time.Time
	startup bool
	// waitSince is when a program was first seen waiting for input
	// (zero: not seen at the last look).
	waitSince time.Time
	// looks counts the looks since the last output (outs: the output
	// count then); the pause before the next look doubles with it.
	looks int
	outs  uint64
}

// soon is the pause before the next look at a state only /proc tells:
// promptRetry, doubling with each look since the last output, up to
// pollInterval.
func (w *sendWait) soon(outs uint64) time.Duration {
	if outs != w.outs {
		w.outs, w.looks = outs, 0
	}
	d := min(promptRetry<<min(w.looks, 10), pollInterval)
	w.looks++
	return d
}

// await waits for the send begun at began to settle and releases its slot.
// It looks when output arrives, when the shell exits, and when the next
// look is due (a deadline, or a program's state that only /proc tells).
func (t *Terminal) await(ctx context.Context, began time.Time, startup bool) (SendResult, error) {
	defer t.endSend()
	w := &sendWait{began: began, startup: startup}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		t.mu.Lock()
		changed := t.changed
		t.mu.Unlock()
		reason, by, next := t.settled(w)
		if reason != "" {
			r := t.result(reason)
			r.by = by
			return r, nil
		}
		timer.Reset(next)
		select {
		case <-ctx.Done():
			t.interrupt()
			return SendResult{}, ctx.Err()
		case <-changed:
		case <-timer.C:
		case <-t.exited:
		}
	}
}

// takeOutput returns the active send's output since the previous take and
// whether some of it was dropped, and empties it (a background send's
// job_output reads).
func (t *Terminal) takeOutput() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.view == nil {
		return "", false
	}
	out, dropped := string(t.view.Bytes()), t.view.dropped
	t.view.Reset()
	return out, dropped
}

// settled returns why the send is done and how ("" while it is not), and
// when it must be looked at again at the latest if nothing is printed.
func (t *Terminal) settled(w *sendWait) (reason, by string, next time.Duration) {
	now := time.Now()
	t.mu.Lock()
	running, idle, atPrompt, seen, outs := t.status.Running, now.Sub(t.lastOut), t.san.AtPrompt(), t.scroll.len() > 0, t.outs
	t.mu.Unlock()
	if !running {
		return WaitExit, byExit, 0
	}
	elapsed := now.Sub(w.began)
	next = SendTimeout - elapsed
	due := func(d time.Duration) { next = min(next, max(d, 0)) }
	atPrompt = atPrompt && t.foreground() == t.shellSession()
	if atPrompt {
		switch reading, known := t.shellReading(); {
		case reading:
			// All the shell printed before its read is recorded
			// (outputDrained), and nothing since the prompt was seen:
			// the prompt is the last thing it printed.
			t.mu.Lock()
			still := t.outs == outs && t.san.AtPrompt()
			t.mu.Unlock()
			if still {
				return WaitStdin, byPrompt, 0
			}
			due(0)
		case known:
			// Printed its prompt, not in its read yet (or input is
			// queued and will be echoed): look again soon.
			due(w.soon(outs))
		case idle >= pollInterval:
			return WaitStdin, byPromptQuiet, 0
		default:
			due(pollInterval - idle)
		}
	}
	// At the prompt, the shell's own read is the prompt's to judge.
	switch {
	case atPrompt:
	case !w.startup && t.inputTaken() && t.waitingForInput() && t.outputDrained():
		// The send's input was taken (a reader of the terminal read
		// since the write, nothing queued — flip buffer included —, line
		// mode) and a program of the foreground group sleeps in a read
		// of the terminal again, with all output recorded: it waits
		// for more input and has printed what it will until then.
		// When that program is the shell back at its prompt (recorded
		// by the drain), these are the prompt's conditions.
		t.mu.Lock()
		back := t.san.AtPrompt()
		t.mu.Unlock()
		if back && t.foreground() == t.shellSession() {
			return WaitStdin, byPrompt, 0
		}
		return WaitStdin, byTaken, 0
	case !w.startup && idle >= pollInterval && elapsed >= probeAfter && t.waitingForInput() && t.outputDrained():
		// Twice, pollInterval apart, after pollInterval of silence (the
		// reference's rule): a program just woken by the input is
		// still in its read for a moment. And only with all output
		// recorded (outputDrained): what a program wrote before its
		// read can still be in the kernel's flip buffer, and on a
		// loaded machine for longer than the rule's 50 ms.
		if w.waitSince.IsZero() {
			w.waitSince = now
		}
		if now.Sub(w.waitSince) >= pollInterval {
			return WaitStdin, byProbe, 0
		}
		due(pollInterval - now.Sub(w.waitSince))
	case !w.startup:
		w.waitSince = time.Time{}
		// A program may take the input or block reading the terminal
		// without printing: only /proc tells, so look again soon, less
		// and less often while nothing is printed.
		due(w.soon(outs))
		if elapsed < probeAfter {
			due(probeAfter - elapsed)
		}
	}
	if seen || !w.startup {
		switch {
		case idle < IdleSilence:
			due(IdleSilence - idle)
		case t.outputDrained():
			return WaitIdle, byIdle, 0
		default:
			// Silent only because output waits in the flip buffer.
			due(w.soon(outs))
		}
	}
	if elapsed >= SendTimeout {
		return WaitTimeout, byLimit, 0
	}
	return "", "", next
}

// shellReading reports whether the shell itself sits in its read of the
// terminal with no input queued and all its output read by reel (known:
// whether its state could be read at all).
func (t *Terminal) shellReading() (reading, known bool) {
	sid := t.shellSession()
	if sid <= 0 {
		return false, false
	}
	if _, err := os.ReadFile("/proc/" + strconv.Itoa(sid) + "/syscall"); err != nil {
		return false, false
	}
	st, ok := readStat(sid)
	if !ok {
		return false, false
	}
	// Asleep (S) in a read of the terminal: bash's readline echoes what
	// it took before it reads again, so with nothing queued either way
	// it has printed all it will until new input comes.
	reading = st.state == "S" && t.blockedOnTTY(sid) && !t.pendingInput() && t.outputDrained()
	return reading, true
}

// result is the settled send's result.
func (t *Terminal) result(reason string) SendResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	return SendResult{Viewport: string(t.view.Bytes()), WaitReason: reason, Status: t.status,
		Truncated: t.view.dropped || t.scroll.dropped}
}

// Read returns a page of the scrollback: count lines (500 when 0) ending
// offset lines before the newest.
func (t *Terminal) Read(offset, count int) ReadResult {
	t.mu.Lock()
	text := string(t.scroll.Bytes())
	dropped := t.scroll.dropped
	t.mu.Unlock()
	var lines []string
	if text != "" {
		lines = strings.Split(text, "\n")
	}
	if len(lines) > ScrollbackLines {
		lines, dropped = lines[len(lines)-ScrollbackLines:], true
	}
	total := len(lines)
	if offset >= total {
		return ReadResult{TotalLines: total, LineBegin: offset, LineEnd: offset, Truncated: dropped}
	}
	end := total - offset
	begin := max(0, end-count)
	page := strings.Join(lines[begin:end], "\n")
	cut := false
	if len(page) > ViewportBytes {
		page, cut = utf8Tail(page, ViewportBytes), true
	}
	n := 0
	if page != "" {
		n = strings.Count(page, "\n") + 1
	}
	return ReadResult{Text: page, TotalLines: total, LineBegin: offset, LineEnd: offset + n, Truncated: dropped || cut}
}

// utf8Tail is the last at most n bytes of s, starting at a character.
func utf8Tail(s string, n int) string {
	s = s[len(s)-n:]
	for len(s) > 0 && s[0]&0xc0 == 0x80 {
		s = s[1:]
	}
	return s
}

// shellSession is the PTY's session: the shell's pid (its process group).
func (t *Terminal) shellSession() int {
	if sid := t.sid.Load(); sid != 0 {
		return int(sid)
	}
	sid, err := unix.IoctlGetInt(int(t.master.Fd()), unix.TIOCGSID)
	if err != nil {
		return 0
	}
	t.sid.Store(int64(sid))
	return sid
}

// foreground is the PTY's foreground process group, 0 when unknown.
func (t *Terminal) foreground() int {
	pg, err := unix.IoctlGetInt(int(t.master.Fd()), unix.TIOCGPGRP)
	if err != nil {
		return 0
	}
	return pg
}

// interruptGrace bounds how long an interrupt watches for a command that
// took the foreground after its first SIGINT.
const interruptGrace = time.Second

// interrupt sends SIGINT to the foreground process group, and again to a
// command that takes the foreground afterwards, for up to interruptGrace:
// a SIGINT that lands while the shell still reads the line, or in the
// moment between its fork and the command's exec, is the shell's and the
// command would run on. A group is signalled again only when it is a new
// one or its leader exec'd since, so a program that catches SIGINT and
// stays (a REPL) gets it once. It returns once a signalled command gave
// the foreground back to the shell, or the terminal exited.
func (t *Terminal) interrupt() {
	type target struct {
		pg  int
		exe string
	}
	leader := func(pg int) target {
		exe, _ := os.Readlink("/proc/" + strconv.Itoa(pg) + "/exe")
		return target{pg, exe}
	}
	var last target
	if pg, err := t.Signal(syscall.SIGINT); err == nil {
		last = leader(pg)
	}
	deadline := time.NewTimer(interruptGrace)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-t.exited:
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
		fg := t.foreground()
		shell := t.shellSession()
		if fg <= 0 {
			continue
		}
		if fg == shell {
			if last.pg != 0 && last.pg != shell {
				return // the command ended; the shell has the terminal
			}
			continue
		}
		if cur := leader(fg); cur != last {
			if err := syscall.Kill(-fg, syscall.SIGINT); err == nil {
				last = cur
			}
		}
	}
}

// ErrShellKill reports a SIGKILL aimed at the shell itself.
var ErrShellKill = errors.New("refusing to SIGKILL the terminal shell; close the terminal session instead")

// Signal sends sig to the PTY's foreground process group and returns it.
// SIGKILL is refused while the shell itself is in the foreground.
func (t *Terminal) Signal(sig syscall.Signal) (int, error) {
	select {
	case <-t.exited:
		return 0, fmt.Errorf("PTY session %s has exited", t.ID)
	default:
	}
	fg := t.foreground()
	if fg <= 0 {
		return 0, fmt.Errorf("cannot resolve the foreground process group of PTY session %s", t.ID)
	}
	if sig == syscall.SIGKILL && fg == t.shellSession() {
		return 0, ErrShellKill
	}
	if err := syscall.Kill(-fg, sig); err != nil {
		return 0, fmt.Errorf("signalling process group %d: %w", fg, err)
	}
	return fg, nil
}

// Close ends the terminal's whole process tree and waits for it: SIGTERM to
// the supervisor, which kills every descendant; what is left after
// closeGrace (or without a supervisor) is killed by session. It is
// idempotent.
func (t *Terminal) Close() {
	t.closeOnce.Do(func() {
		sid := t.shellSession()
		_ = t.cmd.Process.Signal(syscall.SIGTERM)
		if !t.cmd.SysProcAttr.Setsid {
			// Supervised: the supervisor kills the tree and exits.
			select {
			case <-t.exited:
			case <-time.After(closeGrace):
			}
		}
		if sid > 0 {
			killSession(sid)
		}
		_ = t.cmd.Process.Kill()
		<-t.exited
		_ = t.master.Close()
	})
}

// killSession kills every process of session sid until none is left.
func killSession(sid int) {
	for range 100 {
		pids := sessionMembers(sid)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sessionMembers lists the live processes whose session is sid.
func sessionMembers(sid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if ok && st.session == sid && st.state != "Z" && st.state != "X" {
			out = append(out, pid)
		}
	}
	return out
}

// procStat is what is read of /proc/PID/stat.
type procStat struct {
	state              string
	pgrp, session, tty int
}

func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	// state ppid pgrp session tty_nr
	if len(f) < 5 {
		return procStat{}, false
	}
	pg, _ := strconv.Atoi(f[2])
	se, _ := strconv.Atoi(f[3])
	tt, _ := strconv.Atoi(f[4])
	return procStat{state: f[0], pgrp: pg, session: se, tty: tt}, true
}

func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return "SIG" + strconv.Itoa(int(s))
}

// waitCalls are the syscall numbers (/proc/PID/syscall) of the reads and
// the waits a program blocked on its terminal sits in, on this machine's
// architecture.
func waitCalls() (reads, polls []int) {
	switch runtime.GOARCH {
	case "amd64":
		return []int{0, 19}, []int{7, 23, 232, 270, 271, 281}
	case "arm64":
		return []int{63, 65}, []int{22, 72, 73}
	}
	return nil, nil
}

// waitingForInput reports whether a process of the foreground process
// group is blocked reading the terminal (or waiting for it to be
// readable).
func (t *Terminal) waitingForInput() bool {
	fg := t.foreground()
	if fg <= 0 || t.pendingInput() {
		return false
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// Asleep (S): a program woken by the input is runnable (R)
		// while still in its read.
		if st, ok := readStat(pid); !ok || st.pgrp != fg || st.state != "S" {
			continue
		}
		if t.blockedOnTTY(pid) {
			return true
		}
	}
	return false
}

// blockedOnTTY reports whether pid sits in a read of the PTY or a wait
// with the PTY as its stdin.
func (t *Terminal) blockedOnTTY(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return false
	}
	nr, err := strconv.Atoi(f[0])
	if err != nil {
		return false
	}
	fdOf := func(fd int64) bool {
		l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.FormatInt(fd, 10))
		return err == nil && l == t.slave
	}
	reads, polls := waitCalls()
	switch {
	case slices.Contains(reads, nr):
		fd, err := strconv.ParseInt(strings.TrimPrefix(f[1], "0x"), 16, 64)
		return err == nil && fdOf(fd)
	case slices.Contains(polls, nr):
		return fdOf(0)
	}
	return false
}

// maxTakenInput bounds the input whose taking inputTaken judges: the line
// discipline receives it in one pass (its buffer is 4096 bytes).
const maxTakenInput = 4095

// readers returns what each process blocked reading the terminal (as
// waitingForInput finds them) has read so far (rchar of /proc/PID/io), for
// a send of n bytes of input; nil when the input is too long for
// inputTaken to judge or no reader is found.
func (t *Terminal) readers(n int) map[int]uint64 {
	fg := t.foreground()
	if n == 0 || n > maxTakenInput || fg <= 0 {
		return nil
	}
	var reads map[int]uint64
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); !ok || st.pgrp != fg || st.state != "S" || !t.blockedOnTTY(pid) {
			continue
		}
		if c, ok := readCount(pid); ok {
			if reads == nil {
				reads = map[int]uint64{}
			}
			reads[pid] = c
		}
	}
	return reads
}

// inputTaken reports whether the active send's input is known to be
// taken: the terminal is in canonical mode (a read returns only whole
// lines, and the send's input is received in one pass), nothing waits in
// its input queue, reel has read all the output there is, and a process
// that was blocked reading the terminal when the input was written has
// read since. A program then blocked reading the terminal waits for more
// input, not for the send's, and need not be given probeAfter.
func (t *Terminal) inputTaken() bool {
	t.mu.Lock()
	before := t.readsAt
	t.mu.Unlock()
	if before == nil || !t.canonical() || t.pendingInput() || !t.outputDrained() {
		return false
	}
	for pid, c := range before {
		if now, ok := readCount(pid); ok && now > c {
			return true
		}
	}
	return false
}

// canonical reports whether the terminal's line discipline is in canonical
// (line) mode.
func (t *Terminal) canonical() bool {
	tio, err := unix.IoctlGetTermios(int(t.master.Fd()), unix.TCGETS)
	return err == nil && tio.Lflag&unix.ICANON != 0
}

// readCount is the bytes pid has read (rchar of /proc/PID/io).
func readCount(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0, false
	}
	v, ok := strings.CutPrefix(string(b), "rchar: ")
	if !ok {
		return 0, false
	}
	v, _, _ = strings.Cut(v, "\n")
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

// pendingInput reports whether input written to the terminal waits in
// its input queue, unread by any program (TIOCINQ on the slave). A poll of
// the slave first moves what waits in the kernel's flip buffer to the line
// discipline (n_tty_poll flushes it): input reel wrote reaches the slave's
// queue through it, later, and until then TIOCINQ says 0.
func (t *Terminal) pendingInput() bool {
	rc, err := t.slaveF.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	cerr := rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if k, perr := unix.Poll(fds, 0); perr == nil && k > 0 && fds[0].Revents&unix.POLLIN != 0 {
			n = 1
			return
		}
		n, err = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	})
	return cerr == nil && err == nil && n > 0
}
