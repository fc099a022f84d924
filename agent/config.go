package agent

import (
	"github.com/reel-agent/reel/agent/lsp"
	"log/slog"
	"time"

	"github.com/reel-agent/reel/agent/codemode"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/skills"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// Models hands out the model provider of each session.
type Models interface {
	// ForSession returns the provider for the index-th session opened in
	// this process (0-based, new or loaded), whose log already holds done
	// finished model calls; cwd is the session's working directory.
	ForSession(index int, cwd string, done int) (llm.Provider, error)
}

// SharedModels serves every session with one provider.
type SharedModels struct{ Provider llm.Provider }

// ForSession implements Models.
func (m SharedModels) ForSession(int, string, int) (llm.Provider, error) { return m.Provider, nil }

// Sandbox confines tool effects for a mode. The engine asks it for the tool
// environment hooks of each call.
type Sandbox interface {
	// Hooks returns the write guard and the command wrapper for bash under
	// mode, rooted at cwd. A nil CommandFunc runs bash unconfined.
	Hooks(mode sandbox.Mode, cwd string) (tools.Guard, tools.CommandFunc)
	// Describe says, for the system prompt, what mode allows.
	Describe(mode sandbox.Mode) string
	// Annotate marks a tool result whose failure the sandbox caused.
	Annotate(mode sandbox.Mode, tool string, res tools.Result) tools.Result
}

// Config configures an Engine.
type Config struct {
	// Store persists session logs.
	Store sessionlog.Store
	// Models provides each session's model.
	Models Models
	// Provider and Model name the call config written in request headers.
	Provider, Model string
	// MaxTokens caps each model response (0: provider default).
	MaxTokens int
	// MaxResponseBytes caps one model response in bytes: its text,
	// reasoning and tool-call arguments together (0:
	// DefaultMaxResponseBytes). Past it the stream is stopped, what arrived
	// is kept and the step ends as max-tokens (agent/streamcap.go).
	MaxResponseBytes int
	// Mode is the default sandbox mode for new sessions.
	Mode sandbox.Mode
	// Approval is the approval policy: "on-request" (default) or "never".
	Approval string
	// Sandbox confines tools; nil runs them unconfined in every mode.
	Sandbox Sandbox
	// SpillDir receives the full text of truncated tool output, in one
	// directory per session (empty: the system temp dir).
	SpillDir string
	// CheckpointDir holds the workspace checkpoint stores, one per session
	// (agent/checkpoint); "" turns checkpoints and /undo, /rewind and
	// /checkpoints off.
	CheckpointDir string
	// RestoreHold, when positive, stops every restore for good after that
	// many files (debug: a test kills the process in mid-restore).
	RestoreHold int
	// Attachments stores the images of prompts and read_image results
	// (image parts refer to them by digest); nil: no image is admitted.
	// ImageInput says the model takes images (see image.go).
	Attachments *sessionlog.Attachments
	ImageInput  bool
	// Invariant rebuilds every request from the log before sending it and
	// fails the turn on a mismatch (debug).
	Invariant bool
	// ContextWindow is the model's context window in tokens (0: a per-model
	// default); compaction starts when a request would fill 80% of it.
	ContextWindow int
	// PreStep runs before every step's request is assembled; hooks may
	// declare a new message series (see ChainPreSteps).
	PreStep PreStep
	// DisableTitleModel keeps sessions on their fallback title: the model
	// is not asked for one after the first turn (agent/title.go).
	DisableTitleModel bool
	// Hooks are the listeners on the engine's extension points, in the
	// order they are consulted (see Hook); the hook bridges of agent/hooks.
	Hooks []Hook
	// Notices are problems found while configuring the agent (a hook
	// config that could not be loaded): each session's first prompt in
	// this process shows them to its client.
	Notices []string
	// RetryDelay is the first backoff before retrying a retryable model
	// failure (doubling per retry); 0 retries at once (replay).
	RetryDelay time.Duration
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// FirstSessionID, when set, is the id of the first new session (so a
	// script can address it without parsing the response).
	FirstSessionID string
	// Now and NewID are the clock and id source (tests may fix them).
	Now   func() time.Time
	NewID func() string

	// What the agent does for the model (issue 14), each on by default
	// with the reference agent's settings; see the README.

	// Instructions configures the AGENTS.md / CLAUDE.md files injected
	// into the conversation (see instructions.go).
	Instructions InstructionConfig
	// RepeatThresholds are the runs of identical consecutive tool calls
	// that draw a reminder (nil: 3, 5, 8; each at least 2).
	RepeatThresholds []int
	// DisableRepeatReminders turns the repeated-call reminders off.
	DisableRepeatReminders bool
	// DisableReadGuard turns off the read-before-edit rule of write and
	// edit (tools.Observations).
	DisableReadGuard bool
	// MaxInlineBytes caps the bash result the model sees before it is
	// spilled (0: tools.DefaultMaxInlineBytes).
	MaxInlineBytes int
	// GlobMaxResults caps the paths a glob result shows
	// (0: tools.DefaultGlobMaxResults); see tools.Env.GlobMaxResults.
	GlobMaxResults int
	// GlobSample samples a glob result over the cap across top-level
	// entries instead of showing its first paths (tools.Env.GlobSample).
	GlobSample bool
	// GlobNoSpill keeps an over-cap glob result from saving its whole
	// sorted list (tools.Env.GlobNoSpill).
	GlobNoSpill bool
	// SessionQuery offers the session query tool, session_event_read (agent/sessionquery),
	// which reads the calling session's own log. Off by default, as the
	// reference ships it (an opt-in package).
	SessionQuery bool
	// Skills configures where skills (SKILL.md packs) are found;
	// DisableSkills turns the catalog, the skill tool's packs and the
	// skill slash commands off.
	Skills        skills.Options
	DisableSkills bool
	// LSP, when non-nil, offers the lsp tool (package lsp), whose
	// language servers each session starts on first use and stops when
	// it closes.
	LSP *lsp.Tool
	// NetworkOff refuses web_fetch (the user started reel with the
	// network off for its tools).
	NetworkOff bool
	// Terminals offers the persistent terminal tools (package
	// agent/terminal), opt-in as in the reference.
	Terminals bool
	// ChildAfterTurn makes a background child's activation wait until
	// the parent turn that started it ended and the parent's turn loop
	// ran out of work (let the session go — its prompt is answered
	// before the child's settlement streams — or holds it for its
	// children), and HoldForChildren keeps a
	// session's prompt unanswered (and its next-step messages, a report,
	// waiting) while a background child it started is running. Both make
	// the order of a parent's and its children's work deterministic for
	// recording and replay (the reference suite's fences); neither is for
	// everyday use.
	ChildAfterTurn, HoldForChildren bool
	// LingerAfterTurn holds a session's turn loop after each turn, before
	// it looks at its inbox or lets the session go, until none of its
	// background children is running or one waits for the session: a
	// child's settlement then reaches its parent between turns, whatever
	// the timing; and a prompt that let its session go is answered only
	// once those children settled and the turn their notice started waits
	// for the answer or is over, so that turn races the answer (a fault
	// switch for tests of these orderings).
	LingerAfterTurn bool
	// JobWaitSignal, when set, is a file created each time a job_output
	// wait has registered as a waiter of a running job, so a recorded
	// job can end right after its wait began and never before (a job
	// that ended first would queue a "job finished" notice instead):
	// deterministic recordings, not for everyday use.
	JobWaitSignal string
	// FailSubagentStart and FailSubagentTurn inject faults into
	// subagents, for tests of the failure paths (and the reference
	// suite's recordings of them): a child fails right after its log was
	// created, before its first turn; or a child's turn numbered
	// FailSubagentTurn (0: none) ends with an error before its first step.
	FailSubagentStart bool
	FailSubagentTurn  int
	// MaxSubagentDepth is how deep subagents may nest (0:
	// DefaultMaxSubagentDepth): a child of depth d may start children only
	// while d+1 is at most this.
	MaxSubagentDepth int
	// ModelChoices are the models a client may pick for a session
	// (Session.SetModel); none offers no choice.
	ModelChoices []string
	// ReasoningEfforts are, per model name, the reasoning efforts a client
	// may pick for a session using that model (agent/effort.go); a model
	// not in it offers none.
	ReasoningEfforts map[string][]string
	// MCP connects the MCP servers a client passes with a session; nil
	// connects them live with package mcp.
	MCP MCPConnector
	// CodeMode offers the model run_code alone, with the other tools
	// declared in the system prompt for its programs to call (package
	// codemode); CodeLimits bound each run (zero fields: the defaults).
	CodeMode   bool
	CodeLimits codemode.Limits
	// MCPTrusted names the MCP servers whose tools run without asking
	// the user ("*": every server); the others' calls are approved per
	// call or for the session.
	MCPTrusted []string
}
