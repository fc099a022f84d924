package sandbox

import (
	"fmt"
	"slices"
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

// denialTexts are the strerror texts of the errors Landlock causes, and
// of those the read-only mounts of workspace-write cause.
var denialTexts = [...]string{
	"Permission denied",         // EACCES: most refused accesses
	"Operation not permitted",   // EPERM
	"Invalid cross-device link", // EXDEV: refused rename or link between directories (or mounts)
	"Read-only file system",     // EROFS: a write under a read-only .git or .reel
}

// busyText is EBUSY's text: renaming or removing a protected mount point.
// It counts as a denial only on a line naming .git or .reel.
const busyText = "Device or resource busy"

// denialLine reports whether the stderr line reports a refused access.
func denialLine(line string) bool {
	if strings.Contains(line, QuarantineNote) || strings.Contains(line, busyText) && namesProtected(line) {
		return true
	}
	for _, t := range denialTexts {
		if strings.Contains(line, t) {
			return true
		}
	}
	return false
}

// namesProtected reports whether line names one of the protected names.
func namesProtected(line string) bool {
	for _, n := range protectedNames {
		if strings.Contains(line, n) {
			return true
		}
	}
	return false
}

// networkWords mark a denial line (lower-cased) as a refused network
// access: the wording of the calls and of common tools' messages, with
// punctuation so that a file name holding "network" does not count.
var networkWords = [...]string{"connect:", "connect(", "connect to", "bind:", "bind(", "socket:", "socket(", "sendto:", "sendto(", "sendmsg:", "sendmsg(", "/dev/tcp/", "/dev/udp/", "dial tcp"}

// The denial notes: what DenialNote says the sandbox blocked.
const (
	// DeniedWrite is a write outside the writable roots (or, in
	// read-only, any write).
	DeniedWrite = "a write outside the writable roots"
	// DeniedProtected is a write to the read-only .git or .reel.
	DeniedProtected = "a write to the workspace's .git or an agent's folder (the workspace's .git and the agents' folders (.reel, .dsh, .agents, .claude) are read-only in workspace-write: git and the agents run what they hold outside the sandbox; changing them needs an approved escalation)"
	// DeniedNetwork is a TCP connect or bind with the network off.
	DeniedNetwork = "a network connection or bind (the network is switched off)"
)

// DenialNote returns the note put before the output of a command that
// Classify found Denied: the denial marker and what the sandbox blocked,
// told from the lines of stderr that report a refused access. A line
// naming .git or .reel (or reporting a read-only file system, or reel's
// own quarantine note) in workspace-write is a write to the protected
// directories; with networkOff, a line about a connection, bind, socket or
// /dev/tcp is a refused network access; any other is a write outside the
// writable roots. The kernel reports all of these with the same errors, so
// this reads the command's own wording: a command that words its error
// otherwise gets the plain write note.
func DenialNote(mode Mode, stderr string, networkOff bool) string {
	var protected, network, write bool
	for line := range strings.Lines(stderr) {
		if !denialLine(line) {
			continue
		}
		lower := strings.ToLower(line)
		switch {
		case mode == WorkspaceWrite && (namesProtected(line) || strings.Contains(line, "Read-only file system") || strings.Contains(line, QuarantineNote)):
			protected = true
		case networkOff && slices.ContainsFunc(networkWords[:], func(w string) bool { return strings.Contains(lower, w) }):
			network = true
		default:
			write = true
		}
	}
	var what []string
	if protected {
		what = append(what, DeniedProtected)
	}
	if network {
		what = append(what, DeniedNetwork)
	}
	if write || len(what) == 0 {
		what = append(what, DeniedWrite)
	}
	return Marker(mode) + " the sandbox blocked " + strings.Join(what, ", and ") + "; the command's other effects stand."
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
	for line := range strings.Lines(stderr) {
		if denialLine(line) {
			return Denied
		}
	}
	return Failed
}
