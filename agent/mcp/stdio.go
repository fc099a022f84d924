package mcp

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stderrTailBytes is how much of the end of a server's stderr a
// ServerError quotes.
const stderrTailBytes = 2 << 10

// stderrDrainWait bounds the wait for a dead server's stderr to reach end
// of file (a process outside its group may still hold the pipe).
const stderrDrainWait = time.Second

// process is a running stdio server: its own process group, its stdin and
// stdout given to the SDK, its stderr read by a goroutine that forwards it
// to the logger. Another goroutine waits for it from the start, so it is
// reaped whenever it ends: no zombie, whoever ends it.
type process struct {
	cmd      *exec.Cmd
	pid      int
	log      *slog.Logger
	exited   chan struct{} // closed once the process was reaped
	exit     error         // cmd.Wait's result, set before exited is closed
	stopping atomic.Bool   // stop was called: an exit is expected

	stderrR    *os.File
	stderrDone chan struct{}
	stderr     stderrLog

	// reaperLive is the write end of the reaper's pipe (see startReaper);
	// nil when the reaper could not start.
	reaperLive *os.File
}

// startProcess starts the server of cfg. The returned files are the read
// end of its stdout and the write end of its stdin; the SDK connection
// owns and closes them.
func startProcess(cfg *ServerConfig, opts *Options, log *slog.Logger) (p *process, stdout, stdin *os.File, err error) {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = opts.Dir
	cmd.Env = serverEnv(opts.Environ, cfg.Env)
	cmd.SysProcAttr = sysProcAttr()
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w
	}
	inR, inW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	// The child has its copies; ours of its ends would keep the pipes
	// open after it exits.
	_, _, _ = inR.Close(), outW.Close(), errW.Close()
	p = &process{
		cmd: cmd, pid: cmd.Process.Pid, log: log,
		exited: make(chan struct{}), stderrR: errR, stderrDone: make(chan struct{}),
	}
	p.stderr.log = log
	if p.reaperLive, err = startReaper(p.pid); err != nil {
		log.Warn("mcp: the server may outlive reel if reel is killed", "pid", p.pid, "err", err)
		err = nil
	}
	go p.wait()
	go p.readStderr()
	return p, outR, inW, nil
}

// serverEnv is base (nil: os.Environ()) with extra set over it.
func serverEnv(base []string, extra []EnvVar) []string {
	if base == nil {
		base = os.Environ()
	}
	env := append([]string(nil), base...)
	for _, e := range extra {
		prefix := e.Name + "="
		kept := env[:0]
		for _, kv := range env {
			if !strings.HasPrefix(kv, prefix) {
				kept = append(kept, kv)
			}
		}
		env = append(kept, prefix+e.Value)
	}
	return env
}

// wait reaps the process and logs an exit nobody asked for.
func (p *process) wait() {
	p.exit = p.cmd.Wait()
	close(p.exited)
	if !p.stopping.Load() {
		p.log.Warn("mcp: server exited", "pid", p.pid, "status", p.exitStatus())
	}
}

// readStderr forwards the server's stderr to the logger until end of file
// (or until stop closes the pipe).
func (p *process) readStderr() {
	defer close(p.stderrDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := p.stderrR.Read(buf)
		p.stderr.write(buf[:n])
		if err != nil {
			p.stderr.flush()
			return
		}
	}
}

// exitStatus is how the process ended, "" while it runs.
func (p *process) exitStatus() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	if p.exit == nil {
		return "exit status 0"
	}
	return p.exit.Error()
}

// waitExit waits at most d for the process to end and reports whether it
// did.
func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// signal sends sig to the process's whole group. After the leader was
// reaped this still reaches what is left of its group: Linux does not
// reuse an id while a process group of that id exists. (Once the group
// is empty the id is free; only a new group leader given the same id in
// the moment between the reaping and this call could be hit.)
func (p *process) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.pid, sig)
}

