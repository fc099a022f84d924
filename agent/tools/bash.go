package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Limits of the bash tool.
const (
	// DefaultBashTimeout is how long a command may run without a timeout
	// argument, in milliseconds.
	DefaultBashTimeout = 120000
	// MaxBashTimeout caps the timeout argument, in milliseconds.
	MaxBashTimeout = 600000
	// MaxOutputBytes is the most command output bash shows; longer output
	// is cut to its tail and spilled whole.
	MaxOutputBytes = 30000
)

// BashArgs are the arguments of the bash tool.
type BashArgs struct {
	// Command is the bash script to run.
	Command string `json:"command"`
	// Description says in a few words what the command does.
	Description string `json:"description,omitempty"`
	// Workdir is the directory to run in, relative to the cwd; empty means
	// the cwd.
	Workdir string `json:"workdir,omitempty"`
	// Timeout is in milliseconds; 0 or less means DefaultBashTimeout, and
	// it is capped at MaxBashTimeout.
	Timeout int `json:"timeout,omitempty"`
	// RunInBackground starts the command and returns at once with its pid
	// and the file its output goes to.
	RunInBackground bool `json:"run_in_background,omitempty"`
	// SandboxPermissions asks for a wider sandbox mode for this call; the
	// agent layer handles it.
	SandboxPermissions string `json:"sandbox_permissions,omitempty"`
	// Justification explains SandboxPermissions to the user.
	Justification string `json:"justification,omitempty"`
}

// ParseBashArgs decodes the bash tool's arguments.
func ParseBashArgs(raw json.RawMessage) (BashArgs, error) {
	var a BashArgs
	o, err := decodeArgs("bash", raw)
	if err != nil {
		return a, err
	}
	if a.Command, err = o.str("command", true); err != nil {
		return a, err
	}
	if a.Description, err = o.str("description", false); err != nil {
		return a, err
	}
	if a.Workdir, err = o.str("workdir", false); err != nil {
		return a, err
	}
	if a.Timeout, err = o.integer("timeout"); err != nil {
		return a, err
	}
	if a.RunInBackground, err = o.boolean("run_in_background"); err != nil {
		return a, err
	}
	if a.SandboxPermissions, err = o.str("sandbox_permissions", false); err != nil {
		return a, err
	}
	if a.Justification, err = o.str("justification", false); err != nil {
		return a, err
	}
	return a, nil
}

// TimeoutMS returns the effective timeout in milliseconds.
func (a BashArgs) TimeoutMS() int {
	switch {
	case a.Timeout <= 0:
		return DefaultBashTimeout
	case a.Timeout > MaxBashTimeout:
		return MaxBashTimeout
	}
	return a.Timeout
}

// Bash is the bash tool: it runs a script with bash -c (or through
// Env.Exec) in its own process group.
type Bash struct {
	// Escalation adds sandbox_permissions and justification to the schema;
	// set it when a confining sandbox is active.
	Escalation bool
}

var _ Tool = Bash{}

// Name returns "bash".
func (Bash) Name() string { return "bash" }

// Schema returns the bash tool's schema.
func (b Bash) Schema() Schema {
	params := `{
		"type": "object",
		"properties": {
			"command": {"type": "string", "description": "The bash script to run."},
			"description": {"type": "string", "description": "What the command does, in 5-10 words."},
			"workdir": {"type": "string", "description": "Directory to run in, relative to the working directory (default: the working directory)."},
			"timeout": {"type": "integer", "description": "Timeout in milliseconds (default 120000, max 600000).", "minimum": 1, "maximum": 600000},
			"run_in_background": {"type": "boolean", "description": "Start the command and return at once with its pid and the file its output is written to."}` +
		escalationProperties(b.Escalation) + `
		},
		"required": ["command"]
	}`
	return Schema{
		Name: "bash",
		Description: "Run a bash script and return its combined stdout and stderr. " +
			"A non-zero exit status is reported as [exit code N]. Output longer than 30000 bytes is cut to its end, and the full output is saved to a file whose path is given. " +
			"Commands are killed after the timeout. Use run_in_background for servers and other long-running processes.",
		Parameters: compactJSON(params),
	}
}

// describeBash returns the title of a bash call.
func describeBash(a BashArgs) string {
	if a.Description != "" {
		return a.Description
	}
	first, _, _ := strings.Cut(strings.TrimSpace(a.Command), "\n")
	if len(first) > 100 {
		first = truncateRunes(first, 100) + "…"
	}
	if first == "" {
		return "bash"
	}
	return first
}

