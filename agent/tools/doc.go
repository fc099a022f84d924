// Package tools implements the coding tools of the reel ACP agent: bash,
// read, write, edit, glob and grep.
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
// A relative path resolves against Env.Cwd. Before write and edit change a
// file, the cleaned absolute path, with every symbolic link in its existing
// components (and a dangling link at its end) resolved, is passed to
// Guard.CheckWrite, so a link that leaves the workspace is visible to the
// sandbox. The file itself is then written through the lexical path.
//
// # Output limits and spill files
//
// bash output longer than [MaxOutputBytes] is cut to its tail, with a leading
// note giving the full size and the path of a spill file in Env.SpillDir that
// holds the whole output. glob and grep cut long listings to their head with
// a trailing note, and likewise keep the full listing in a spill file. The
// path of a spill file is also reported in Result.SpillPath.
//
// # Concurrency
//
// The tools are stateless values; Run may be called concurrently, with the
// same or different Envs, provided the Env is not modified during a call and
// its hooks are safe for concurrent use. A [Set] is immutable after
// [NewSet] and safe for concurrent use.
package tools
