package scenario

import (
	"context"
	"errors"
	"fmt"
)

// Op names a scripted client step.
type Op string

// The op names: the corpus's vocabulary followed by reel's own. What each
// op accepts and does is its entry in the vocabulary (below), the one list
// the loader, the harness and docs/scenarios.md all read.
const (
	// OpInitialize sends "initialize".
	OpInitialize Op = "initialize"
	// OpNewSession sends "session/new"; sessions are indexed 0, 1, … in
	// the order they are created. With ExpectError (the corpus's
	// newSessionExpectError) the agent must refuse it, sent with
	// AdditionalDirectories when given; no session is created.
	OpNewSession Op = "newSession"
	// OpPrompt sends "session/prompt" with Text and waits for the result
	// (with ExpectError, an error result).
	OpPrompt Op = "prompt"
	// OpPromptContent sends "session/prompt" with the Content blocks.
	OpPromptContent Op = "promptContent"
	// OpPromptAndCancel sends a prompt, waits until WaitForFile.Path exists
	// in the run's cwd, then sends "session/cancel".
	OpPromptAndCancel Op = "promptAndCancel"
	// OpPromptAndWaitForAgentMessage sends a prompt and waits until the
	// agent's streamed message text contains WaitForText.
	OpPromptAndWaitForAgentMessage Op = "promptAndWaitForAgentMessage"
	// OpWaitForTurnEnd waits for the pending prompts of the session to be
	// answered and for its log to hold no open turn (a turn the agent
	// started by itself, e.g. for a background subagent's notice, ends
	// with no prompt pending).
	OpWaitForTurnEnd Op = "waitForTurnEnd"
	// OpWaitForTurnStart waits until the session's log has started turn
	// MinimumTurn or a later one (turns the agent starts by itself, e.g.
	// after a background subagent settles).
	OpWaitForTurnStart Op = "waitForTurnStart"
	// OpWaitForFile waits until Path exists in the run's cwd.
	OpWaitForFile Op = "waitForFile"
	// OpWaitForTitleAfterTurnEnd waits for the session title that some
	// agents derive after a turn has ended.
	OpWaitForTitleAfterTurnEnd Op = "waitForTitleAfterTurnEnd"
	// OpWaitForSubagentTurnEnd waits until child session Child (1-based
	// in fixture order; absent = 1) has ended turn MinimumTurn (absent =
	// 1) or a later one after model work of its own, and has no open
	// turn.
	OpWaitForSubagentTurnEnd Op = "waitForSubagentTurnEnd"
	// OpLoadSession restarts the agent as a fresh process and sends
	// "session/load" for session Session (with ExpectError, the load must
	// be refused and the process keeps serving).
	OpLoadSession Op = "loadSession"
	// OpSetMode sends "session/set_mode" with Mode.
	OpSetMode Op = "setMode"
	// OpCancel sends the "session/cancel" notification.
	OpCancel Op = "cancel"
	// OpListSessions sends "session/list" for the run's cwd; with
	// FollowCursor, the nextCursor of the previous list answer.
	OpListSessions Op = "listSessions"
	// OpDeleteSession restarts the agent as a fresh process (reel deletes
	// no session open in its process) and sends "session/delete" for
	// session Session; from then on the session's log must be gone.
	OpDeleteSession Op = "deleteSession"
	// OpPromptQueued sends a prompt without waiting for its answer: one
	// sent while a turn runs is queued behind it.
	OpPromptQueued Op = "promptQueued"
	// OpSteer waits until WaitForFile.Path exists, sends
	// "_session/steering" with Text (which must be answered "injected"),
	// then creates Path, if set, in the run's cwd.
	OpSteer Op = "steer"
	// OpSetConfigOption sends "session/set_config_option" with ConfigID
	// and Value.
	OpSetConfigOption Op = "setConfigOption"
	// OpResumeSession restarts the agent as a fresh process and sends
	// "session/resume" for session Session (no history is streamed back).
	OpResumeSession Op = "resumeSession"
	// OpForkSession sends "session/fork" (unstable) for session Session,
	// anchored with reel's _meta at the AtAnswer-th answer's message id or
	// at seq AtSeq (neither: the whole history); the new session is the
	// next in creation order.
	OpForkSession Op = "forkSession"
)

