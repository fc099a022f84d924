package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// DefaultExecMaxOutput is how many bytes of each of stdout and stderr
// Exec keeps when ExecSpec.MaxOutput is 0 or less.
const DefaultExecMaxOutput = 1 << 20

// ExecSpec is a command Exec runs.
type ExecSpec struct {
	// Script is the bash script to run.
	Script string
	// Workdir is the directory to run in; a relative one (or empty: the
	// agent's current directory) is made absolute first. It must exist.
	Workdir string
	// Stdin is written to the command's standard input, which is then
	// closed; empty means an empty standard input. A command that does not
	// read all of it is not an error.
	Stdin []byte
	// Env holds extra KEY=VALUE entries, added after (and overriding) the
	// built command's environment: os.Environ() when the built command
	// leaves its Env nil.
	Env []string
	// Timeout bounds the command's run; 0 or less means no limit beyond
	// ctx.
	Timeout time.Duration
	// MaxOutput is how many bytes of each stream are kept (0 or less:
	// DefaultExecMaxOutput); the rest is read, counted and replaced by a
	// note.
	MaxOutput int
}

// ExecResult is how a command Exec ran ended.
type ExecResult struct {
	// Exited reports a normal exit; ExitCode is then valid. A death by a
	// signal, a timeout or a cancel is not one.
	Exited bool
	// ExitCode is the exit status when Exited, else -1.
	ExitCode int
	// Stdout and Stderr are what the command wrote to each stream, each
	// cut to ExecSpec.MaxOutput bytes (never inside a UTF-8 character) and
	// then ended by a note "\n[… N more bytes of stdout not kept]". Bytes
	// that are not valid UTF-8 are kept as they are.
	Stdout, Stderr string
	// TimedOut reports that ExecSpec.Timeout ended the command.
	TimedOut bool
	// Cancelled reports that ctx ended the command.
	Cancelled bool
}

// Exec runs spec.Script to its end with separate stdin, stdout and stderr,
// for short commands such as hooks. build makes the command (the sandbox
// wrapper the bash tool uses); nil means "bash -c script" in the workdir.
//
// The command runs in its own process group. On timeout or when ctx is
// done, the group is asked to end (SIGTERM) and killed with SIGKILL if it
// has not ended a moment later; once the command exited, whatever is left
// of its group is killed, and its output is read for at most a moment
// more, so a process that escaped the group while holding a pipe open
// cannot hold Exec up.
//
// A command that ran is reported in the ExecResult, however it ended, with
// a nil error. The error is for a command that did not start: ctx done
// already, a workdir that does not exist, build failing, or the start
// failing.
func Exec(ctx context.Context, build CommandFunc, spec ExecSpec) (ExecResult, error) {
	label := execLabel(spec.Script)
	workdir, err := filepath.Abs(spec.Workdir)
	if err != nil {
		return ExecResult{}, fmt.Errorf("tools: exec: %s: workdir %q: %w", label, spec.Workdir, err)
	}
	if err := ctx.Err(); err != nil {
		return ExecResult{}, fmt.Errorf("tools: exec: %s in %s: not started: %w", label, workdir, err)
	}
	if fi, err := os.Stat(workdir); err != nil {
		return ExecResult{}, fmt.Errorf("tools: exec: %s: workdir: %w", label, err)
	} else if !fi.IsDir() {
		return ExecResult{}, fmt.Errorf("tools: exec: %s: workdir %s: %w", label, workdir, syscall.ENOTDIR)
	}

	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if spec.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, spec.Timeout)
	}
	defer cancel()
	limit := spec.MaxOutput
	if limit <= 0 {
		limit = DefaultExecMaxOutput
	}
	stdout := &keptOutput{name: "stdout", limit: limit}
	stderr := &keptOutput{name: "stderr", limit: limit}
	p, err := startExec(runCtx, build, spec, workdir, stdout, stderr)
	if err != nil {
		return ExecResult{}, fmt.Errorf("tools: exec: %s in %s: %w", label, workdir, err)
	}

	// As bash's Run does: end the group when runCtx is done first, and
	// say whether ctx (not the timeout) was the reason.
	exited := make(chan struct{})
	ended := make(chan endReason, 1)
	go func() {
		select {
		case <-runCtx.Done():
			p.job.terminate()
			if ctx.Err() != nil {
				ended <- endCancelled
			} else {
				ended <- endTimedOut
			}
		case <-exited:
			ended <- endExited
		}
	}()
	state, waitErr := p.job.wait()
	close(exited)
	why := <-ended
	p.finish()
	if state == nil {
		return ExecResult{}, fmt.Errorf("tools: exec: %s in %s: waiting: %w", label, workdir, waitErr)
	}

	res := ExecResult{
		ExitCode:  -1,
		Stdout:    stdout.String(),
		Stderr:    stderr.String(),
		TimedOut:  why == endTimedOut,
		Cancelled: why == endCancelled,
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Exited() && why == endExited {
		res.Exited, res.ExitCode = true, ws.ExitStatus()
	}
	return res, nil
}

// endReason is what ended an Exec command.
type endReason int

const (
	endExited    endReason = iota // it ended by itself
	endTimedOut                   // ExecSpec.Timeout ended it
	endCancelled                  // ctx ended it
)

// execLabel names a script in Exec's errors: its first line, shortened.
func execLabel(script string) string {
	first, _, more := strings.Cut(strings.TrimSpace(script), "\n")
	if len(first) > 60 {
		first, more = truncateRunes(first, 60), true
	}
	if more {
		first += "…"
	}
	return fmt.Sprintf("%q", first)
}

