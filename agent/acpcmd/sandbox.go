package acpcmd

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// confinement adapts agent/sandbox to the agent: Landlock hooks, the mode
// description, and the denial marker on denied bash results. It also keeps
// reel's own files (the state dir with every session's log, the spill dir)
// out of reach of a confined session's writes.
type confinement struct {
	sb  *sandbox.Sandbox
	log *slog.Logger
	// protect are reel's own directories, resolved.
	protect []string
}

func newSandbox(exe string, log *slog.Logger, network, missingRunner bool, protect ...string) *confinement {
	opts := []sandbox.Option{sandbox.Network(network)}
	if missingRunner {
		opts = append(opts, sandbox.MissingRunner())
	}
	sb := sandbox.New(exe, opts...)
	if abi := sb.ABI(); abi == 0 {
		log.Warn("Landlock is unavailable: bash fails closed (SANDBOX_UNAVAILABLE) in read-only and workspace-write")
	} else {
		log.Debug("Landlock available", "abi", abi)
	}
	c := &confinement{sb: sb, log: log}
	for _, d := range protect {
		c.protect = append(c.protect, resolved(d))
	}
	return c
}

// resolved returns dir absolute, cleaned, with its symbolic links resolved
// as far as it exists.
func resolved(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	for p, rest := abs, ""; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest, p = filepath.Join(filepath.Base(p), rest), parent
	}
}

// exposed returns the first of reel's own directories that lies in cwd, ""
// when none does.
func (c *confinement) exposed(cwd string) string {
	root := resolved(cwd)
	for _, d := range c.protect {
		if d == root || root == "/" || strings.HasPrefix(d, root+string(filepath.Separator)) {
			return d
		}
	}
	return ""
}

// Hooks implements agent.Sandbox. Landlock grants whole directory trees,
// so workspace-write cannot exempt reel's state dir from a working
// directory that contains it (say, cwd = $HOME): such a session fails
// closed — every bash call and every file-tool write is refused with a
// message saying what to do — and the refusal is logged loudly.
func (c *confinement) Hooks(mode sandbox.Mode, cwd string) (tools.Guard, tools.CommandFunc) {
	if mode == sandbox.WorkspaceWrite {
		if d := c.exposed(cwd); d != "" {
			c.log.Error("workspace-write refused: the working directory contains reel's state; start reel with --state-dir outside it", "cwd", cwd, "state", d)
			err := fmt.Errorf("%s workspace-write cannot confine this session: the working directory %s contains reel's own state %s (every session's log), which a confined command could then rewrite. Nothing was run or written. Ask the user to start reel with --state-dir outside the working directory, or to switch to read-only", sandbox.Marker(mode), cwd, d)
			return refuseAll{err}, func(context.Context, string, string) (*exec.Cmd, error) { return nil, err }
		}
	}
	return c.sb.Hooks(mode, cwd)
}

// TerminalCommand is the command builder of persistent terminals
// (package agent/terminal): the sandbox's, refused like Hooks' where
// workspace-write cannot confine the session.
func (c *confinement) TerminalCommand(mode sandbox.Mode, cwd string) tools.CommandFunc {
	if mode == sandbox.WorkspaceWrite {
		if _, cmd := c.Hooks(mode, cwd); c.exposed(cwd) != "" {
			return cmd
		}
	}
	return c.sb.TerminalCommand(mode, cwd)
}

// refuseAll is the write guard of a session that cannot be confined.
type refuseAll struct{ err error }

// WriteRoots implements tools.Guard: every write is refused.
func (r refuseAll) WriteRoots(string) ([]string, error) { return nil, r.err }

// Close ends every process tree the sandbox supervises and removes its
// private temp dirs.
func (c *confinement) Close() error { return c.sb.Close() }

// Describe implements agent.Sandbox.
func (c *confinement) Describe(mode sandbox.Mode) string { return c.sb.Describe(mode) }

var exitLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[exit code (\d+)\]\s*$`) })

// Annotate implements agent.Sandbox: a bash result whose failure came from
// the sandbox gets the fixed denial marker, or the unavailable marker, in
// front, so the model can tell it from an ordinary failure.
func (c *confinement) Annotate(mode sandbox.Mode, tool string, res tools.Result) tools.Result {
	if tool != "bash" || mode == sandbox.DangerFullAccess {
		return res
	}
	if rest, ok := strings.CutPrefix(res.Text, tools.RunnerFailurePrefix); ok && res.IsError {
		// The runner itself could not be spawned: the command did not
		// run, and is never run unconfined instead.
		res.Text = fmt.Sprintf("%s: sandbox mode %q is requested but the sandbox runner could not start; refusing to run the command unconfined. Runner failure: %s", sandbox.UnavailableMarker, mode, rest)
		return res
	}
	m := exitLine().FindStringSubmatch(res.Text)
	if m == nil {
		return res
	}
	code, _ := strconv.Atoi(m[1])
	switch sandbox.Classify(code, res.Text, mode) {
	case sandbox.Denied:
		res.Text = c.sb.DenialNote(mode, res.Text) + "\n" + res.Text
		res.Value = tools.MarkDenied(res.Value, string(mode))
	case sandbox.Unavailable:
		// The command did not run: that is an error result.
		res.IsError = true
		if !strings.Contains(res.Text, sandbox.UnavailableMarker) {
			res.Text = sandbox.UnavailableMarker + ": " + res.Text
		}
	}
	return res
}
