package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reel-agent/reel/sessionlog"
)

// Content is one part of a user's prompt: text (an embedded text resource
// arrives rendered as a file block), or one of Image (an inline image),
// Blob (a binary embedded resource or an audio clip) or Link (a
// resource_link's URI; a file:// link is read and inlined). See
// promptMessage (image.go) for what reaches the model.
type Content struct {
	Text  string
	Image *Attached
	Blob  *Attached
	Link  string
	// LinkName, LinkTitle and LinkMimeType are the resource link's other
	// members, kept so a loaded session retells the link as sent.
	LinkName, LinkTitle, LinkMimeType string
}

// Command is a slash command a client may offer its user.
type Command struct {
	Name, Description string
}

// compactCommand is the slash command that compacts on demand.
const compactCommand = "/compact"

// Commands lists the slash commands a session understands.
func Commands() []Command {
	return []Command{{
		Name:        strings.TrimPrefix(compactCommand, "/"),
		Description: "Summarize the earlier conversation to free context (the log keeps everything).",
	}}
}

// isCompactPrompt reports whether a prompt is the /compact command.
func isCompactPrompt(prompt []Content) bool {
	return len(prompt) == 1 && strings.TrimSpace(prompt[0].Text) == compactCommand
}

// Prompt runs one turn of the session on prompt, reporting to c as it
// goes, and returns why the turn ended. Cancelling ctx ends the turn as
// aborted (StopCancelled); the turn end is written either way. An error
// means the turn failed: a *ModelError for a failed model call, an error
// matching ErrBusy or ErrInvalid for a refused prompt, else a log failure.
//
// The prompt is answered when the session is quiescent: a turn its inbox
// started (a background child's notice) runs to its end first, and the
// messages that arrived during the prompt's turn get their turns (also
// reported to c) before Prompt returns (agent/inbox.go).
func (s *Session) Prompt(ctx context.Context, prompt []Content, c Client) (StopReason, error) {
	if err := s.begin(); err != nil {
		return "", err
	}
	defer s.end()
	s.waitStopped(ctx)
	if err := s.acquire(ctx); err != nil {
		if ctx.Err() != nil {
			return StopCancelled, nil
		}
		return "", err
	}
	s.mu.Lock()
	s.ts.quiet = false
	s.ts.answered = nil
	s.mu.Unlock()
	s.settleTitle(titleDeadline())
	stop, err := s.turn(ctx, c, prompt, nil)
	for {
		s.linger(ctx)
		msgs, ok := s.nextInboxTurn(ctx, c.Answered)
		if !ok {
			break
		}
		if _, terr := s.turn(ctx, c, nil, msgs); terr != nil {
			s.eng.log.Warn("a turn the inbox started failed", "session", s.id, "err", terr)
		}
	}
	s.lingerAnswer(ctx)
	return stop, err
}

// titleDeadline is how long a turn waits for the previous turn's title
// call: a title call still running finishes (or is cancelled) first, so
// its records never interleave with the turn's.
func titleDeadline() time.Time { return time.Now().Add(titleGrace) }

// turn runs one turn of the session (holding it): a prompt's, or, with
// prompt nil, one on the messages msgs its inbox holds.
func (s *Session) turn(ctx context.Context, c Client, prompt []Content, msgs []sessionlog.UserMessage) (StopReason, error) {
	r := &run{s: s, e: s.eng, c: c.withDefaults(), turn: s.lastTurn() + 1}
	r.showNotices(ctx)
	started, err := s.waitStarted(ctx)
	if err != nil {
		return StopCancelled, nil
	}
	if _, err := s.emit(ctx, r.e.now(), sessionlog.TypeTurnStart, sessionlog.TurnData{Turn: r.turn}, nil, nil); err != nil {
		return "", err
	}
	s.turnStarted()
	var end turnEnd
	cpReq, isCP, cpErr := parseCheckpointCommand(prompt)
	if isCP && s.eng.cfg.CheckpointDir == "" {
		isCP = false
	}
	switch {
	case s.child && r.turn == s.eng.cfg.FailSubagentTurn:
		end = turnEnd{reason: sessionlog.Failed(errInjectedTurn.Error(), "UNKNOWN")}
	case prompt == nil:
		end = r.steps(ctx, append(r.enterHookContext(ctx, started...), msgs...))
	case isCompactPrompt(prompt):
		end = r.compactCommand(ctx)
	case isCP:
		end = r.checkpointCommand(ctx, cpReq, cpErr)
	default:
		end = r.promptTurn(ctx, prompt, started)
	}
	r.captureAfter(ctx)
	stop, err := r.finish(ctx, end)
	s.turnEnded()
	if err == nil {
		r.afterTurn()
	}
	return stop, err
}

