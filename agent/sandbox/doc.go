// Package sandbox confines the effects of reel's tools to a sandbox mode.
//
// # Modes
//
// There are three modes, the ACP session modes of the agent:
//
//   - [ReadOnly]: commands may read and execute anything and write nothing
//     but a few harmless devices (/dev/null, /dev/zero, /dev/full,
//     /dev/random, /dev/urandom, /dev/tty); the file tools may write
//     nothing.
//   - [WorkspaceWrite]: as read-only, and commands and the file tools may
//     also write under the session's working directory (the root) and under
//     the root's private temporary directory, which commands get as TMPDIR.
//   - [DangerFullAccess]: nothing is confined.
//
// # Commands: reel sandbox-exec
//
// bash runs confined by Landlock. The command built by a [Sandbox]'s
// CommandFunc re-executes the reel binary as
//
//	reel sandbox-exec --mode MODE --root DIR [--tmp DIR] -- PROGRAM ARGS...
//
// and [Exec], the implementation of that hidden subcommand, applies a
// Landlock ruleset to its own process and then replaces itself with
// PROGRAM (looked up in PATH), so the ruleset binds the program and every
// process it starts; no external launcher is involved. The ruleset handles
// every filesystem access right of the kernel's Landlock ABI (capped at the
// newest ABI go-landlock knows) and grants:
//
//   - read, list and execute beneath /;
//   - read and write on the harmless devices listed above;
//   - in workspace-write, every filesystem right beneath the root and the
//     temporary directory, including (ABI 2 and later) moving and linking
//     files between directories inside them.
//
// Network access, signals and abstract UNIX sockets are not confined.
//
// Landlock is only as strong as the kernel's ABI: before ABI 2 a file can
// not be moved or linked between directories at all (stricter, not
// weaker); before ABI 3 truncate(2) of a file outside the writable roots is
// not confined. [Probe] reports the ABI and [Sandbox.Describe] says so in
// the system prompt. Landlock does not confine metadata changes (chmod,
// chown, utime), nor writes through a hard link that already existed inside
// the root before the command ran.
//
// # Failing closed
//
// When the kernel offers no Landlock (or [ForceUnavailableEnv] is "1"), a
// confining mode never runs unconfined: sandbox-exec prints
//
//	SANDBOX_UNAVAILABLE: Landlock is not available on this kernel; refusing to run unconfined in mode MODE
//
// to stderr and exits with status [ExitUnavailable] (126) without starting
// PROGRAM. The ruleset is requested for the exact ABI the kernel reports,
// not in go-landlock's best-effort mode, so a ruleset the kernel cannot
// enforce is an error, never a silent downgrade.
//
// # File tools
//
// The [tools.Guard] of a Sandbox enforces the same mode in process for the
// write and edit tools: read-only denies every write; workspace-write
// allows a path only when, with its symbolic links resolved, it lies under
// the root or the temporary directory, and refuses to write a regular file
// with more than one hard link (it may be shared with a file outside).
//
// # Denials
//
// A denial is reported to the model with the fixed marker [DenialMarker]
// naming the mode; the Guard's errors start with it. [Classify] tells a
// sandbox denial in a command's result from an ordinary failure and from a
// sandbox that could not be set up.
package sandbox
