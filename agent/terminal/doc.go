// Package terminal gives a session persistent terminals: the six tools
// terminal_open, terminal_send, terminal_read, terminal_signal,
// terminal_list and terminal_close, with the reference agent's names,
// schemas and result texts (its tool-terminal, terminal and terminal-bash
// packages), over a real pseudo-terminal per terminal.
//
// # Processes
//
// A terminal is an interactive bash (`bash --noprofile --norc -i`) on a
// PTY of its own (github.com/creack/pty opens it). It starts through the
// same command builder bash uses — under a sandbox, `reel sandbox-exec`
// with the session's current mode — with one difference: the supervisor
// makes the PTY the shell's controlling terminal (sandbox-exec --tty), so
// the shell has job control and the PTY's foreground process group is the
// command running in it. It therefore has bash's guarantees: confined by
// the mode it was opened under, and ended, whole tree included, when the
// terminal is closed, when its session closes, and when reel exits or is
// killed (the supervisor's liveness pipe). A terminal is never wider than
// its session: the engine closes the ones opened under a mode wider than
// the session's current one when the mode narrows (Manager.CloseWider), as
// it stops such background jobs; one still starting when the mode narrows
// is closed as soon as it is ready. The supervisor takes only a terminal
// that is no process's controlling terminal yet.
//
// # Output
//
// What the PTY prints is read as it comes and cleaned by a streaming
// [Sanitizer]: escape sequences (CSI, OSC, two-byte escapes) are removed,
// CR LF and a lone CR become LF, BEL is dropped; everything else is kept as
// printed, as the reference keeps it. The shell's prompt is reel's own
// (PS1 `reel> `), preceded by the private marker PROMPT_COMMAND prints,
// OSC `133;D;STATUS;NONCE` with a random nonce per terminal, by which a
// send knows the shell is back; like every escape sequence it is removed
// before anything is stored. Output that imitates it without the nonce
// (a log of another terminal, a command) is not taken for it, and one
// that carries it (the model can read PROMPT_COMMAND) still ends no send
// early: the marker counts only when the shell itself then sleeps in its
// read of the terminal.
//
// Memory is bounded per terminal: the scrollback keeps the newest
// [ScrollbackBytes] bytes and the newest [ScrollbackLines] lines (older
// output is dropped, and reads say so with `[output truncated]`), one
// send's output keeps its newest [ViewportBytes], and one result is at most
// [MaxResultBytes]. A session has at most [MaxTerminals] terminals open.
//
// # Sends
//
// terminal_send writes the text (and, unless submit is false, a carriage
// return) and waits until the shell is back at its prompt or a program
// waits for input (wait reason stdin_read), the output went silent
// (inferred_idle), [SendTimeout] passed (timeout), or the shell exited
// (session_exit). The shell is back, at once and without waiting on
// silence, when the nonce marker and the prompt are the last output, the
// PTY's foreground is the shell, and the shell sleeps in its read of the
// terminal with no input queued and all its output read (a poll of the
// master, which moves the kernel's flip buffer, finds nothing and no
// read is in flight). A program waiting for input is seen in /proc,
// asleep in a read of the terminal with all output read: at once when the
// send's input is known to be taken (a reader of the terminal read since
// the write, nothing queued, line mode), otherwise after probeAfter, twice
// pollInterval apart after pollInterval of silence. A send looks when output arrives, when the shell exits, and
// when its next look is due; looks at /proc, which has no event, are
// spaced from 200µs doubling to pollInterval while nothing is printed. Cancelling the call sends SIGINT to the foreground
// process group. One send runs at a time per terminal. With
// run_in_background the send is a job of the session's table (kind
// pty-send): job_output reads its output as it comes, job_kill interrupts
// it.
//
// # Wiring
//
// The engine offers [Tools] when configured to (reel acp --terminals) and
// gives each call, through its tools.Env Owner, the session's [Scope]
// ([Host]): the session's [Manager], its current mode, its cwd and the
// sandbox's terminal command. It closes a session's terminals when the
// session closes ([Manager.CloseAll]) and after a narrowing
// ([Manager.CloseWider]).
package terminal