// execProcess is a started Exec command: its job (process group control,
// shared with bash) and the goroutines that feed its stdin and read its
// stdout and stderr.
type execProcess struct {
	job     *job
	stdin   *os.File // the write end of the stdin pipe; nil for empty stdin
	stdout  *os.File // the read ends of the output pipes
	stderr  *os.File
	fed     chan struct{} // closed once stdin was written and closed
	readOut chan struct{} // closed once stdout was read to its end
	readErr chan struct{} // closed once stderr was read to its end
}

// startExec builds the command through bash's Env.command (so build's
// command gets the same treatment: Dir, its own process group) and starts
// it with a pipe on each of its three streams, or /dev/null as its stdin
// when spec.Stdin is empty.
func startExec(ctx context.Context, build CommandFunc, spec ExecSpec, workdir string, stdout, stderr io.Writer) (*execProcess, error) {
	env := &Env{}
	if build != nil {
		env.Exec = func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
			cmd, err := build(ctx, script, workdir)
			if err == nil && cmd == nil {
				err = errors.New("the command hook returned no command")
			}
			if err != nil {
				return nil, fmt.Errorf("building the command: %w", err)
			}
			return cmd, nil
		}
	}
	var files []*os.File // every pipe end, closed if the start fails
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func(what string) (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("making the %s pipe: %w", what, err)
		}
		files = append(files, r, w)
		return r, w, nil
	}
	outR, outW, err := pipe("stdout")
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe("stderr")
	if err != nil {
		closeAll()
		return nil, err
	}
	var inR, inW *os.File
	if len(spec.Stdin) > 0 {
		if inR, inW, err = pipe("stdin"); err != nil {
			closeAll()
			return nil, err
		}
	}
	cmd, err := env.command(ctx, spec.Script, workdir, outW)
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stderr = errW
	if inR != nil {
		cmd.Stdin = inR
	}
	if len(spec.Env) > 0 {
		base := cmd.Env
		if base == nil {
			base = os.Environ()
		}
		cmd.Env = mergeEnv(base, spec.Env)
	}
	p := &execProcess{
		job:    &job{cmd: cmd, ended: make(chan struct{})},
		stdin:  inW,
		stdout: outR, stderr: errR,
		fed:     make(chan struct{}),
		readOut: make(chan struct{}), readErr: make(chan struct{}),
	}
	if cmd.Cancel != nil {
		// Made with exec.CommandContext: end it the way bash does, never
		// with a bare SIGKILL of the leader that would leave its group.
		cmd.Cancel = func() error {
			p.job.signal(syscall.SIGTERM)
			return nil
		}
	}
	err = StartCommand(cmd)
	// The child's ends are the child's now.
	_ = outW.Close()
	_ = errW.Close()
	if inR != nil {
		_ = inR.Close()
	}
	if err != nil {
		_ = outR.Close()
		_ = errR.Close()
		if inW != nil {
			_ = inW.Close()
		}
		return nil, fmt.Errorf("starting: %w", err)
	}
	go p.copy(outR, stdout, p.readOut)
	go p.copy(errR, stderr, p.readErr)
	if inW != nil {
		go func() {
			defer close(p.fed)
			// EPIPE: the command did not read it all; a deadline: it
			// exited (see finish). Neither is the caller's concern.
			_, _ = inW.Write(spec.Stdin)
			_ = inW.Close()
		}()
	} else {
		close(p.fed)
	}
	return p, nil
}

// copy reads r to w until EOF or the drain deadline, then closes r and
// done.
func (p *execProcess) copy(r *os.File, w io.Writer, done chan struct{}) {
	defer close(done)
	buf := make([]byte, 32<<10)
	_, _ = io.CopyBuffer(w, r, buf)
	_ = r.Close()
}

// finish, once the command's leader was reaped (and its group killed),
// stops feeding stdin at once, bounds reading the output pipes by
// drainGrace, and waits for those goroutines.
func (p *execProcess) finish() {
	if p.stdin != nil {
		_ = p.stdin.SetWriteDeadline(time.Now())
	}
	deadline := time.Now().Add(drainGrace)
	_ = p.stdout.SetReadDeadline(deadline)
	_ = p.stderr.SetReadDeadline(deadline)
	<-p.fed
	<-p.readOut
	<-p.readErr
}

// mergeEnv returns base with each KEY=VALUE entry of extra replacing the
// entry of base with the same key, or appended when base has none.
func mergeEnv(base, extra []string) []string {
	out := make([]string, len(base), len(base)+len(extra))
	copy(out, base)
	at := make(map[string]int, len(base)+len(extra))
	for i, kv := range out {
		k, _, _ := strings.Cut(kv, "=")
		at[k] = i // the last one wins, as in exec.Cmd
	}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := at[k]; ok {
			out[i] = kv
			continue
		}
		at[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// keptOutput takes one stream of a command's output: its first limit
// bytes are kept, the rest only counted. It is written by one goroutine
// and read once that one is done.
type keptOutput struct {
	name    string // "stdout" or "stderr", for the note
	limit   int
	buf     []byte
	dropped int64
}

// Write keeps what fits and counts the rest. It never fails, so the
// command is never blocked by a full pipe.
func (k *keptOutput) Write(p []byte) (int, error) {
	n := len(p)
	if room := k.limit - len(k.buf); room > 0 {
		take := min(room, len(p))
		k.buf = append(k.buf, p[:take]...)
		p = p[take:]
	}
	k.dropped += int64(len(p))
	return n, nil
}

// String returns the kept output; when some was not kept, it is cut on a
// character boundary and followed by a note saying how much is missing.
func (k *keptOutput) String() string {
	if k.dropped == 0 {
		return string(k.buf)
	}
	kept := trimPartialRune(k.buf)
	more := k.dropped + int64(len(k.buf)-len(kept))
	return fmt.Sprintf("%s\n[… %d more bytes of %s not kept]", kept, more, k.name)
}