// Run runs the command.
func (Bash) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	a, err := ParseBashArgs(raw)
	if err != nil {
		return Result{}, err
	}
	if err := env.check(); err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("tools: bash: not started: %w", err)
	}
	title := describeBash(a)
	fail := func(text string) (Result, error) { return errorResult(title, KindExecute, nil, text), nil }

	workdir := env.Cwd
	if a.Workdir != "" {
		workdir = env.abs(a.Workdir)
		if msg := dirFailure(workdir); msg != "" {
			return fail("workdir: " + msg)
		}
	}
	dir, err := env.spillDir()
	if err != nil {
		return Result{}, err
	}
	prefix := "bash"
	if a.RunInBackground {
		prefix = "bash-bg"
	}
	out, err := os.CreateTemp(dir, prefix+"-*.log")
	if err != nil {
		return Result{}, fmt.Errorf("tools: bash: creating output file in %s: %w", dir, err)
	}
	if a.RunInBackground {
		return runBackground(ctx, env, a, title, workdir, out)
	}
	defer out.Close()

	timeout := a.TimeoutMS()
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Millisecond)
	defer cancel()
	cmd, err := env.command(runCtx, a.Command, workdir, out)
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		_ = out.Close()
		_ = os.Remove(out.Name())
		return fail(err.Error())
	}

	done := make(chan struct{})
	killed := make(chan bool, 1)
	go func() {
		select {
		case <-runCtx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			killed <- true
		case <-done:
			killed <- false
		}
	}()
	waitErr := cmd.Wait()
	close(done)
	wasKilled := <-killed
	if cmd.ProcessState == nil {
		return Result{}, fmt.Errorf("tools: bash: waiting for %q: %w", title, waitErr)
	}

	text, spillPath, err := readOutput(out)
	if err != nil {
		return Result{}, err
	}
	status, isError := exitStatus(cmd.ProcessState)
	var cancelled error
	if wasKilled && isError {
		switch {
		case ctx.Err() != nil:
			status, cancelled = "[cancelled]", ctx.Err()
		default:
			status = fmt.Sprintf("[timed out after %d ms]", timeout)
		}
	}
	switch {
	case status != "" && text != "" && !strings.HasSuffix(text, "\n"):
		text += "\n" + status
	case status != "":
		text += status
	case text == "":
		text = "(no output)"
	}
	res := Result{Text: text, IsError: isError, Kind: KindExecute, Title: title, SpillPath: spillPath}
	if cancelled != nil {
		return res, fmt.Errorf("tools: bash: %q cancelled: %w", title, cancelled)
	}
	return res, nil
}

// command builds the command through Env.Exec or as bash -c, wired to
// write its combined output to out, in its own process group.
func (e *Env) command(ctx context.Context, script, workdir string, out *os.File) (*exec.Cmd, error) {
	var cmd *exec.Cmd
	if e.Exec != nil {
		c, err := e.Exec(ctx, script, workdir)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, errors.New("tools: bash: the command hook returned no command")
		}
		cmd = c
	} else {
		cmd = exec.Command("bash", "-c", script)
	}
	if cmd.Dir == "" {
		cmd.Dir = workdir
	}
	cmd.Stdin = nil
	cmd.Stdout = out
	cmd.Stderr = out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	return cmd, nil
}

// runBackground starts the command detached from ctx's cancellation and
// returns at once. A goroutine reaps the process and appends its exit
// status to the output file.
func runBackground(ctx context.Context, env *Env, a BashArgs, title, workdir string, out *os.File) (Result, error) {
	cmd, err := env.command(context.WithoutCancel(ctx), a.Command, workdir, out)
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		_ = out.Close()
		_ = os.Remove(out.Name())
		return errorResult(title, KindExecute, nil, err.Error()), nil
	}
	go func() {
		_ = cmd.Wait()
		if cmd.ProcessState != nil {
			status, _ := exitStatus(cmd.ProcessState)
			if status == "" {
				status = "[exit code 0]"
			}
			_, _ = io.WriteString(out, "\n"+status+"\n")
		}
		_ = out.Close()
	}()
	return Result{
		Text: fmt.Sprintf("Started in the background with pid %d. Its output is written to %s; "+
			"a final line [exit code N] is appended when it ends. Read that file to check on it.", cmd.Process.Pid, out.Name()),
		Kind: KindExecute, Title: title, SpillPath: out.Name(),
	}, nil
}

// exitStatus renders how the process ended: "" for success, else a status
// line, and whether it is a failure.
func exitStatus(ps *os.ProcessState) (string, bool) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("[killed by signal %d (%s)]", int(ws.Signal()), ws.Signal()), true
	}
	if code := ps.ExitCode(); code != 0 {
		return fmt.Sprintf("[exit code %d]", code), true
	}
	return "", false
}

// readOutput reads the command's output file. Output up to MaxOutputBytes
// is returned whole and the file removed; longer output is cut to its tail
// behind a note, and the file is kept as the spill file.
func readOutput(out *os.File) (string, string, error) {
	fi, err := out.Stat()
	if err != nil {
		return "", "", fmt.Errorf("tools: bash: reading output file: %w", err)
	}
	size := fi.Size()
	if size <= MaxOutputBytes {
		b := make([]byte, size)
		if _, err := out.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
			return "", "", fmt.Errorf("tools: bash: reading output file %s: %w", out.Name(), err)
		}
		_ = out.Close()
		_ = os.Remove(out.Name())
		return strings.ToValidUTF8(string(b), "\uFFFD"), "", nil
	}
	b := make([]byte, MaxOutputBytes)
	if _, err := out.ReadAt(b, size-MaxOutputBytes); err != nil && !errors.Is(err, io.EOF) {
		return "", "", fmt.Errorf("tools: bash: reading output file %s: %w", out.Name(), err)
	}
	// Start the tail on a character boundary.
	for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	note := fmt.Sprintf("[output cut: %d bytes in total, showing the last %d; the full output is saved to %s]\n", size, len(b), out.Name())
	return note + strings.ToValidUTF8(string(b), "\uFFFD"), out.Name(), nil
}
