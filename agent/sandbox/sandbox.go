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
	"runtime"
	"sync"
	"syscall"

	"github.com/reel-agent/reel/agent/tools"
)

// Sandbox hands out the tool hooks of each mode: a write guard for the file
// tools and a command wrapper that runs bash under the reel sandbox-exec
// supervisor. It provides Hooks and Describe of the agent's Sandbox
// interface; `reel acp` adds the denial marking (Classify) in its adapter.
// Its configuration is fixed by [New]; it is safe for concurrent use, and
// so are the hooks it returns.
//
// A Sandbox owns two resources, made on first use: a private temp base
// directory (random name, mode 0700) holding the per-root temp dirs, and
// the write end of the liveness pipe its supervisors watch. [Sandbox.Close]
// releases both, which also ends every command the Sandbox started.
type Sandbox struct {
	exe      string
	tempRoot string
	network  bool
	abi      int
	// missingRunner, when set, is the file name (in the session's root)
	// every command runs as instead of exe: a runner that does not exist.
	missingRunner string

	mu      sync.Mutex
	closed  bool
	base    string   // the private temp base dir, "" until made
	baseErr error    // why base could not be made
	liveR   *os.File // liveness pipe: read end, handed to every supervisor
	liveW   *os.File // liveness pipe: write end, held until Close
	// warmOn: commands are handed to warm supervisors (see
	// [WarmSupervisors]); warms are those waiting, one per key, warming
	// the keys whose next one is due (its done closed once it started or
	// failed to), warmFails the keys' failures in a row.
	warmOn bool
	warms  map[warmKey]*warm
	// warmStarts counts the warm supervisors being started in the
	// background: Close waits for them before it closes the liveness
	// pipe they are given.
	warmStarts sync.WaitGroup
	warming    map[warmKey]*warmStart
	warmFails  map[warmKey]int
	// warmKeep names the environment variables a warm supervisor starts
	// with (taken from the command that had it started): those that
	// configure the supervisor itself. It gets its command's whole
	// environment only with the command.
	warmKeep []string
}

// Option configures a [Sandbox].
type Option func(*Sandbox)

// TempRoot sets the directory in which the Sandbox makes its private temp
// base directory (default: os.TempDir()).
// NetworkOffNote starts the sentence Describe adds when the network is
// switched off (a system prompt that holds it was written with --network
// off).
const NetworkOffNote = "Network access is switched off"

func TempRoot(dir string) Option {
	return func(s *Sandbox) { s.tempRoot = dir }
}

// Network sets whether confined commands may use the network (default
// true, the behaviour before this option existed). With false, commands in
// read-only and workspace-write may neither connect nor bind TCP sockets
// (Landlock network rules, ABI 4 and later); on a kernel below ABI 4 such
// commands fail closed with [UnavailableMarker]. danger-full-access is never
// confined.
func Network(on bool) Option {
	return func(s *Sandbox) { s.network = on }
}

// WarmSupervisors sets whether commands are handed to warm supervisors
// (default true on Linux): a supervisor started ahead of the command,
// already confined for the command's mode, root and network setting, and
// waiting for its command on a private socket. A command's call then
// costs no start of the reel binary; the next warm supervisor is started
// in the background once the call's supervisor has exited (or 50 ms after
// the call started, for a long one). With false every command
// starts a supervisor of its own (a cold start), as before this option
// existed. Terminal commands (TerminalCommand) always start cold.
//
// A warm supervisor is non-dumpable and confined by a Landlock domain of
// its own, so a confined command (in another domain) cannot trace it or
// open its /proc entries; it is only ever handed a command whose
// confinement key is exactly its own; one that does not answer in time
// (stopped, killed) is ended and the call starts cold; every warm
// supervisor ends with Close, with reel (the liveness pipe) and when a
// command of the same root but another key (a mode switch) starts.
func WarmSupervisors(on bool) Option {
	return func(s *Sandbox) { s.warmOn = on && runtime.GOOS == "linux" }
}

