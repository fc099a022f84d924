//go:build linux

package sandbox

import (
	"fmt"
	"os"

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
// No rule grants ioctl on devices (ABI 5 and later handle that right), so a
// confined command cannot use terminal ioctls such as TIOCSTI on any device
// it opens; descriptors it inherited open are not affected.
func rules(abi int, a execArgs) []landlock.Rule {
	rs := []landlock.Rule{
		landlock.RODirs("/"),
		// The harmless devices every confining mode may read and write.
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty").
			IgnoreIfMissing(),
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

// restrict confines the current process (all its threads) for a.mode: the
// filesystem rules, and with a.network false the TCP connect and bind
// rights too (no rule grants them, so both are denied on every port). The
// caller has checked that abi offers network rules then.
func restrict(abi int, a execArgs) error {
	cfg := configFor(abi)
	var err error
	if a.network {
		err = cfg.RestrictPaths(rules(abi, a)...)
	} else {
		cfg = landlock.Config{
			HandledAccessFS:  cfg.HandledAccessFS,
			HandledAccessNet: landlock.AccessNetSet(llsyscall.AccessNetBindTCP | llsyscall.AccessNetConnectTCP),
		}
		err = cfg.Restrict(rules(abi, a)...)
	}
	if err != nil {
		return fmt.Errorf("landlock (ABI %d): %w", abi, err)
	}
	return nil
}
