package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ForceUnavailableEnv names the environment variable that, set to "1", makes
// [Probe] report Landlock as unavailable, so the fail-closed path can be
// exercised on any kernel.
const ForceUnavailableEnv = "REEL_SANDBOX_FORCE_UNAVAILABLE"

// Sentinel errors, matched with errors.Is.
var (
	// ErrUnavailable reports that Landlock cannot confine this process.
	ErrUnavailable = errors.New("sandbox: Landlock is unavailable")
	// ErrUsage reports invalid sandbox-exec arguments.
	ErrUsage = errors.New("sandbox-exec: invalid arguments")
	// ErrSetup reports a sandbox that could not be set up.
	ErrSetup = errors.New("sandbox-exec: cannot set up the sandbox")
)

// UnavailableError is returned by [Exec] when a confining mode is asked for
// and Landlock is unavailable. Its message is the line sandbox-exec prints.
type UnavailableError struct {
	// Mode is the confining mode that was asked for.
	Mode Mode
	// Err says why Landlock is unavailable.
	Err error
	// Network is set when Landlock works but lacks the network rules that
	// --network off asks for (ABI below 4); ABI is the kernel's version.
	Network bool
	// ABI is the kernel's Landlock ABI when Network is set.
	ABI int
}

// Error returns the SANDBOX_UNAVAILABLE line.
func (e *UnavailableError) Error() string {
	if e.Network {
		return fmt.Sprintf("%s: --network off needs Landlock network rules (ABI %d), this kernel has ABI %d; refusing to run with network access in mode %s", UnavailableMarker, minNetworkABI, e.ABI, e.Mode)
	}
	return fmt.Sprintf("%s: Landlock is not available on this kernel; refusing to run unconfined in mode %s", UnavailableMarker, e.Mode)
}

// Unwrap returns ErrUnavailable and the reason.
func (e *UnavailableError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrUnavailable}
	}
	return []error{ErrUnavailable, e.Err}
}

// ExitCode returns the exit status reel sandbox-exec should end with after
// [Exec] returned err: 0 for nil, [ExitUsage] for [ErrUsage],
// [ExitNotFound] when the program was not found, and [ExitUnavailable] for
// everything else (Landlock unavailable, set-up failures).
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrUsage):
		return ExitUsage
	case errors.Is(err, exec.ErrNotFound):
		return ExitNotFound
	}
	return ExitUnavailable
}

// minNetworkABI is the first Landlock ABI with network rules.
const minNetworkABI = 4

// execArgs are the parsed arguments of sandbox-exec.
type execArgs struct {
	mode       Mode
	root, tmp  string
	network    bool // false: deny TCP connect and bind
	livenessFD int  // -1: none
	// warmFD, -1 unless the process is a warm supervisor: the inherited
	// end of a unix socket on which it receives its command once
	// confined (see superviseWarm); argv is empty then.
	warmFD int
	// tty: the program's controlling terminal is its stdin, a terminal
	// that no session owns (a persistent terminal's PTY, package
	// agent/terminal); without it the program has none.
	tty  bool
	argv []string
}

