package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"
	"strings"
)

// Tool is one coding tool the model can call.
//
// Implementations are stateless: Name and Schema return the same values on
// every call, and Run may be called concurrently (see the package
// documentation for the contract of Run's two kinds of failure).
type Tool interface {
	// Name is the tool's name as the model calls it ("bash", "read", …).
	Name() string
	// Schema describes the tool to the model. Its bytes are deterministic.
	Schema() Schema
	// Run executes one call with the model's raw JSON arguments.
	Run(ctx context.Context, env *Env, args json.RawMessage) (Result, error)
}

// Schema is a tool's declaration as sent to the model.
type Schema struct {
	// Name is the tool name.
	Name string `json:"name"`
	// Description tells the model what the tool does and how to call it.
	Description string `json:"description"`
	// Parameters is the JSON Schema of the arguments object, compact JSON.
	Parameters json.RawMessage `json:"parameters"`
}

// Kind classifies a tool call for the ACP tool_call "kind" field.
type Kind string

// The kinds reel's tools report. KindOther is only returned by [Describe]
// for a tool it does not know.
const (
	KindRead    Kind = "read"
	KindEdit    Kind = "edit"
	KindExecute Kind = "execute"
	KindSearch  Kind = "search"
	KindThink   Kind = "think"
	KindOther   Kind = "other"
)

// Location is a file (and optionally a line) a tool call touches.
type Location struct {
	// Path is absolute when produced by Run or Env.Describe.
	Path string `json:"path"`
	// Line is 1-based; 0 means no particular line.
	Line int `json:"line,omitempty"`
}

// Diff is the whole-file change made by write or edit.
type Diff struct {
	// Path is the absolute path of the file.
	Path string `json:"path"`
	// OldText is the previous content, nil when the file did not exist.
	OldText *string `json:"oldText"`
	// NewText is the content written.
	NewText string `json:"newText"`
}

// Result is the outcome of one tool call.
type Result struct {
	// Text is what the model sees.
	Text string `json:"text"`
	// IsError marks an ordinary failure the model should react to.
	IsError bool `json:"isError,omitempty"`
	// Kind is the ACP tool kind of the call.
	Kind Kind `json:"kind"`
	// Title is a short human-readable summary of the call.
	Title string `json:"title"`
	// Locations are the files the call touched.
	Locations []Location `json:"locations,omitempty"`
	// Diff is set by write and edit when they changed a file.
	Diff *Diff `json:"diff,omitempty"`
	// SpillPath names the file holding output too long for Text.
	SpillPath string `json:"spillPath,omitempty"`
	// Meta is the call's structured detail, logged as the tool/result's
	// meta member as the reference logs it (web_fetch: the URL, status
	// and truncation); nil for none.
	Meta json.RawMessage `json:"meta,omitempty"`
	// Images are the images the call read (read_image), in order: the
	// engine stores them and adds each to the result as an image part
	// after Text.
	Images []Image `json:"-"`
	// Value is the call's typed result as one JSON value, for programs
	// that call the tool as a function (run_code, package
	// agent/codemode); nil when the tool has none (the program then gets
	// Text). It is never logged and never shown to the model as such.
	Value json.RawMessage `json:"-"`
}

// FileSystem reads and writes text files on behalf of the file tools, for
// instance through the editor's buffers over ACP. Paths are absolute.
// Implementations must be safe for concurrent use.
type FileSystem interface {
	// ReadTextFile returns the file's whole content.
	ReadTextFile(ctx context.Context, path string) (string, error)
	// WriteTextFile replaces the file's content, creating it if needed.
	WriteTextFile(ctx context.Context, path, content string) error
}

// Guard confines the writes of write and edit to directories.
//
// The file tools ask it once per call, then resolve and open the file
// beneath one of the directories it returns in a single step (openat2 with
// RESOLVE_BENEATH on Linux), and read and write the file through that one
// descriptor; see the package documentation, section Paths.
type Guard interface {
	// WriteRoots returns the directories a write to path must stay
	// beneath, or an error whose message is shown to the model verbatim
	// when the write is refused outright (the mode permits no writes, or
	// path lies beneath none of the directories). No directories and no
	// error means the write is not confined. path is absolute and clean
	// but otherwise as the model named it: no symbolic link is resolved.
	// The directories are absolute and trusted: symbolic links in them are
	// followed.
	WriteRoots(path string) ([]string, error)
}

// Refuser is implemented by a [Guard] that words the refusals write and
// edit find themselves while opening beneath its directories: a symbolic
// link or ".." leading out of them, a /proc magic link, a file with more
// than one hard link. Refuse returns the error shown to the model verbatim
// for a write to path refused for reason (a phrase such as "a symbolic
// link in the path leads outside the writable root /w"). Without it the
// tools say "write to PATH refused: REASON".
type Refuser interface {
	// Refuse returns the refusal of a write to path for reason.
	Refuse(path, reason string) error
}