// MissingRunnerName is the file, in a session's working directory, that
// [MissingRunner] makes every command's runner: it is never created.
const MissingRunnerName = ".reel-missing-sandbox-runner"

// MissingRunner is a fault switch for tests (reel acp
// --debug-missing-sandbox-runner): every command's runner is
// [MissingRunnerName] in the session's working directory instead of the reel
// binary, so no command can be spawned and every bash call meets the
// runner-failure path, as the reference suite's
// DSH_SNAPSHOT_MISSING_SANDBOX_RUNNER does.
func MissingRunner() Option {
	return func(s *Sandbox) { s.missingRunner = MissingRunnerName }
}

// New returns a Sandbox whose commands re-execute exe (the reel binary, as
// os.Executable reports it) as "exe sandbox-exec …". It probes the kernel's
// Landlock ABI once, so [Sandbox.Describe] is fixed for the Sandbox's life.
// It creates nothing on disk: the temp base directory and the liveness pipe
// are made on first use. Call [Sandbox.Close] when done.
func New(exe string, opts ...Option) *Sandbox {
	s := &Sandbox{exe: exe, tempRoot: os.TempDir(), network: true, warmOn: runtime.GOOS == "linux",
		warms: map[warmKey]*warm{}, warming: map[warmKey]*warmStart{}, warmFails: map[warmKey]int{},
		warmKeep: []string{ForceUnavailableEnv, "GOCOVERDIR", "GODEBUG", "GOTRACEBACK"}}
	for _, o := range opts {
		o(s)
	}
	s.abi, _ = Probe()
	return s
}

// ABI returns the Landlock ABI version probed by [New], 0 when Landlock is
// unavailable.
func (s *Sandbox) ABI() int { return s.abi }

// errClosed reports a Sandbox used after Close.
var errClosed = errors.New("sandbox: the sandbox is closed")

// baseDir returns the private temp base directory, making it on first use:
// a fresh directory with a random name under the temp root, mode 0700,
// checked to be a real directory owned by this user.
func (s *Sandbox) baseDir() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errClosed
	}
	if s.base != "" || s.baseErr != nil {
		return s.base, s.baseErr
	}
	dir, err := os.MkdirTemp(s.tempRoot, fmt.Sprintf("reel-sandbox-%d-*", os.Getuid()))
	if err == nil {
		if err = checkPrivateDir(dir); err != nil {
			_ = os.Remove(dir)
		}
	}
	if err != nil {
		s.baseErr = fmt.Errorf("sandbox: making the private temp dir under %s: %w", s.tempRoot, err)
		return "", s.baseErr
	}
	s.base = dir
	return dir, nil
}

// liveness returns the read end of the liveness pipe, making the pipe on
// first use. The Sandbox holds the write end until Close; every supervisor
// gets the read end and ends its command's tree on EOF, which happens when
// Close is called or when this process dies, however it dies.
func (s *Sandbox) liveness() (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.liveR == nil {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("sandbox: making the liveness pipe: %w", err)
		}
		s.liveR, s.liveW = r, w
	}
	return s.liveR, nil
}

// Close ends every command the Sandbox started (their supervisors see EOF
// on the liveness pipe and kill their trees), and removes the private temp
// base directory with everything in it. Later commands fail; Close is
// idempotent.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for k, w := range s.warms {
		delete(s.warms, k)
		w.discard()
	}
	s.mu.Unlock()
	// A warm supervisor starting in the background is handed the
	// liveness pipe: its start ends (and, seeing the Sandbox closed, it
	// is discarded) before the pipe is closed.
	s.warmStarts.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.liveW != nil {
		if err := s.liveW.Close(); err != nil {
			errs = append(errs, fmt.Errorf("sandbox: closing the liveness pipe: %w", err))
		}
		_ = s.liveR.Close()
	}
	if s.base != "" {
		if err := os.RemoveAll(s.base); err != nil {
			errs = append(errs, fmt.Errorf("sandbox: removing the private temp dir: %w", err))
		}
	}
	return errors.Join(errs...)
}

