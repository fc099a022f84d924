// Package tools implements the coding tools of the reel ACP agent: bash,
// read, write, edit, glob, grep, todo_write, the background-job tools
// (job_output, job_kill, job_list) and web_fetch, and Exec, the runner of
// short commands with their own stdin, stdout and stderr (hook commands).
//
// # Contract
//
// A [Tool] has a name, a [Schema] (name, description and JSON Schema of its
// arguments as deterministic bytes, pinned in golden files) and a Run method.
// Run receives the model's raw JSON arguments and an [Env] describing the
// session: its absolute working directory, where long outputs are spilled,
// and optional hooks for the editor's file system ([FileSystem]), the
// sandbox's write check ([Guard]) and the sandbox's command wrapper
// ([CommandFunc]).
//
// Run reports outcomes in two ways:
//
//   - A [Result] is what the model sees. An ordinary failure the model should
//     react to (a missing file, a non-zero exit status, an ambiguous edit, a
//     denied write) is a Result with IsError set, never a Go error. An error
//     returned by a Guard or a CommandFunc becomes such a Result whose Text is
//     exactly the error's message, so a sandbox denial marker reaches the
//     model verbatim.
//   - A Go error is returned only for arguments that cannot be decoded
//     (malformed JSON, a missing required argument, a value of the wrong JSON
//     type: an *[ArgError] matching [ErrInvalidArgs]), for a cancelled
//     context (the error wraps ctx.Err()) and for unexpected failures of the
//     machinery itself (an unusable Env, an unwritable spill directory).
//
// Arguments are decoded leniently: unknown extra arguments are ignored, null
// counts as absent, and numbers and booleans may also arrive as JSON strings
// ("5000", "true"), as models sometimes send them.
//
// # Paths
//
// A relative path resolves against Env.Cwd and every path is cleaned
// lexically ("a/../b" is "b") before anything is opened. read, glob and
// grep then use it as it is.
//
// write and edit first ask Guard.WriteRoots for the directories the write
// must stay beneath. When it names some, the write is confined: the path
// must lie beneath one of them by name (a root is tried as given and with
// its symbolic links resolved; roots are trusted, paths are not), and the
// rest of the path is resolved and opened beneath a descriptor of that root
// in one step, with openat2(2) and RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS.
// Symbolic links inside the root are followed, but one that is absolute or
// climbs above the root with "..", or a /proc magic link, refuses the
// write, as does a file with more than one hard link (it may be shared with
// a file outside). Where the kernel lacks openat2, the tools walk the path
// one component at a time from the root descriptor (O_PATH|O_NOFOLLOW) and
// resolve symbolic links themselves by the same rules, at most 40 of them.
// Missing parent directories are made one at a time with mkdirat on the
// descriptor of their parent. The file is opened without truncation and
// without blocking, refused unless it is a regular file of at most
// 16 MiB, and its old content is read and the new content written through
// that same descriptor, so no rename or symbolic link swapped in while the
// call runs can redirect the write. A confined write never goes through
// Env.FS: how the editor would resolve the path is beyond the tools'
// control, so the file on disk is changed and the editor's unsaved buffer,
// if any, is not consulted. On systems other than Linux a confined write is
// refused.
//
// When the Guard names no directory (danger-full-access) or there is no
// Guard, the write is not confined: the file is read and written through
// Env.FS when set, else on disk by its path, following symbolic links.
//
// # File view
//
// A session's reads and writes of a file see one version of it, so the
// model never edits text the write cannot see. read shows a file from
// Env.FS (the editor's buffer, unsaved changes included) only when a write
// of it would go there too — the Guard does not confine or refuse writes of
// that path — and from the disk otherwise, where a confined write goes
// (the editor is never trusted to resolve a confined path). With
// Env.Observed set, an unconfined write or edit goes where the file's last
// read came from (the buffer or the disk; the buffer for a file not yet
// read), and a confined one of a file last read from the buffer is refused
// ("cannot edit "P": it was read from the editor's unsaved buffer, but the
// sandbox confines this edit to the file on disk, which may differ —
// re-read the file, then retry") until it is read again.
//
// # Read before edit
//
// When Env.Observed is set (reel acp sets it per session), write and edit
// follow the reference agent's observation rule. The session remembers, per
// file (its path with symbolic links resolved), what read, write and edit
// last saw: present at a version (device, inode, size, modification and
// change times) or, after a read that found nothing, absent. Then:
//
//   - edit refuses a file not seen ("edit requires reading "P" first —
//     read the file, then retry") or seen absent ("cannot edit "P": not
//     found"), before asking the Guard; and a file seen but since changed or
//     gone ("cannot edit "P": file changed since it was read — re-read the
//     file, then retry");
//   - write may create a file not seen or seen absent, but refuses to
//     replace one that exists ("cannot overwrite existing "P" without
//     reading it first — read the file, then retry"); a file seen present
//     may be replaced only while it is as seen ("cannot write "P": file
//     changed since it was read — …", "cannot write "P": file no longer
//     exists — …");
//   - a successful read (any window of the file), write or edit records
//     the version it saw; a failed call records nothing.
//
// A name that now leads elsewhere (a symbolic link swapped in) is another
// file, not seen. Confined, the version is taken on the descriptor the
// write goes through; a refused call changes nothing. The record lives in
// memory: like the reference's, a loaded session starts with nothing seen.
//
// # Output limits and spill files
//
// A bash result (the output, then its status line) longer than
// Env.MaxInlineBytes ([DefaultMaxInlineBytes], the reference agent's 50000)
// is saved whole to a spill file in Env.SpillDir, and the model is shown
// what the reference shows: the result's head and tail, ceil and floor of
// half of what the limit leaves after the notice and a blank line (never a
// character cut in two), then "(Omitted N bytes. Full formatted result
// stored at: PATH. Use read with offset/limit, or grep this path to search
// within it.)", all within the limit. A spill file the caps below cut short
// is said so in the notice. glob and grep cut long listings (more than
// [MaxOutputBytes]) to their head with a trailing note, and likewise keep
// the full listing in a spill file. The path of a spill file is also
// reported in Result.SpillPath.
//
// # Bounds
//
// read, grep and glob cannot exhaust memory or block a turn, whatever path
// the model names. They read regular files only: a FIFO, a device, a
// socket or a directory given to read (or as grep's path) is refused with
// an error naming the path and what it is, before anything is opened; files
// are opened with O_NONBLOCK|O_NOCTTY and their type checked again on the
// descriptor, so nothing swapped in can block the open. glob and grep skip
// such files in a tree, never follow a symbolic link below their base (no
// link loop can trap them), and open directories with O_DIRECTORY. Files
// are streamed through a bounded line buffer; nothing reads a file whole.
//
// read shows at most [MaxReadOutputBytes] of lines cut at [MaxLineRunes]
// (a line of any length costs one buffer), looks for its window within the
// first [MaxReadScanBytes] of a file, and counts the lines after it for at
// most [MaxReadCountBytes] more, saying "of at least N" beyond that. With
// Env.FS, a path that is not a regular file on disk is refused without
// asking the editor, and the editor's text is windowed within the same
// bounds. grep reads at most [MaxGrepFileBytes] of a file and
// [MaxGrepTotalBytes] in all, matches lines longer than [MaxGrepLineBytes]
// on their head, and collects at most [MaxSearchResults] results or
// [MaxGrepResultBytes]; glob and grep visit at most [MaxSearchEntries]
// directory entries. A bound that is reached is stated in the result,
// with the way to narrow the search. The context is checked between files
// and before every buffer read, so a cancel ends a scan promptly.
//
// # Concurrency
//
// The tools are stateless values; Run may be called concurrently, with the
// same or different Envs, provided the Env is not modified during a call and
// its hooks are safe for concurrent use. A [Set] is immutable after
// [NewSet] and safe for concurrent use.
package tools