// Shield is implemented by a [Guard] that keeps directories inside its
// writable roots read-only (in workspace-write: the workspace's .git and
// reel's per-project .reel, whose contents run outside the sandbox later).
// write and edit refuse a file that, as the kernel resolves the path,
// lies in one of them, and make no directory in one; the refusal's reason
// ends with [ReadOnlyReason].
type Shield interface {
	// ReadOnlyDirs returns the read-only directories (absolute; symbolic
	// links in them are followed). A name in it may also be a file (a
	// .git file pointing at a git directory elsewhere).
	ReadOnlyDirs() []string
}

// Sentry is implemented by a [Guard] that watches the workspace root for
// a change that would run outside the sandbox later and that no single
// path names (in workspace-write: HEAD, objects and refs making the root
// itself a git directory, possibly through a link made earlier). write
// and edit call Watch(path) before they change path and the function it
// returns after the change; that function undoes what it must and
// returns the error that becomes the call's result, nil when nothing
// happened.
type Sentry interface {
	// Watch records the root's state before a write to path.
	Watch(path string) func() error
}

// ReadOnlyReason is the reason every refusal of a write into a [Shield]'s
// read-only directories gives, for the model.
const ReadOnlyReason = "the workspace's .git and the agents' folders (.reel, .dsh, .agents, .claude) are read-only in workspace-write, because what they hold (git hooks and config, project skills, agent settings) runs outside the sandbox later; if the user's task needs this change, retry the single call with sandbox_permissions danger-full-access and a justification"

// GuardFunc adapts a function to the [Guard] interface.
type GuardFunc func(path string) ([]string, error)

// WriteRoots calls f(path).
func (f GuardFunc) WriteRoots(path string) ([]string, error) { return f(path) }

// CommandFunc builds the command that runs a bash script in workdir (an
// absolute directory). ctx bounds the command's life and may be passed to
// exec.CommandContext. bash sets the returned Cmd's Stdin, Stdout, Stderr
// and puts it in its own process group; it sets Dir to workdir when empty.
// A returned error becomes an IsError result whose text is its message.
type CommandFunc func(ctx context.Context, script, workdir string) (*exec.Cmd, error)

// Launcher starts a command its own way. A CommandFunc sets one as its
// Cmd's Err (so that anything starting the Cmd with Cmd.Start fails
// closed, with the Launcher's message): bash then calls Launch with the
// Cmd fully set up (Stdin, Stdout, Stderr as *os.File or nil, Env, Dir,
// SysProcAttr) instead of Cmd.Start. Launch must leave the Cmd as
// Cmd.Start would: Process set to a child of this process that Cmd.Wait
// (Process.Wait) reaps, or an error and nothing running. The sandbox uses
// it to hand the command to an already started supervisor.
type Launcher interface {
	error
	Launch(cmd *exec.Cmd) error
}

// StartCommand starts cmd, a command a [CommandFunc] built: through its
// [Launcher] when its Err is one, otherwise with Cmd.Start. Wait for it
// with Cmd.Wait.
func StartCommand(cmd *exec.Cmd) error {
	if l, ok := cmd.Err.(Launcher); ok {
		return l.Launch(cmd)
	}
	return cmd.Start()
}

// ProcessOwner takes ownership of processes a call leaves running (background jobs).
//
// bash calls Own once per background job, right after starting it. stop
// kills the job's whole process tree and returns when it has ended; it may
// be called from any goroutine, more than once, and also after the job
// ended (then it does nothing). release is called by the tool, once, from
// another goroutine, when the job ended by itself, after its output file is
// complete; it is not called when stop ended the job. Own must not block.
type ProcessOwner interface {
	Own(stop func()) (release func())
}

// Dispatcher runs the tool calls of a program (run_code) as the engine
// runs a direct call: one strict parse, hooks, approval, sandbox mode and
// logging. It is implemented by the engine.
type Dispatcher interface {
	// Names are the tools a program may call, in order.
	Names() []string
	// Dispatch runs one call of tool name with canonical JSON arguments
	// under the id subCallID and returns its result.
	Dispatch(ctx context.Context, subCallID, name string, args json.RawMessage) Result
}