// promptTurn runs the turn of a user's prompt: the PromptSubmit hooks,
// then the steps, the first entering the SessionStart hooks' context, the
// prompt and the PromptSubmit hooks' context.
func (r *run) promptTurn(ctx context.Context, prompt []Content, started []*HookContext) turnEnd {
	added, blocked, reason := r.promptSubmit(ctx, prompt)
	if blocked {
		// As with Claude Code, the prompt is dropped and the hook's reason
		// is shown to the user only.
		msg := "The prompt was blocked by a UserPromptSubmit hook"
		if reason != "" {
			msg += ": " + reason
		}
		r.c.Updates.Thought(ctx, msg+"\n")
		r.s.keepStarted(started)
		return endWith(sessionlog.EndBlocked, StopEndTurn)
	}
	if ctx.Err() != nil {
		return aborted()
	}
	first := r.enterHookContext(ctx, started...)
	msg, links, err := r.promptMessage(ctx, prompt)
	if err == nil {
		err = r.recordLinks(ctx, msg, links)
	}
	if err != nil {
		return failEnd(err)
	}
	first = append(first, msg)
	r.s.setInvoked(r.s.invokedSkills(ctx, r.turn, prompt))
	return r.steps(ctx, append(first, added...))
}

// showNotices shows the engine's notices, and the skill files that cannot
// be used, to the client of the session's first prompt in this process.
func (r *run) showNotices(ctx context.Context) {
	r.s.mu.Lock()
	done := r.s.noticed
	r.s.noticed = true
	r.s.mu.Unlock()
	if done {
		return
	}
	for _, n := range r.e.cfg.Notices {
		notify(ctx, r.c.Updates, textNotice(hookWarning(n)))
	}
	for _, p := range r.s.skillProblems(ctx, r.turn) {
		notify(ctx, r.c.Updates, textNotice(p+"\n"))
	}
	r.s.mu.Lock()
	mcpProblems := r.s.mcpProblems
	r.s.mcpProblems = nil
	r.s.mu.Unlock()
	for _, p := range mcpProblems {
		notify(ctx, r.c.Updates, textNotice(p+"\n"))
	}
}

// run is one turn in progress.
type run struct {
	s    *Session
	e    *Engine
	c    Client
	turn int
	// next are the messages the next step enters first (PostTool hooks'
	// context); stopContinues counts the Stop hooks' continuations.
	next          []sessionlog.UserMessage
	stopContinues int
	// titleFrom is the prompt the model is asked to title once the turn
	// ends (nil: no title call is owed; agent/title.go); titleCall starts
	// that call once its logged request is durable.
	titleFrom *titleMessage
	titleCall func()
}

// turnEnd is how a turn ended: the logged reason and what the caller gets.
type turnEnd struct {
	reason sessionlog.TurnEndReason
	stop   StopReason
	err    error // non-nil: the prompt fails with this error
}

func endWith(kind string, stop StopReason) turnEnd {
	return turnEnd{reason: sessionlog.EndedWith(kind), stop: stop}
}

// aborted is the end of a turn the user cancelled.
func aborted() turnEnd {
	return turnEnd{reason: sessionlog.Aborted(sessionlog.CauseUser), stop: StopCancelled}
}

// failEnd is an error end for a failure inside the loop (a log or
// invariant failure): the prompt answers with the error.
func failEnd(err error) turnEnd {
	return turnEnd{reason: sessionlog.Failed(err.Error(), "UNKNOWN"), err: fmt.Errorf("turn failed: %w", err)}
}

// closeTimeout bounds the writes that close a turn or a step after its
// context was cancelled.
const closeTimeout = 10 * time.Second

// closing is the context of the writes that close a turn: they happen even
// when ctx was cancelled (that is what ended the turn), bounded in time.
func closing(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
}

// finish writes the turn end and makes the log durable, whatever ended the
// turn, and returns what the prompt answers. One sync covers the turn
// end, the request of the title call the turn owes (titleRequest) and the
// results of a last step that left its sync to it (step).
func (r *run) finish(ctx context.Context, end turnEnd) (StopReason, error) {
	wctx, cancel := closing(ctx)
	defer cancel()
	if _, err := r.s.emit(wctx, r.e.now(), sessionlog.TypeTurnEnd, sessionlog.TurnEnd(r.turn, end.reason), nil, nil); err != nil {
		// What the turn wrote before is made durable all the same.
		return "", errors.Join(end.err, err, r.s.checkpoint(wctx))
	}
	if end.err == nil {
		r.titleRequest(wctx)
	}
	if err := r.s.checkpoint(wctx); err != nil {
		r.titleCall = nil
		return "", errors.Join(end.err, err)
	}
	if end.err != nil {
		return "", end.err
	}
	return end.stop, nil
}
