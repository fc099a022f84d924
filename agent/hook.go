package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// Hook is a listener on the engine's extension points: the session's
// start, a prompt's submission, before and after each tool call, and the
// turn's stopping. The Claude Code and Codex hook bridges (agent/hooks)
// are Hooks; Config.Hooks chains several, in order.
//
// Every method gets the point's HookPoint, through which it runs its
// commands (under the session's sandbox) and writes its log records. None
// may fail the turn: a hook that cannot decide returns the zero decision
// (go on) and says why through HookPoint.Warn.
type Hook interface {
	// SessionStart runs when a session opens: source is "startup" for a
	// new session and "resume" for a loaded one. The context it returns
	// enters the session's first step after it (the first prompt waits
	// for it). It runs outside any turn: it writes no log record.
	SessionStart(ctx context.Context, p *HookPoint, source string) *HookContext
	// PromptSubmit runs before a user's prompt enters the conversation.
	PromptSubmit(ctx context.Context, p *HookPoint, prompt string) PromptDecision
	// PreTool runs after the model asked for a tool call, before it runs.
	PreTool(ctx context.Context, p *HookPoint, call ToolCall) PreToolDecision
	// PostTool runs after a tool call ran, before its result is logged.
	PostTool(ctx context.Context, p *HookPoint, call ToolCall, res tools.Result) PostToolDecision
	// Stop runs when the model ended its answer (no tool call): a hook may
	// make the turn go on with a message to the model.
	Stop(ctx context.Context, p *HookPoint) StopDecision
}

// HookContext is text a hook adds to the conversation: one user message
// whose source is the hook's plugin ({"kind":"plugin","plugin":Plugin}),
// one text part per entry of Texts.
type HookContext struct {
	Plugin string
	Texts  []string
}

// PromptDecision is a PromptSubmit hook's decision: Block refuses the
// prompt (the turn ends blocked, no step runs, the prompt is not entered;
// Reason is shown to the user), else Context, when set, enters right after
// the prompt.
type PromptDecision struct {
	Block   bool
	Reason  string
	Context *HookContext
}

// PreToolVerdict is what a PreTool hook decided.
type PreToolVerdict int

// The PreTool verdicts.
const (
	// PreToolPass: the hook has no objection; later hooks and the sandbox
	// decide.
	PreToolPass PreToolVerdict = iota
	// PreToolDeny: the call does not run; its result is an error with the
	// hook's reason.
	PreToolDeny
	// PreToolAsk: the call runs only if the client's approver allows it.
	PreToolAsk
)

// PreToolDecision is a PreTool hook's decision and its reason.
type PreToolDecision struct {
	Verdict PreToolVerdict
	Reason  string
}

// PostToolDecision is a PostTool hook's decision: Block replaces the
// result the model sees by an error carrying Feedback; Context, when set,
// enters before the next step's request (after the step's results).
type PostToolDecision struct {
	Block    bool
	Feedback string
	Context  *HookContext
}

// StopDecision is a Stop hook's decision: Continue makes the turn go on
// with Message, a user message whose source is Plugin, in a new step.
type StopDecision struct {
	Continue bool
	Message  string
	Plugin   string
}

// HookCommand is a command a hook runs: a bash script, fed Stdin, with
// extra environment entries (KEY=VALUE) and a time limit.
type HookCommand struct {
	Script  string
	Stdin   []byte
	Env     []string
	Timeout time.Duration
}

// HookRun is how a hook command ended.
type HookRun struct {
	// Exited reports a normal exit, with ExitCode; a command killed by a
	// signal, cancelled or timed out did not exit.
	Exited   bool
	ExitCode int
	// Stdout and Stderr are the command's output, each bounded (what is
	// cut is replaced by a note).
	Stdout, Stderr string
	// TimedOut reports the command ran into its time limit.
	TimedOut bool
	// Err, when set, says why the command could not run at all.
	Err      error
	Duration time.Duration
}

// errNoRunner is the HookRun.Err of a HookPoint made outside the engine.
var errNoRunner = errors.New("agent: this hook point cannot run commands")

// HookPoint is one firing of an extension point: what the hook sees of
// the session, and what it may do there.
type HookPoint struct {
	// Session is the session's id, Cwd its working directory.
	Session, Cwd string
	// TranscriptPath is the session log's file ("" when the store keeps
	// no file of its own).
	TranscriptPath string
	// Model is the model the session talks to.
	Model string
	// Mode is the session's sandbox mode; hook commands run under it.
	Mode sandbox.Mode
	// Turn is the open turn, 0 at session start.
	Turn int
	// StopHookActive (Stop only) reports that this turn already went on
	// because of a Stop hook.
	StopHookActive bool

	run    func(ctx context.Context, c HookCommand) HookRun
	record func(ctx context.Context, typ string, p sessionlog.Payload) error
	warn   func(msg string)
}

// NewHookPoint returns p with the functions it runs commands with, writes
// log records with and warns with (any may be nil: Run then fails, Record
// and Warn do nothing). The engine makes every HookPoint it passes this
// way; tests of a Hook make their own.
func NewHookPoint(p HookPoint, run func(ctx context.Context, c HookCommand) HookRun,
	record func(ctx context.Context, typ string, payload sessionlog.Payload) error, warn func(msg string)) *HookPoint {
	p.run, p.record, p.warn = run, record, warn
	return &p
}

// Run runs a hook command under the session's sandbox mode, in the
// session's working directory, without the model keys in its environment.
func (p *HookPoint) Run(ctx context.Context, c HookCommand) HookRun {
	if p.run == nil {
		return HookRun{Err: errNoRunner}
	}
	return p.run(ctx, c)
}

// Record writes a log record of the hook (hook/invoked, hook/result)
// inside the open turn; outside a turn it writes nothing.
func (p *HookPoint) Record(ctx context.Context, typ string, payload sessionlog.Payload) error {
	if p.record == nil || p.Turn == 0 {
		return nil
	}
	return p.record(ctx, typ, payload)
}

// Warn reports a problem with a hook (its config, an ignored field) on
// stderr and to the user of the session.
func (p *HookPoint) Warn(msg string) {
	if p.warn != nil {
		p.warn(msg)
	}
}

// ToolInput is a tool call's arguments as a JSON object, for a hook's
// payload: the raw arguments when they are an object, else {}.
func (c ToolCall) ToolInput() json.RawMessage {
	var probe map[string]json.RawMessage
	if json.Unmarshal(c.Arguments, &probe) != nil || probe == nil {
		return json.RawMessage(`{}`)
	}
	return c.Arguments
}
