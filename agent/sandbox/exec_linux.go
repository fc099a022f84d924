//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Probe returns the Landlock ABI version the kernel offers (1 or more), or 0
// and an error wrapping [ErrUnavailable] when Landlock is unavailable (not
// built in, disabled at boot, or forced off with [ForceUnavailableEnv]).
// Below ABI 3 enforcement is partial: see the package documentation.
func Probe() (abi int, err error) {
	if os.Getenv(ForceUnavailableEnv) == "1" {
		return 0, fmt.Errorf("%w: forced by %s=1", ErrUnavailable, ForceUnavailableEnv)
	}
	v, err := llsyscall.LandlockGetABIVersion()
	if err != nil {
		return 0, fmt.Errorf("%w: landlock_create_ruleset: %w", ErrUnavailable, err)
	}
	if v < 1 {
		return 0, fmt.Errorf("%w: the kernel reports Landlock ABI %d", ErrUnavailable, v)
	}
	return v, nil
}

// configFor returns the go-landlock configuration handling every access
// right of ABI version abi (capped at the newest version go-landlock knows).
// It is deliberately not in best-effort mode: abi is what the kernel
// reported, so a ruleset it cannot enforce is an error, not a downgrade.
func configFor(abi int) landlock.Config {
	configs := [...]landlock.Config{
		landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
		landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11,
	}
	return configs[min(abi, len(configs))-1]
}

// rules returns the Landlock rules of a confining mode at ABI version abi.
func rules(abi int, a execArgs) []landlock.Rule {
	rs := []landlock.Rule{
		landlock.RODirs("/"),
		// The harmless devices every confining mode may read and write.
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty").
			WithIoctlDev().IgnoreIfMissing(),
	}
	if a.mode == WorkspaceWrite {
		rw := landlock.RWDirs(a.root, a.tmp)
		if abi >= 2 {
			// Moving and linking between directories inside the roots.
			// Landlock still refuses it across the roots' border, since
			// that would change the file's rights. Before ABI 2 asking for
			// this right would disable the whole ruleset.
			rw = rw.WithRefer()
		}
		rs = append(rs, rw)
	}
	return rs
}

// restrict confines the current process (all its threads) for a.mode.
func restrict(abi int, a execArgs) error {
	if err := configFor(abi).RestrictPaths(rules(abi, a)...); err != nil {
		return fmt.Errorf("landlock (ABI %d): %w", abi, err)
	}
	return nil
}

// execProgram replaces the process with the program at path.
func execProgram(path string, argv, env []string) error {
	if err := syscall.Exec(path, argv, env); err != nil {
		return fmt.Errorf("%w: exec %s: %w", ErrSetup, path, err)
	}
	return nil
}