// stop ends the process: it waits grace for it to exit by itself (its
// stdin is closed by then), sends SIGTERM to its group and waits grace
// again, then sends SIGKILL. It returns once the process was reaped and
// its stderr read to the end. grace 0 kills at once.
func (p *process) stop(grace time.Duration) {
	p.stopping.Store(true)
	if grace > 0 && !p.waitExit(grace) {
		p.signal(syscall.SIGTERM)
		p.waitExit(grace)
	}
	// Whether or not the leader ended, what is left of its group dies.
	p.signal(syscall.SIGKILL)
	<-p.exited
	// Anything its group forked meanwhile.
	p.signal(syscall.SIGKILL)
	if p.reaperLive != nil {
		_ = p.reaperLive.Close()
	}
	p.finishStderr()
}

// finishStderr waits a moment for stderr to reach end of file, then closes
// it, and logs how much was dropped.
func (p *process) finishStderr() {
	t := time.NewTimer(stderrDrainWait)
	defer t.Stop()
	select {
	case <-p.stderrDone:
	case <-t.C:
		_ = p.stderrR.Close()
		<-p.stderrDone
	}
	_ = p.stderrR.Close()
	p.stderr.finish()
}

// stderrLog keeps and forwards the first MaxStderrBytes of a server's
// stderr, line by line, and counts the rest.
type stderrLog struct {
	log *slog.Logger

	mu      sync.Mutex
	kept    int    // bytes forwarded
	dropped int64  // bytes read beyond MaxStderrBytes
	partial []byte // an unfinished line
	tail    []byte // the last stderrTailBytes read, for errors
	noted   bool   // the limit was announced
	done    bool
}

// write takes one chunk read from the pipe.
func (s *stderrLog) write(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tail = append(s.tail, b...)
	if len(s.tail) > stderrTailBytes {
		s.tail = append(s.tail[:0:0], s.tail[len(s.tail)-stderrTailBytes:]...)
	}
	for len(b) > 0 {
		if s.kept >= MaxStderrBytes {
			s.dropped += int64(len(b))
			if !s.noted {
				s.noted = true
				s.log.Warn("mcp: server stderr limit reached; further output is dropped", "limit", MaxStderrBytes)
			}
			return
		}
		room := MaxStderrBytes - s.kept
		i := bytes.IndexByte(b[:min(len(b), room)], '\n')
		if i < 0 {
			n := min(len(b), room, MaxStderrLineBytes-len(s.partial))
			s.partial = append(s.partial, b[:n]...)
			s.kept += n
			b = b[n:]
			if len(s.partial) >= MaxStderrLineBytes || s.kept >= MaxStderrBytes {
				s.emit()
			}
			continue
		}
		n := min(i, MaxStderrLineBytes-len(s.partial))
		s.partial = append(s.partial, b[:n]...)
		s.kept += n
		if n == i {
			s.kept++ // the newline
			b = b[i+1:]
		} else {
			b = b[n:]
		}
		s.emit()
	}
}

// emit forwards the pending line.
func (s *stderrLog) emit() {
	line := strings.ToValidUTF8(strings.TrimSuffix(string(s.partial), "\r"), "\uFFFD")
	s.partial = s.partial[:0]
	s.log.Info("mcp: server stderr", "line", line)
}

// flush forwards an unfinished last line.
func (s *stderrLog) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.partial) > 0 {
		s.emit()
	}
}

// finish logs, once, how much was dropped.
func (s *stderrLog) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	if s.dropped > 0 {
		s.log.Warn("mcp: server stderr was cut", "keptBytes", s.kept, "droppedBytes", s.dropped)
	}
}

// tailText is the end of what was read, valid UTF-8, trimmed.
func (s *stderrLog) tailText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tail
	for len(t) > 0 && t[0]&0xC0 == 0x80 {
		t = t[1:] // do not start inside a character
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(t), "\uFFFD"))
}

// droppedBytes is how much stderr was dropped so far.
func (s *stderrLog) droppedBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// stdioTransport starts the process on Connect and talks to it through
// the SDK's newline-delimited JSON connection.
type stdioTransport struct {
	cfg  *ServerConfig
	opts *Options
	log  *slog.Logger
	proc *process // set by Connect
}

// Connect implements sdk.Transport.
func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, stdout, stdin, err := startProcess(t.cfg, t.opts, t.log)
	if err != nil {
		return nil, err
	}
	t.proc = p
	return (&sdk.IOTransport{Reader: stdout, Writer: stdin}).Connect(ctx)
}