// Driver is what runs a scenario's steps: one method per run function of
// the vocabulary; Step.Run calls the one its op names. The snapshot
// harness implements it. Step.Run calls a Driver from one goroutine, one
// step at a time, in script order; a method must return when ctx (the step's
// deadline) is done. A step whose ExpectError is set expects the agent to
// answer with a JSON-RPC error: the method checks that itself.
type Driver interface {
	// Initialize runs OpInitialize.
	Initialize(ctx context.Context, st Step) error
	// NewSession runs OpNewSession.
	NewSession(ctx context.Context, st Step) error
	// Prompt runs OpPrompt and OpPromptContent: it sends st.Prompt().
	Prompt(ctx context.Context, st Step) error
	// PromptAndCancel runs OpPromptAndCancel.
	PromptAndCancel(ctx context.Context, st Step) error
	// PromptAndWaitForAgentMessage runs OpPromptAndWaitForAgentMessage.
	PromptAndWaitForAgentMessage(ctx context.Context, st Step) error
	// WaitForTurnEnd runs OpWaitForTurnEnd.
	WaitForTurnEnd(ctx context.Context, st Step) error
	// WaitForTurnStart runs OpWaitForTurnStart.
	WaitForTurnStart(ctx context.Context, st Step) error
	// WaitForFile runs OpWaitForFile.
	WaitForFile(ctx context.Context, st Step) error
	// WaitForTitleAfterTurnEnd runs OpWaitForTitleAfterTurnEnd.
	WaitForTitleAfterTurnEnd(ctx context.Context, st Step) error
	// WaitForSubagentTurnEnd runs OpWaitForSubagentTurnEnd.
	WaitForSubagentTurnEnd(ctx context.Context, st Step) error
	// LoadSession runs OpLoadSession.
	LoadSession(ctx context.Context, st Step) error
	// SetMode runs OpSetMode.
	SetMode(ctx context.Context, st Step) error
	// Cancel runs OpCancel.
	Cancel(ctx context.Context, st Step) error
	// ListSessions runs OpListSessions.
	ListSessions(ctx context.Context, st Step) error
	// PromptQueued runs OpPromptQueued.
	PromptQueued(ctx context.Context, st Step) error
	// Steer runs OpSteer.
	Steer(ctx context.Context, st Step) error
	// SetConfigOption runs OpSetConfigOption.
	SetConfigOption(ctx context.Context, st Step) error
	// ResumeSession runs OpResumeSession.
	ResumeSession(ctx context.Context, st Step) error
	// DeleteSession runs OpDeleteSession.
	DeleteSession(ctx context.Context, st Step) error
	// ForkSession runs OpForkSession.
	ForkSession(ctx context.Context, st Step) error
}

// ErrNotDriven reports a step whose op the loader accepts (it is in the
// corpus's vocabulary) but reel's harness does not drive.
var ErrNotDriven = errors.New("scenario: reel's harness does not drive this op")

// opSpec is one op of the vocabulary.
type opSpec struct {
	op Op
	// required and optional are the fields the op accepts besides "op".
	required, optional []string
	// prompt marks an op that sends "session/prompt".
	prompt bool
	// run runs the op; nil for an op reel's harness does not drive.
	run func(Driver, context.Context, Step) error
	// twin is the corpus's name for the op with "expectError": true (such
	// as "promptExpectError"), accepted as an alias; "" when none.
	twin Op
	// doc says what the client does (docs/scenarios.md's table of ops).
	doc string
}

