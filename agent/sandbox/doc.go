// Package sandbox confines the effects of reel's tools to a sandbox mode,
// and bounds the life of every command they start.
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
//   - [DangerFullAccess]: nothing is confined. Commands still run under the
//     supervisor, so they have the same lifetime as in the other modes.
//
// # Commands: reel sandbox-exec
//
// The command built by a [Sandbox]'s CommandFunc, in every mode,
// re-executes the reel binary as
//
//	reel sandbox-exec --mode MODE --root DIR --liveness-fd 3 [--network off] [--tmp DIR] -- bash -c SCRIPT
//
// and [Exec], the implementation of that hidden subcommand, is the
// command's supervisor. No external launcher is involved. In order, it:
//
//  1. parses its arguments and looks PROGRAM up in PATH (errors here leave
//     nothing changed: [ExitUsage], [ExitNotFound]);
//  2. in a confining mode, checks that Landlock is available (and, with
//     --network off, its network rules), and in workspace-write creates or
//     checks the temp dir (a real directory, owned by this user, mode
//     0700), which is required there (--tmp);
//  3. marks every inherited descriptor from 3 on close-on-exec, so none
//     reaches PROGRAM, the liveness pipe in particular;
//  4. starts watching the liveness descriptor, becomes a child subreaper
//     (PR_SET_CHILD_SUBREAPER: every orphan of its tree is reparented to it)
//     and, in a confining mode, drops every capability (effective,
//     permitted, inheritable, ambient and bounding sets, on all threads:
//     even when reel runs as root a confined command holds none, so without
//     CAP_SYS_PTRACE it cannot read the /proc entries of the non-dumpable
//     reel, such as its environ) and applies the Landlock ruleset to itself
//     (all threads; it then binds PROGRAM and every process it starts);
//  5. starts PROGRAM as its child in a new session (setsid) with the
//     parent-death signal SIGKILL, and passes it descriptors 0, 1 and 2
//     only; in workspace-write PROGRAM gets TMPDIR set to the temp dir;
//  6. waits, reaping every child (PROGRAM and orphans alike), until one of:
//     PROGRAM exits; SIGTERM, SIGINT or SIGHUP arrives; the liveness pipe
//     reads EOF;
//  7. kills the whole tree: it lists its descendants through
//     /proc/self/task/*/children, recursively (or, on a kernel without
//     that file, through the parent pids in /proc/PID/stat), sends each
//     SIGKILL, and repeats until none is left (a process forked between
//     two rounds is found in the next one), reaping them;
//  8. exits as PROGRAM did: with its exit code, or, when PROGRAM died by a
//     signal, by re-raising that signal on itself with the default action
//     restored (and no core dump), so its caller sees the same "killed by
//     signal N". After a signal it dies by that signal, after EOF on the
//     liveness pipe by SIGHUP.
//
// The liveness pipe belongs to the Sandbox: it makes the pipe on first use,
// holds the write end (close-on-exec, so no other child of reel inherits
// it) and hands the read end to every supervisor as descriptor 3. Nothing is
// ever written to it. When reel dies, even by SIGKILL, or calls
// [Sandbox.Close], the write end closes and every supervisor kills its tree.
//
// Because PROGRAM is a session leader without a controlling terminal,
// opening /dev/tty fails (ENXIO) even when reel has one, so nothing can be
// pushed into the user's terminal with TIOCSTI; the bash tool gives it no
// terminal descriptor either (stdin is /dev/null, output a pipe).
//
// The CommandFunc's Cmd sends SIGTERM (not SIGKILL) to the supervisor when
// its context ends; the bash tool signals the supervisor's process group
// the same way and, after a grace period, sends SIGKILL to it as a
// fallback. A supervisor killed that way cannot clean up: PROGRAM then dies
// by its parent-death signal, but its own descendants may survive.
//
// What the supervisor cannot catch: a process that leaves its tree through
// another process outside it (a daemon asked over a socket: systemd, cron,
// at, a container runtime), or one that PROGRAM itself creates with
// clone(CLONE_PARENT), which becomes a sibling of the supervisor. A cgroup
// would be needed for those.
//
// # Warm supervisors
//
// Starting the reel binary costs more than the command most calls run, so
// a [Sandbox] keeps, per confinement key (mode, root, temp dir, network
// setting: every sandbox-exec argument but the program), at most one
// supervisor already started and waiting ([WarmSupervisors], on by
// default on Linux):
//
//	reel sandbox-exec --mode MODE --root DIR --liveness-fd 3 --warm-fd 4 [--network off] [--tmp DIR] --
//
// runs steps 2 to 4 above (confined: its own Landlock domain, no
// capabilities, the mounts and network namespace of its mode), makes
// itself non-dumpable (PR_SET_DUMPABLE 0), starts watching the liveness
// pipe and the signals, and waits on descriptor 4, its end of a unix
// socket pair whose other end only reel holds (close-on-exec on both
// sides). A call of that key takes it: reel sends the program's argv,
// environment and working directory with its three standard streams
// (SCM_RIGHTS); the warm supervisor checks that the workspace's protected
// paths, root and temp dir are still what its mounts and rules were made
// for (else it answers stale and reel starts a cold one), makes the
// streams its own 0, 1 and 2, acknowledges, and goes on from step 5
// exactly as a cold one. The bash tool starts such a command through
// [tools.Launcher]; terminals (--tty) always start cold. Once a call has
// started, the next warm one is started in the background when the call's
// supervisor has exited or 50 ms later, whichever comes first (so that a
// whole reel process starting does not slow a short call down on a busy
// machine); a call that comes before it is ready waits for it (at most
// 2 s) rather than start cold.
//
// A confined command cannot reach a waiting supervisor: it is in a sibling
// Landlock domain (no ptrace, no /proc/PID/fd, mem or environ, no
// pidfd_getfd), non-dumpable, and holds no descriptor of its socket. It
// can signal it (same user): a warm supervisor that does not acknowledge
// in time, or is seen stopped or dead (waitid, not /proc), is killed and
// the call starts cold; should its acknowledgment cross the kill, the
// killed supervisor is the call's process, so a command never runs twice.
// A warm supervisor is only ever handed a command of exactly its key;
// taking one ends the warm supervisors of the same root with another key
// (a mode switch), and [Sandbox.Close] and reel's exit (the liveness pipe)
// end them all. A warm supervisor starts with only the environment
// variables that configure sandbox-exec itself (never a model key); the
// command's environment comes with the command.
//
// # The ruleset
//
// In read-only and workspace-write the ruleset handles every filesystem
// access right of the kernel's Landlock ABI (capped at the newest ABI
// go-landlock knows) and grants:
//
//   - read, list and execute beneath /;
//   - read and write on the harmless devices listed above;
//   - in workspace-write, every filesystem right beneath the root and the
//     temporary directory, including (ABI 2 and later) moving and linking
//     files between directories inside them.
//
// No rule grants ioctl on devices: from ABI 5 on, a confined command cannot
// use any device ioctl outside the few Landlock always allows (so no
// TIOCSTI) on a device it opens, for instance a terminal opened by its
// /dev/pts path. Descriptors it inherited open (stdin, stdout, stderr) are
// not affected.
//
// Network: with [Network](false) (sandbox-exec --network off), the ruleset
// also handles TCP bind and connect and grants neither, so a confined
// command can neither connect to nor listen on any TCP port. This needs
// ABI 4; on an older kernel sandbox-exec fails closed, with an
// [UnavailableError] whose Network field is set. Landlock governs TCP
// sockets only, and Multipath TCP and SMC sockets reach a TCP listener by
// falling back to TCP; so the supervisor also installs a seccomp filter
// that fails socket(2) with EACCES for them (IPPROTO_MPTCP, IPPROTO_SMC,
// AF_SMC) and io_uring_setup(2) with ENOSYS (an io_uring creates sockets
// without socket(2)); on an architecture the filter does not know (other
// than amd64 and arm64) sandbox-exec --network off fails to set up. UDP,
// UNIX sockets and raw sockets are not confined.
// With the network on (the default) nothing about the network is
// confined. Signals and abstract UNIX sockets are never confined.
//
// Landlock is only as strong as the kernel's ABI: before ABI 2 a file can
// not be moved or linked between directories at all (stricter, not
// weaker); before ABI 3 truncate(2) of a file outside the writable roots is
// not confined; before ABI 5 device ioctls are not confined. [Probe]
// reports the ABI and [Sandbox.Describe] says so in the system prompt,
// together with the network setting when it is off. Landlock does not
// confine metadata changes (chmod, chown, utime), nor writes through a hard
// link that already existed inside the root before the command ran.
//
// # Read-only places inside the workspace
//
// In workspace-write the workspace's .git and reel's per-project .reel stay
// read-only ([Protected]): git runs what .git holds (core.fsmonitor, hooks,
// filters) at the user's next git command, outside any sandbox, and reel
// loads .reel/skills into later sessions. Landlock cannot deny a subtree of
// a granted one, so sandbox-exec first moves itself into a private mount
// namespace (propagation off: nothing reaches the host) and bind-mounts
// each protected path that exists read-only over itself, then applies the
// ruleset (which forbids the command any mount change). As root it
// unshares the namespace itself; otherwise the Sandbox starts it in a user
// namespace mapping the user to itself, keeping CAP_SYS_ADMIN there until
// sandbox-exec drops every capability. When neither works the command does
// not run ([ErrSetup]). A .git or .reel that a command creates at the root
// is renamed aside when the command ends ([QuarantineNote]); repositories
// nested in subdirectories are not protected.
//
// # Temporary directories
//
// Each Sandbox makes, on first use, one private base directory with a
// random name (os.MkdirTemp, "reel-sandbox-UID-*") under its temp root
// ([TempRoot], default os.TempDir()), mode 0700, checked to be a real
// directory owned by this user; another user cannot predict, pre-create or
// plant it. The per-root temp dirs ([Sandbox.TempDir]) are directories
// inside it, made with mode 0700 and checked the same way before every
// workspace-write command. [Sandbox.Close] removes the base directory and
// everything in it. When the base directory cannot be made, workspace-write
// commands fail with an error saying so, read-only and danger-full-access
// commands still run, and the file tools may write under the root only.
//
// # Failing closed
//
// When the kernel offers no Landlock (or [ForceUnavailableEnv] is "1"), a
// confining mode never runs unconfined: sandbox-exec prints
//
//	SANDBOX_UNAVAILABLE: Landlock is not available on this kernel; refusing to run unconfined in mode MODE
//
// to stderr and exits with status [ExitUnavailable] (126) without starting
// PROGRAM. Likewise --network off below ABI 4 prints
//
//	SANDBOX_UNAVAILABLE: --network off needs Landlock network rules (ABI 4), this kernel has ABI N; refusing to run with network access in mode MODE
//
// The ruleset is requested for the exact ABI the kernel reports, not in
// go-landlock's best-effort mode, so a ruleset the kernel cannot enforce is
// an error ([ErrSetup], status 126), never a silent downgrade.
//
// # File tools
//
// The [tools.Guard] of a Sandbox enforces the same mode in process for the
// write and edit tools: read-only denies every write; workspace-write names
// the root and its temporary directory as the write roots, and the tools
// resolve and open the file beneath one of them in one step (openat2 with
// RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS) and write through that
// descriptor, so a symbolic link, ".." or /proc magic link leading out, a
// rename racing the write, or a hard-linked file is refused with the
// marker (see the tools package, section Paths). The Guard is also a
// [tools.Shield]: the tools refuse the [Protected] paths by name and by
// where the opened descriptor lies.
//
// # Denials
//
// A denial is reported to the model with the fixed marker [DenialMarker]
// naming the mode; the Guard's errors start with it. [Classify] tells a
// sandbox denial in a command's result from an ordinary failure and from a
// sandbox that could not be set up; [DenialNote] says what was blocked (a
// write outside the roots, a write to .git or .reel, a network access).
package sandbox