// parseExecArgs parses the arguments of sandbox-exec (without the
// subcommand name).
func parseExecArgs(args []string) (execArgs, error) {
	a := execArgs{network: true, livenessFD: -1, warmFD: -1}
	fs := flag.NewFlagSet("sandbox-exec", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Func("mode", "sandbox mode: "+ModeNames, func(v string) error { a.mode = Mode(v); return nil })
	fs.StringVar(&a.root, "root", "", "the writable root of workspace-write (absolute)")
	fs.StringVar(&a.tmp, "tmp", "", "the writable temp dir of workspace-write (absolute, required there)")
	fs.BoolVar(&a.tty, "tty", false, "make stdin, a terminal no session owns, the program's controlling terminal")
	fs.IntVar(&a.livenessFD, "liveness-fd", -1, "an inherited fd, the read end of a pipe; EOF on it ends the command's tree")
	fs.IntVar(&a.warmFD, "warm-fd", -1, "an inherited fd, a unix socket: confine first, then receive the program, its environment, directory and stdio on it")
	fs.Func("network", "on (default) or off: off denies TCP connect and bind in confining modes", func(v string) error {
		switch v {
		case "on":
			a.network = true
		case "off":
			a.network = false
		default:
			return fmt.Errorf("want on or off, got %q", v)
		}
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return a, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if i := len(args) - len(fs.Args()); i == 0 || args[i-1] != "--" {
		return a, fmt.Errorf("%w: want -- before the program", ErrUsage)
	}
	a.argv = fs.Args()
	switch {
	case a.warmFD != -1 && (a.warmFD < 3 || a.warmFD == a.livenessFD):
		return a, fmt.Errorf("%w: --warm-fd must be 3 or more and not the liveness fd, got %d", ErrUsage, a.warmFD)
	case a.warmFD != -1 && (len(a.argv) != 0 || a.tty):
		return a, fmt.Errorf("%w: --warm-fd takes no program after -- and no --tty", ErrUsage)
	case a.warmFD == -1 && (len(a.argv) == 0 || a.argv[0] == ""):
		return a, fmt.Errorf("%w: no program after --", ErrUsage)
	case a.mode == "":
		return a, fmt.Errorf("%w: --mode is required", ErrUsage)
	case !ValidMode(string(a.mode)):
		return a, fmt.Errorf("%w: unknown mode %q (want %s, %s or %s)", ErrUsage, a.mode, ReadOnly, WorkspaceWrite, DangerFullAccess)
	case a.livenessFD != -1 && a.livenessFD < 3:
		return a, fmt.Errorf("%w: --liveness-fd must be 3 or more, got %d", ErrUsage, a.livenessFD)
	}
	if a.mode != WorkspaceWrite {
		return a, nil
	}
	if a.root == "" || !filepath.IsAbs(a.root) {
		return a, fmt.Errorf("%w: workspace-write needs an absolute --root, got %q", ErrUsage, a.root)
	}
	if a.tmp == "" || !filepath.IsAbs(a.tmp) {
		return a, fmt.Errorf("%w: workspace-write needs an absolute --tmp (a private dir, mode 0700), got %q", ErrUsage, a.tmp)
	}
	a.root, a.tmp = filepath.Clean(a.root), filepath.Clean(a.tmp)
	return a, nil
}

// Exec implements the hidden subcommand
//
//	reel sandbox-exec --mode MODE [--root DIR] [--tmp DIR] [--network on|off] [--liveness-fd N] [--tty] -- PROGRAM ARGS...
//
// args are the arguments after "sandbox-exec". Exec makes the current
// process the supervisor of PROGRAM (looked up in PATH): it confines itself
// with Landlock as MODE demands (no ruleset in danger-full-access), becomes
// a child subreaper, starts PROGRAM as its child in a new session (no
// controlling terminal — with --tty, its stdin, which must be a terminal
// that no session owns yet), waits for it, kills every remaining descendant and
// exits with PROGRAM's status, dying by the same signal when PROGRAM died by
// one. SIGTERM, SIGINT, SIGHUP or EOF on the liveness fd make it kill the
// whole tree and exit. In workspace-write PROGRAM gets TMPDIR set to the
// temp dir, which must be private (Exec creates it if needed). See the
// package documentation. On success Exec does not return.
//
// When a confining mode is asked for and Landlock (or, with --network off,
// its network rules) is unavailable, Exec returns an *[UnavailableError]
// and PROGRAM never runs. The caller prints the error's message on a line
// of its own to stderr and exits with [ExitCode](err).
//
// With --warm-fd N (and no program after --) the process is a warm
// supervisor: it confines itself first and then waits for its command on
// the unix socket N (see [Sandbox]'s warm supervisors): the program's argv,
// environment and working directory and its three standard streams. Once
// told to go it supervises the program exactly as above. It ends without
// running anything when the socket or the liveness pipe reaches EOF.
//
// Exec must be called before the process has started anything that could
// be confused by the ruleset, and only in a process meant to do nothing
// else: a ruleset, once applied, cannot be lifted.
func Exec(args []string) error {
	a, err := parseExecArgs(args)
	if err != nil {
		return err
	}
	var path string
	if a.warmFD < 0 {
		if path, err = exec.LookPath(a.argv[0]); err != nil {
			return fmt.Errorf("sandbox-exec: %w", err)
		}
	}
	env := os.Environ()
	var abi int
	if a.mode != DangerFullAccess {
		abi, err = Probe()
		if abi < 1 {
			return &UnavailableError{Mode: a.mode, Err: err}
		}
		if !a.network && abi < minNetworkABI {
			return &UnavailableError{Mode: a.mode, Network: true, ABI: abi}
		}
		if a.mode == WorkspaceWrite {
			if err := prepareTempDir(a.tmp); err != nil {
				return fmt.Errorf("%w: %w", ErrSetup, err)
			}
			env = setEnv(env, "TMPDIR", a.tmp)
		}
	}
	if a.warmFD >= 0 {
		return superviseWarm(abi, a)
	}
	return supervise(abi, a, path, env)
}

// setEnv returns env with name set to value, replacing earlier settings.
func setEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}