// Env is the session environment a tool runs in. The zero value is not
// usable: Cwd must be set.
type Env struct {
	// Cwd is the session's absolute working directory; relative paths
	// resolve against it.
	Cwd string
	// CallID is the model's id of the call being run ("" when the Env
	// only describes calls); a tool replayed from a log finds its
	// recorded result by it.
	CallID string
	// Delegator, when non-nil, runs the child agents of the subagent
	// tools (the engine); without it they fail.
	Delegator Delegator
	// History, when non-nil, is the calling session's own log, which the
	// session query tools read; without it they fail.
	History History
	// Coordinator, when non-nil, controls the session's background
	// children for send_message, list_agents, interrupt_agent and report;
	// without it they fail.
	Coordinator Coordinator
	// Dispatcher, when non-nil, runs the tool calls a program makes from
	// inside run_code (package agent/codemode) through the engine's path
	// for a direct call; without it run_code fails.
	Dispatcher Dispatcher
	// Progress, when non-nil, receives the output a long-running command
	// has written so far (its last ProgressBytes, see ProgressEvery),
	// while it runs; the result still carries the whole output.
	Progress func(output string)
	// SpillDir is where long outputs and background command output are
	// saved; it is created on demand. Empty means os.TempDir().
	SpillDir string
	// FS, when non-nil, is used by read, write and edit instead of the disk.
	FS FileSystem
	// Guard, when non-nil, is asked before write and edit change a file.
	Guard Guard
	// Exec, when non-nil, builds bash's command; nil runs "bash -c script".
	Exec CommandFunc
	// Owner, when non-nil, takes ownership of every background bash job
	// (run_in_background), so it can end them (session close, agent exit,
	// mode narrowing). With nil, a job runs until it ends by itself or,
	// under the sandbox supervisor, until the agent exits.
	Owner ProcessOwner
	// Spill, when non-nil, caps the total bytes the session's spill files
	// and background output files may hold; nil means no session cap (the
	// per-file cap MaxSpillBytes still applies).
	Spill *SpillBudget
	// Observed, when non-nil, is the session's record of what read, write
	// and edit saw of each file, and turns on the read-before-edit rule
	// (see the package documentation); nil changes files unconditionally.
	Observed Observations
	// MaxInlineBytes caps the text of a bash result the model sees; a
	// longer result is saved whole to a spill file and shown as its head
	// and tail with a notice. 0 means DefaultMaxInlineBytes.
	MaxInlineBytes int
	// GlobMaxResults caps the paths a glob result shows; a longer result
	// shows that many and says how many matched. 0 means
	// DefaultGlobMaxResults; it is never more than MaxListEntries.
	GlobMaxResults int
	// GlobSample makes a glob result over GlobMaxResults a sample across
	// the top-level entries below the search path (round-robin, every
	// entry one path before any gets a second) instead of the first paths
	// in modification-time order.
	GlobSample bool
	// GlobNoSpill keeps a glob result over GlobMaxResults from saving the
	// whole sorted list to a spill file (a composition with no spill
	// store, as the reference suite's fs-search overlay).
	GlobNoSpill bool
	// ImageInput says the session's model takes images; without it
	// read_image refuses before reading anything. ImageModel names that
	// model in the refusal.
	ImageInput bool
	ImageModel string
	// Keep, when non-nil, holds what a tool starts for the session on
	// first use and keeps for its life (the lsp tool's language servers);
	// the session closes it. With nil such a tool stops what it started
	// when the call ends.
	Keep *Keep
	// Mode is the sandbox mode the call runs under ("" when unconfined);
	// a resource kept across calls (a language server, run through Exec)
	// is started again when it changes.
	Mode string
}

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalidArgs reports tool arguments that cannot be decoded; the
	// concrete error is an *ArgError.
	ErrInvalidArgs = errors.New("tools: invalid arguments")
	// ErrUnknownTool reports a tool name that is not in a Set.
	ErrUnknownTool = errors.New("tools: unknown tool")
	// ErrEnv reports an Env that cannot be used (for instance a relative Cwd).
	ErrEnv = errors.New("tools: unusable environment")
)

// ArgError is an argument decoding failure of one tool call.
type ArgError struct {
	// Tool is the tool name.
	Tool string
	// Arg is the argument at fault, empty when the whole object is.
	Arg string
	// Msg says what is wrong.
	Msg string
	// Err is the underlying decoding error, if any.
	Err error
}

// Error implements error.
func (e *ArgError) Error() string {
	var b strings.Builder
	b.WriteString("tools: ")
	b.WriteString(e.Tool)
	if e.Arg != "" {
		b.WriteString(": argument ")
		b.WriteString(strconv.Quote(e.Arg))
	} else {
		b.WriteString(": arguments")
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns ErrInvalidArgs and the underlying error, if any.
func (e *ArgError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidArgs}
	}
	return []error{ErrInvalidArgs, e.Err}
}

// errorResult is the IsError result of a call with the given description.
func errorResult(title string, kind Kind, locs []Location, text string) Result {
	return Result{Text: text, IsError: true, Kind: kind, Title: title, Locations: locs}
}