// vocabulary is the step vocabulary, in documentation order: each op, its
// fields, what runs it and what it does. It is the only list of ops:
// ParseInput dispatches on it, Step.Run runs it, Ops lists it, and
// docs/scenarios.md's table of ops is generated from it (TestDocOpTable).
var vocabulary = []opSpec{
	{op: OpInitialize, optional: []string{fNotices, fCompaction}, run: Driver.Initialize,
		doc: "sends `initialize`; `notices: true` / `compaction: true` advertise the client capabilities `session.notices` / `session.compaction`"},
	{op: OpNewSession, optional: []string{fExpectError, fAddDirs}, run: Driver.NewSession, twin: "newSessionExpectError",
		doc: "sends `session/new`; sessions are indexed 0, 1, … in creation order; with `expectError: true` (the corpus's `newSessionExpectError`) the response must be a JSON-RPC error and no session is created, and `additionalDirectories` (strings) are sent as ACP's member of that name"},
	{op: OpPrompt, required: []string{fText}, optional: []string{fSession, fExpectError}, prompt: true, run: Driver.Prompt, twin: "promptExpectError",
		doc: "sends `session/prompt` with `text` and waits for the result; with `expectError: true` the response must be a JSON-RPC error"},
	{op: OpPromptContent, required: []string{fContent}, optional: []string{fSession}, prompt: true, run: Driver.Prompt,
		doc: "sends `session/prompt` with ACP content blocks (below)"},
	{op: OpPromptAndCancel, required: []string{fText, fWaitForFile}, optional: []string{fSession}, prompt: true, run: Driver.PromptAndCancel,
		doc: "sends a prompt, waits until `waitForFile.path` exists in the run's cwd, then sends `session/cancel`"},
	{op: OpPromptAndWaitForAgentMessage, required: []string{fText, fWaitForText}, optional: []string{fSession}, prompt: true, run: Driver.PromptAndWaitForAgentMessage,
		doc: "sends a prompt and waits until the agent's streamed text contains `waitForText`"},
	{op: OpWaitForTurnEnd, optional: []string{fSession, fTimeoutMs}, run: Driver.WaitForTurnEnd,
		doc: "waits for the session's pending prompts to be answered and for its log to hold no open turn (the last `turn/start` followed by a `turn/end`), so a turn the agent started by itself with no prompt pending has ended too"},
	{op: OpWaitForTurnStart, optional: []string{fMinimumTurn, fSession, fTimeoutMs}, run: Driver.WaitForTurnStart,
		doc: "waits until the session's log has a `turn/start` numbered `minimumTurn` (1-based; absent = 1) or higher, open or already ended — a turn the agent starts by itself, e.g. for a background subagent's notice"},
	{op: OpWaitForFile, required: []string{fPath}, optional: []string{fTimeoutMs}, run: Driver.WaitForFile,
		doc: "waits until `path` exists in the run's cwd (a corpus scenario awaiting the reference suite's settlement marker `.dsh-snapshot-subagent-settled` waits for a background subagent's settlement notice in the session logs instead: its preparation, below)"},
	{op: OpWaitForTitleAfterTurnEnd, optional: []string{fSession, fTimeoutMs}, run: Driver.WaitForTitleAfterTurnEnd,
		doc: "waits for the session's pending prompt to end, then for a `session/title` on its log after the last `turn/end` and the `session_info_update` carrying that title on the wire"},
	{op: OpWaitForSubagentTurnEnd, optional: []string{fChild, fMinimumTurn, fTimeoutMs}, run: Driver.WaitForSubagentTurnEnd,
		doc: "waits until child session `child` (1-based, in fixture order: by creation; absent = 1) has a `turn/end` numbered `minimumTurn` (absent = 1) or higher, a `request/header` after its last `subagent/descriptor` (model work of its own) and no open turn"},
	{op: OpLoadSession, optional: []string{fSession, fExpectError}, run: Driver.LoadSession,
		doc: "restarts the agent as a fresh process and sends `session/load`; with `expectError: true` the response must be a JSON-RPC error (a refused log) and the process keeps serving"},
	{op: OpSetMode, required: []string{fMode}, optional: []string{fSession}, run: Driver.SetMode,
		doc: "sends `session/set_mode` with the mode id, e.g. `read-only`"},
	{op: OpCancel, optional: []string{fSession}, run: Driver.Cancel,
		doc: "sends the `session/cancel` notification"},
	{op: OpListSessions, optional: []string{fFollow}, run: Driver.ListSessions,
		doc: "sends `session/list` for the run's cwd (the sessions with their titles and last activity); with `followCursor: true` it sends the `nextCursor` of the previous list answer (which must have one) and the page continues that listing. When a listing ends (an answer without `nextCursor`) the harness checks it: pages in session-id order, none larger than `listPageSize`, each cursor naming its page's last session, no session twice, and together exactly the script's sessions not deleted. The transcript shows a paged listing's sessions as `{{listed:N}}` (N-th of the listing) and a cursor as `{{cursor:after listed:N}}` (the decoded session it continues after)"},
	{op: OpDeleteSession, optional: []string{fSession}, run: Driver.DeleteSession,
		doc: "restarts the agent as a fresh process (reel refuses to delete a session open in its process) and sends `initialize` and `session/delete` for the session (the answer is compared); the session's log, as it was just before, is the fixture's `session.N.jsonl`, and the log file must be gone from the state dir after the answer and at the end of the run"},
	{op: OpPromptQueued, required: []string{fText}, optional: []string{fSession, fPath}, prompt: true, run: Driver.PromptQueued,
		doc: "sends `session/prompt` with `text` and goes on without waiting for its answer (the frame is written before the next step), then creates `path`, when given, in the run's cwd: sent while a turn runs, it is queued; `waitForTurnEnd` waits for its answer"},
	{op: OpSteer, required: []string{fText, fWaitForFile}, optional: []string{fSession, fPath}, run: Driver.Steer,
		doc: "waits until `waitForFile.path` exists in the run's cwd, sends `_session/steering` with `text` (the answer must be `injected`), then creates `path`, when given, in the run's cwd (so a command the turn runs can go on)"},
	{op: OpSetConfigOption, required: []string{fConfigID, fValue}, optional: []string{fSession, fExpectError}, run: Driver.SetConfigOption,
		doc: "sends `session/set_config_option` with `configId` and `value`; with `expectError: true` the response must be a JSON-RPC error"},
	{op: OpResumeSession, optional: []string{fSession}, run: Driver.ResumeSession,
		doc: "restarts the agent as a fresh process and sends `session/resume`: the session reopens without its history streamed back"},
	{op: OpForkSession, optional: []string{fSession, fAtAnswer, fAtSeq}, run: Driver.ForkSession,
		doc: "sends `session/fork` (unstable) for the session; `atAnswer: N` anchors it with `_meta.reel.atMessageId` at the message id of the session's N-th answer (1-based: the N-th distinct `messageId` of its `agent_message_chunk` updates this process received), `atSeq: S` with `_meta.reel.atSeq` (not both; neither: the whole history). The new session is the next in creation order (its log the next `session.N.jsonl`); prompt and load it like any other"},
}

