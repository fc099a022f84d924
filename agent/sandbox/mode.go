package sandbox

import (
	"fmt"
	"strings"
)

// Mode is a sandbox mode: what a session's commands and file tools may
// change. It is reel's one mode type; the agent's ACP session modes are
// these.
type Mode string

// The sandbox modes, from the narrowest to the widest.
const (
	// ReadOnly permits reading and executing anything and writing nothing.
	ReadOnly Mode = "read-only"
	// WorkspaceWrite also permits writing under the root and its temp dir.
	WorkspaceWrite Mode = "workspace-write"
	// DangerFullAccess confines nothing.
	DangerFullAccess Mode = "danger-full-access"
)

// Modes lists the sandbox modes from the narrowest to the widest.
func Modes() []Mode { return []Mode{ReadOnly, WorkspaceWrite, DangerFullAccess} }

// ValidMode reports whether mode names one of the sandbox modes.
func ValidMode(mode string) bool { return Mode(mode).rank() >= 0 }

// rank orders the modes by what they allow; -1 for an unknown mode.
func (m Mode) rank() int {
	switch m {
	case ReadOnly:
		return 0
	case WorkspaceWrite:
		return 1
	case DangerFullAccess:
		return 2
	}
	return -1
}

// Wider reports whether m allows more than than does. An unknown mode is
// wider than nothing and narrower than every mode.
func (m Mode) Wider(than Mode) bool { return m.rank() > than.rank() }

// Confines reports whether m confines anything (read-only and
// workspace-write do).
func (m Mode) Confines() bool { return m == ReadOnly || m == WorkspaceWrite }

// ModeNames is the list of mode names for messages: "read-only,
// workspace-write or danger-full-access".
const ModeNames = "read-only, workspace-write or danger-full-access"

// DenialMarker is the fmt format, taking the mode name, of the marker that
// starts every denial reported to the model.
const DenialMarker = "[sandbox denied: mode %s]"

// Marker returns the denial marker naming mode.
func Marker(mode Mode) string { return fmt.Sprintf(DenialMarker, mode) }

// UnavailableMarker starts the message sandbox-exec prints to stderr when it
// refuses to run a command because Landlock is unavailable.
const UnavailableMarker = "SANDBOX_UNAVAILABLE"

// Exit statuses of sandbox-exec itself (before PROGRAM runs).
const (
	// ExitUnavailable: Landlock is unavailable, or the sandbox could not be
	// set up; PROGRAM did not run.
	ExitUnavailable = 126
	// ExitNotFound: PROGRAM was not found in PATH.
	ExitNotFound = 127
	// ExitUsage: the sandbox-exec arguments are invalid.
	ExitUsage = 2
)

// Outcome classifies the result of a command run under a mode.
type Outcome int

// The outcomes [Classify] tells apart.
const (
	// OK: the command exited with status 0.
	OK Outcome = iota
	// Failed: an ordinary non-zero exit.
	Failed
	// Denied: a non-zero exit in a confining mode whose stderr reports a
	// refused file access (EACCES, EPERM or EXDEV), as Landlock causes.
	Denied
	// Unavailable: sandbox-exec refused to run the command unconfined.
	Unavailable
)

// String returns the outcome's name in lower case.
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	case Denied:
		return "denied"
	case Unavailable:
		return "unavailable"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// denialTexts are the strerror texts of the errors Landlock causes.
var denialTexts = [...]string{
	"Permission denied",         // EACCES: most refused accesses
	"Operation not permitted",   // EPERM
	"Invalid cross-device link", // EXDEV: refused rename or link between directories
}

// Classify tells what the exit status and stderr of a command run under mode
// mean. Exit status 126 with [UnavailableMarker] on stderr is Unavailable in
// any mode. Otherwise status 0 is OK; a non-zero status is Denied when mode
// confines (read-only or workspace-write) and stderr carries a
// permission-denied, operation-not-permitted or cross-device-link error, and
// Failed otherwise. A denial the command tolerated (exit 0) is OK.
//
// Denied is a heuristic: a confined command that fails for an unrelated
// permission error (reading a file the user may not read) is Denied too.
func Classify(exitCode int, stderr string, mode Mode) Outcome {
	switch {
	case exitCode == ExitUnavailable && strings.Contains(stderr, UnavailableMarker):
		return Unavailable
	case exitCode == 0:
		return OK
	case !mode.Confines():
		return Failed
	}
	for _, t := range denialTexts {
		if strings.Contains(stderr, t) {
			return Denied
		}
	}
	return Failed
}
