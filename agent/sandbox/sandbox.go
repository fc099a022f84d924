package sandbox

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/reel-agent/reel/agent/tools"
)

// Sandbox hands out the tool hooks of each mode: a write guard for the file
// tools and a command wrapper that runs bash under reel sandbox-exec. It
// provides Hooks and Describe of the agent's Sandbox interface; `reel acp`
// adds the denial marking (Classify) in its adapter. A Sandbox is immutable after
// [New] and safe for concurrent use; so are the hooks it returns.
type Sandbox struct {
	exe      string
	tempRoot string
	abi      int
}

// Option configures a [Sandbox].
type Option func(*Sandbox)

// TempRoot sets the directory under which the per-root temp dirs are made
// (default: os.TempDir()).
func TempRoot(dir string) Option {
	return func(s *Sandbox) { s.tempRoot = dir }
}

// New returns a Sandbox whose commands re-execute exe (the reel binary, as
// os.Executable reports it) as "exe sandbox-exec …". It probes the kernel's
// Landlock ABI once, so [Sandbox.Describe] is fixed for the Sandbox's life.
func New(exe string, opts ...Option) *Sandbox {
	s := &Sandbox{exe: exe, tempRoot: os.TempDir()}
	for _, o := range opts {
		o(s)
	}
	s.abi, _ = Probe()
	return s
}

// ABI returns the Landlock ABI version probed by [New], 0 when Landlock is
// unavailable.
func (s *Sandbox) ABI() int { return s.abi }

// TempDir returns the private temp dir of root: writable in workspace-write
// and the TMPDIR of confined commands. It is created on first use.
func (s *Sandbox) TempDir(root string) string { return tempDirIn(s.tempRoot, root) }

// DefaultTempDir returns the temp dir sandbox-exec uses for root when no
// --tmp is given: a directory under os.TempDir() named after the user id
// and a hash of root.
func DefaultTempDir(root string) string { return tempDirIn(os.TempDir(), root) }

// tempDirIn names root's temp dir under parent.
func tempDirIn(parent, root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	return filepath.Join(parent, fmt.Sprintf("reel-sandbox-%d-%x", os.Getuid(), sum[:8]))
}

// prepareTempDir creates dir (mode 0700) if needed and checks that it is a
// real directory, owned by this user and closed to others, so that no one
// else can have planted it (or a symbolic link) to widen the sandbox.
func prepareTempDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("creating temp dir parent: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating temp dir: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("checking temp dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("temp dir %s is not a directory (%v)", dir, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("temp dir %s is owned by uid %d, not %d", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("temp dir %s has mode %v; want it closed to other users", dir, fi.Mode().Perm())
	}
	return nil
}

// Hooks returns the write guard and the bash command wrapper of mode for a
// session rooted at cwd (absolute). In workspace-write it creates the
// root's temp dir (see [Sandbox.TempDir]). In danger-full-access the guard allows
// everything and the CommandFunc is nil (bash runs unconfined). An unknown
// mode gets a guard and a CommandFunc that refuse everything.
func (s *Sandbox) Hooks(mode, cwd string) (tools.Guard, tools.CommandFunc) {
	root := filepath.Clean(cwd)
	tmp := s.TempDir(root)
	g := &guard{mode: mode, root: root, tmp: tmp}
	switch mode {
	case DangerFullAccess:
		return g, nil
	case WorkspaceWrite:
		// Made now so that a file tool writing there first cannot create
		// it with the wrong permissions; the CommandFunc checks it again
		// and reports a failure.
		_ = prepareTempDir(tmp)
		return g, s.command(mode, root, tmp)
	case ReadOnly:
		return g, s.command(mode, root, tmp)
	}
	return g, func(context.Context, string, string) (*exec.Cmd, error) {
		return nil, fmt.Errorf("%s unknown sandbox mode; the command was not run", Marker(mode))
	}
}

// command returns the CommandFunc of a confining mode.
func (s *Sandbox) command(mode, root, tmp string) tools.CommandFunc {
	return func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
		args := []string{"sandbox-exec", "--mode", mode, "--root", root}
		if mode == WorkspaceWrite {
			if err := prepareTempDir(tmp); err != nil {
				return nil, fmt.Errorf("sandbox: %w", err)
			}
			args = append(args, "--tmp", tmp)
		}
		args = append(args, "--", "bash", "-c", script)
		cmd := exec.CommandContext(ctx, s.exe, args...)
		cmd.Dir = workdir
		return cmd, nil
	}
}

// Describe says, for the system prompt, what mode allows, and says plainly
// when this kernel's Landlock enforces it only partly or not at all. It
// depends only on mode and the probed ABI.
func (s *Sandbox) Describe(mode string) string { return describe(mode, s.abi) }

// describe is Describe for a given ABI version.
func describe(mode string, abi int) string {
	var text string
	switch mode {
	case ReadOnly:
		text = "Commands and file tools may read and execute anything but write nothing (only /dev/null and similar devices)."
	case WorkspaceWrite:
		text = "Commands and file tools may read and execute anything but write only under the working directory and the sandbox temp directory ($TMPDIR in commands); writes elsewhere are denied."
	case DangerFullAccess:
		return "Nothing is confined: commands and file tools may change anything the user can."
	default:
		return fmt.Sprintf("Unknown sandbox mode %q: every write and command is refused.", mode)
	}
	switch {
	case abi < 1:
		text += " Landlock is unavailable: commands in this mode fail with " + UnavailableMarker + " and do not run; the file tools still enforce the mode."
	case abi == 1:
		text += " Landlock ABI 1: file truncation is not confined, and commands cannot move or link files between directories."
	case abi == 2:
		text += " Landlock ABI 2: file truncation is not confined."
	}
	return text
}