// lookup returns the spec of an op name; twin reports a twin name (the op
// with "expectError": true).
func lookup(name Op) (s *opSpec, twin, ok bool) {
	// A scan, not a map built at package init: the vocabulary is short,
	// and reel acp links this package without loading scenarios.
	for i := range vocabulary {
		if v := &vocabulary[i]; v.op == name || v.twin != "" && v.twin == name {
			return v, v.twin == name, true
		}
	}
	return nil, false, false
}

// fields returns the step fields the op accepts, "op" included.
func (s *opSpec) fields() []string {
	return append(append([]string{fOp}, s.required...), s.optional...)
}

// Ops lists the step vocabulary (canonical names, no twins) in
// documentation order.
func Ops() []Op {
	out := make([]Op, 0, len(vocabulary))
	for _, s := range vocabulary {
		out = append(out, s.op)
	}
	return out
}

// IsPrompt reports whether the step sends "session/prompt".
func (s Step) IsPrompt() bool {
	spec, _, ok := lookup(s.Op)
	return ok && spec.prompt
}

// CreatesSession reports whether the step creates a session: a
// newSession that is not expected to be refused, or a forkSession.
func (s Step) CreatesSession() bool {
	return (s.Op == OpNewSession && !s.ExpectError) || s.Op == OpForkSession
}

// Driven reports whether reel's harness can run the step (Run would not
// return ErrNotDriven or ErrUnknownOp).
func (s Step) Driven() bool {
	spec, _, ok := lookup(s.Op)
	return ok && spec.run != nil
}

// Run runs the step through d: the Driver method its op names. A step whose
// op reel's harness does not drive fails with ErrNotDriven, one the
// vocabulary does not define with ErrUnknownOp (a loaded scenario has none).
func (s Step) Run(ctx context.Context, d Driver) error {
	spec, twin, ok := lookup(s.Op)
	switch {
	case !ok:
		return fmt.Errorf("op %q: %w", s.Op, ErrUnknownOp)
	case spec.run == nil:
		return fmt.Errorf("op %s: %w", s.Op, ErrNotDriven)
	case twin: // a Step built by hand with the twin's name
		s.Op, s.ExpectError = spec.op, true
	}
	return spec.run(d, ctx, s)
}