// TempDir returns the private temp dir of root: writable in workspace-write
// and the TMPDIR of confined commands. It lies in the Sandbox's private
// temp base directory (made here if needed) and is itself created when a
// command or Hooks first needs it. It returns "" when the base directory
// cannot be made (or the Sandbox is closed).
func (s *Sandbox) TempDir(root string) string {
	base, err := s.baseDir()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	return filepath.Join(base, fmt.Sprintf("%x", sum[:8]))
}

// checkPrivateDir checks that dir is a real directory, owned by this user
// and closed to others, so that no one else can have planted it (or a
// symbolic link) to widen the sandbox.
func checkPrivateDir(dir string) error {
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

// prepareTempDir creates dir (mode 0700) if needed and checks it with
// checkPrivateDir. Its parent must exist.
func prepareTempDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating temp dir: %w", err)
	}
	return checkPrivateDir(dir)
}

// Hooks returns the write guard and the bash command wrapper of mode for a
// session rooted at cwd (absolute). Every mode's CommandFunc runs bash under
// the sandbox-exec supervisor, so every command has the same lifetime
// guarantees (see the package documentation); danger-full-access applies
// no ruleset and its guard allows everything. In workspace-write Hooks
// creates the root's temp dir (see [Sandbox.TempDir]). An unknown mode gets
// a guard and a CommandFunc that refuse everything.
func (s *Sandbox) Hooks(mode Mode, cwd string) (tools.Guard, tools.CommandFunc) {
	root := filepath.Clean(cwd)
	tmp := s.TempDir(root)
	gtmp := tmp
	if gtmp == "" {
		// No private temp dir: the guard allows the root only.
		gtmp = root
	}
	g := &guard{mode: mode, root: root, tmp: gtmp}
	switch mode {
	case WorkspaceWrite:
		// Made now so that a file tool writing there first cannot create
		// it with the wrong permissions; the CommandFunc checks it again
		// and reports a failure.
		if tmp != "" {
			_ = prepareTempDir(tmp)
		}
		return g, s.command(mode, root, tmp, false)
	case ReadOnly, DangerFullAccess:
		return g, s.command(mode, root, tmp, false)
	}
	return g, func(context.Context, string, string) (*exec.Cmd, error) {
		return nil, fmt.Errorf("%s unknown sandbox mode; the command was not run", Marker(mode))
	}
}

// TerminalCommand returns the CommandFunc of mode for a persistent
// terminal of a session rooted at cwd: the one Hooks returns, but the
// supervisor makes the command's stdin — the terminal's own PTY, which the
// caller sets — its controlling terminal (sandbox-exec --tty), so that the
// shell has job control and the PTY's foreground process group gets ^C.
// The confinement and the lifetime guarantees are Hooks'. An unknown mode
// refuses.
func (s *Sandbox) TerminalCommand(mode Mode, cwd string) tools.CommandFunc {
	if !ValidMode(string(mode)) {
		return func(context.Context, string, string) (*exec.Cmd, error) {
			return nil, fmt.Errorf("%s unknown sandbox mode; the terminal was not opened", Marker(mode))
		}
	}
	root := filepath.Clean(cwd)
	return s.command(mode, root, s.TempDir(root), true)
}

// command returns the CommandFunc of mode: bash under the supervisor
// (with tty, stdin its controlling terminal). Without tty the command
// carries a launcher (see [WarmSupervisors]) that hands it to a warm
// supervisor when one waits.
func (s *Sandbox) command(mode Mode, root, tmp string, tty bool) tools.CommandFunc {
	return func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
		live, err := s.liveness()
		if err != nil {
			return nil, err
		}
		key := warmKey{mode: mode, root: root, network: s.network}
		if mode == WorkspaceWrite {
			if tmp == "" {
				_, err := s.baseDir()
				return nil, err
			}
			if err := prepareTempDir(tmp); err != nil {
				return nil, fmt.Errorf("sandbox: %w", err)
			}
			key.tmp = tmp
		}
		attr, err := s.supervisorAttr(key)
		if err != nil {
			return nil, err
		}
		argv := []string{"bash", "-c", script}
		args := append(append(s.supervisorArgs(key, tty, "--liveness-fd", "3"), "--"), argv...)
		exe := s.exe
		if s.missingRunner != "" {
			exe = filepath.Join(root, s.missingRunner)
		}
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.SysProcAttr = attr
		cmd.Dir = workdir
		cmd.ExtraFiles = []*os.File{live}
		// Ask the supervisor to end the tree; it kills every descendant
		// before it exits. SIGKILL would leave the tree behind.
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		if !tty && s.missingRunner == "" && s.warmOn {
			cmd.Err = &warmLaunch{s: s, key: key, ctx: ctx, argv: argv}
		}
		return cmd, nil
	}
}

