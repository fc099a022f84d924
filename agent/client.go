package agent

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/reel-agent/reel/agent/askuser"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// Updates receives what a session's turn does, as it happens: the model's
// text and thoughts, each tool call's start, run and end, and the plan.
// The ACP adapter turns them into session/update notifications; a
// subagent's parent turns them into its own tool call's progress. Each
// method may block (a slow editor) and should honour ctx; none may fail the
// turn, so delivery problems are the implementation's to log.
type Updates interface {
	// UserText is a user message's text (history replay only).
	UserText(ctx context.Context, text string)
	// Text is a piece of the model's answer.
	Text(ctx context.Context, text string)
	// Thought is a piece of the model's reasoning, or a notice from reel
	// about the turn (a retry).
	Thought(ctx context.Context, text string)
	// ToolStart announces a tool call, pending.
	ToolStart(ctx context.Context, call ToolCall)
	// ToolRunning says the call now runs.
	ToolRunning(ctx context.Context, id string)
	// ToolProgress is the output a running call (bash) has written so
	// far, its last few KiB, about once a second while new output
	// arrives; ToolEnd still reports the whole result.
	ToolProgress(ctx context.Context, id, output string)
	// ToolEnd reports the call's result; it is durable on the log already.
	ToolEnd(ctx context.Context, id string, res tools.Result)
	// Plan is the model's current task list (todo_write).
	Plan(ctx context.Context, todos []tools.Todo)
	// Usage is how much of the model's context window the conversation
	// fills after a model call (tokens in and out of that call).
	Usage(ctx context.Context, u ContextUsage)
	// Title is the session's new title: the fallback during the first
	// turn, then the model's after it (Title.Late: possibly after the
	// prompt answered). It is durable on the log already; Session.Title
	// gives the stored one (for a loaded session).
	Title(ctx context.Context, t Title)
}

// ContextUsage is the context window's use: Used tokens of Size. Spent is
// what the session's model calls used so far, per model (Session.Spent).
type ContextUsage struct {
	Used, Size int
	Spent      []ModelTokens
}

// ToolCall describes one tool call as the model made it.
type ToolCall struct {
	// ID is the model's call id.
	ID string
	// Name is the tool's name; Title says what the call does.
	Name, Title string
	// Kind is the tool's kind.
	Kind tools.Kind
	// Locations are the files the call touches.
	Locations []tools.Location
	// Arguments are the call's raw arguments.
	Arguments json.RawMessage
}

// Approval is one tool call the engine asks a person to approve: a call
// that wants to run under a wider sandbox mode than the session's, or one
// a PreToolUse hook asked about (Reason set, Wanted the session's mode).
type Approval struct {
	// Call is the tool call.
	Call ToolCall
	// Mode is the session's mode; Wanted is the mode the call asks for.
	Mode, Wanted sandbox.Mode
	// Title is a one-line summary; Detail shows the whole command (and
	// where it runs) or the path, exactly as the tool will use them.
	Title, Detail string
	// Reason is the hook's reason for asking ("" for an escalation).
	Reason string
	// Always offers answers that hold for the rest of the session
	// (AllowedAlways, RejectedAlways): set for an MCP tool's call.
	Always bool
	// MCPServer and MCPTool are, for an MCP tool's call, its server's
	// configured name and the tool's own name on it: what a session-wide
	// answer holds for.
	MCPServer, MCPTool string
}

// Answer is what the approver decided.
type Answer int

// The answers an [Approver] gives.
const (
	// Dismissed: the request was cancelled without a choice.
	Dismissed Answer = iota
	// Allowed: run this one call under the wanted mode.
	Allowed
	// Rejected: do not run it.
	Rejected
	// AllowedAlways: run it, and every later call of the same tool in
	// this session without asking (offered only with Approval.Always).
	AllowedAlways
	// RejectedAlways: do not run it, nor any later call of the same tool
	// in this session (offered only with Approval.Always).
	RejectedAlways
)

// Approver decides escalations. An error means the question could not be
// asked or answered (the client went away); the call then does not run.
type Approver interface {
	Approve(ctx context.Context, a Approval) (Answer, error)
}

// Client is who drives a session's prompt: where its updates go, who
// approves its escalations and, optionally, the file system the file tools
// use instead of the disk (an editor's unsaved buffers). Nil Updates drops
// the updates; a nil Approver rejects every escalation without asking.
type Client struct {
	Updates  Updates
	Approver Approver
	FS       tools.FileSystem
	// Questions, when non-nil, answers the model's ask_user_question
	// calls (package askuser); nil refuses them.
	Questions askuser.Asker
	// Answered, when non-nil, is closed once the client got Prompt's
	// answer: a turn the session's inbox starts after the prompt let the
	// session go (a background child's settlement) waits for it, so none
	// of its updates reaches the client before the answer. nil: no wait.
	Answered <-chan struct{}
}

// StopReason says why a prompt's turn ended. The values are ACP's stop
// reasons.
type StopReason string

// The stop reasons of a turn.
const (
	StopEndTurn   StopReason = "end_turn"
	StopMaxTokens StopReason = "max_tokens"
	StopRefusal   StopReason = "refusal"
	StopCancelled StopReason = "cancelled"
	// StopMaxTurnRequests: the turn reached the engine's bound on its
	// steps (model requests) and was stopped.
	StopMaxTurnRequests StopReason = "max_turn_requests"
)

// Errors the engine returns for a caller's mistake, matched with
// errors.Is; the error's message says what was wrong and what to do.
var (
	// ErrInvalid: the request names an unknown, closed or already open
	// session, a relative cwd, an unknown mode, or an id already taken.
	ErrInvalid = errors.New("agent: invalid request")
	// ErrBusy: the session already runs a prompt (or is closing).
	ErrBusy = errors.New("agent: session busy")
	// ErrShuttingDown: the engine is closing and takes no more work.
	ErrShuttingDown = errors.New("the agent is shutting down")
)

// inputError is a refusal of the caller's input: its message is the whole
// text, kind the sentinel it matches.
type inputError struct {
	kind error
	msg  string
}

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Unwrap() error { return e.kind }

func invalid(msg string) error { return &inputError{kind: ErrInvalid, msg: msg} }
func busy(msg string) error    { return &inputError{kind: ErrBusy, msg: msg} }

// ModelError is the error a prompt fails with when the model call failed:
// Message is the provider's own message and Code its failure code (empty
// when the failure is not the provider's, or has no code; llm.CodeAuth
// for refused credentials).
type ModelError struct {
	Message, Code string
	// Provider is set when the failure came from the model provider.
	Provider bool
}

func (e *ModelError) Error() string { return "model call failed: " + e.Message }

// discard is the Updates of a client that wants none.
type discard struct{}

func (discard) UserText(context.Context, string)              {}
func (discard) Text(context.Context, string)                  {}
func (discard) Thought(context.Context, string)               {}
func (discard) ToolStart(context.Context, ToolCall)           {}
func (discard) ToolRunning(context.Context, string)           {}
func (discard) ToolProgress(context.Context, string, string)  {}
func (discard) ToolEnd(context.Context, string, tools.Result) {}
func (discard) Plan(context.Context, []tools.Todo)            {}
func (discard) Usage(context.Context, ContextUsage)           {}
func (discard) Title(context.Context, Title)                  {}

// withDefaults fills a Client's nil members.
func (c Client) withDefaults() Client {
	if c.Updates == nil {
		c.Updates = discard{}
	}
	return c
}