// supervisorArgs are the sandbox-exec arguments of key with fds (the
// descriptor flags) after --root, without the program.
func (s *Sandbox) supervisorArgs(key warmKey, tty bool, fds ...string) []string {
	args := append([]string{"sandbox-exec", "--mode", string(key.mode), "--root", key.root}, fds...)
	if !key.network {
		args = append(args, "--network", "off")
	}
	if key.mode == WorkspaceWrite {
		args = append(args, "--tmp", key.tmp)
	}
	if tty {
		args = append(args, "--tty")
	}
	return args
}

// supervisorAttr returns the process attributes a supervisor of key
// starts with: a user namespace of its own where it needs one (see
// userNSAttr), else nil.
func (s *Sandbox) supervisorAttr(key warmKey) (*syscall.SysProcAttr, error) {
	if key.mode == WorkspaceWrite || !key.network && key.mode != DangerFullAccess {
		return userNSAttr()
	}
	return nil, nil
}

// DenialNote is [DenialNote] with this Sandbox's network setting.
func (s *Sandbox) DenialNote(mode Mode, stderr string) string {
	return DenialNote(mode, stderr, !s.network)
}

// Describe says, for the system prompt, what mode allows, and says plainly
// when this kernel's Landlock enforces it only partly or not at all. It
// depends only on mode, the probed ABI and the [Network] option; with the
// network on (the default) it does not mention the network, as before the
// option existed.
func (s *Sandbox) Describe(mode Mode) string { return describe(mode, s.abi, s.network) }

// describe is Describe for a given ABI version and network setting.
func describe(mode Mode, abi int, network bool) string {
	var text string
	switch mode {
	case ReadOnly:
		text = "Commands and file tools may read and execute anything but write nothing (only /dev/null and similar devices)."
	case WorkspaceWrite:
		text = "Commands and file tools may read and execute anything but write only under the working directory and the sandbox temp directory ($TMPDIR in commands); writes elsewhere are denied. The working directory's .git and the agents' folders .reel, .dsh, .agents and .claude are read-only, because git and the agents run what they hold outside the sandbox: git commands that write them (add, commit, config) fail, one a command creates there is moved away when it ends (as is a HEAD that makes the working directory itself a git directory), and such a change needs an approved escalation."
	case DangerFullAccess:
		return "Nothing is confined: commands and file tools may change anything the user can."
	default:
		return fmt.Sprintf("Unknown sandbox mode %q: every write and command is refused.", mode)
	}
	switch {
	case abi < 1:
		return text + " Landlock is unavailable: commands in this mode fail with " + UnavailableMarker + " and do not run; the file tools still enforce the mode."
	case abi == 1:
		text += " Landlock ABI 1: file truncation is not confined, and commands cannot move or link files between directories."
	case abi == 2:
		text += " Landlock ABI 2: file truncation is not confined."
	}
	switch {
	case network:
	case abi < minNetworkABI:
		text += fmt.Sprintf(" "+NetworkOffNote+", but Landlock ABI %d cannot deny it: commands in this mode fail with %s and do not run.", abi, UnavailableMarker)
	default:
		text += " " + NetworkOffNote + ": commands cannot connect or bind TCP sockets, and run in a network namespace of their own with no network interface up (UNIX sockets by path still reach local services)."
	}
	return text
}
