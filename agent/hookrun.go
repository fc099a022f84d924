package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// This file fires the engine's extension points (hook.go) at their places
// in a session's life and turns the hooks' decisions into the turn's
// course:
//
//	SessionStart  when a session opens; its context enters the next prompt's first step
//	PromptSubmit  after turn/start, before the prompt is entered; a block ends the turn blocked
//	PreTool       after tool/call, before the call runs; deny or ask
//	PostTool      after the call ran, before tool/result; block replaces the result
//	Stop          after the step that ended the answer; continue opens another step

// hookOutputBytes bounds each of a hook command's stdout and stderr.
const hookOutputBytes = 1 << 20

// maxStopContinues bounds how many times Stop hooks may make one turn go
// on (Claude Code stops honouring a Stop hook after as many in a row).
const maxStopContinues = 8

// hooks are the configured hooks (none in a break build that ignores them).
func (e *Engine) hooks() []Hook {
	if breakHooks() {
		return nil
	}
	return e.cfg.Hooks
}

// transcriptPather is a Store that keeps each log in a file of its own.
type transcriptPather interface {
	Path(id string) string
}

// hookPoint is the HookPoint of the session in turn (0: outside a turn);
// warn reports to the user of the turn, if any.
func (s *Session) hookPoint(turn int, warn func(string)) *HookPoint {
	e := s.eng
	p := HookPoint{Session: s.id, Cwd: s.cwd, TranscriptPath: s.transcript, Model: s.model(), Mode: s.Mode(), Turn: turn}
	record := func(ctx context.Context, typ string, payload sessionlog.Payload) error {
		// A hook's records are written even when the turn was cancelled
		// while it ran: an invocation is never left without its result.
		wctx, cancel := closing(ctx)
		defer cancel()
		_, err := s.emit(wctx, e.now(), typ, payload, nil, nil)
		return err
	}
	return NewHookPoint(p, s.runHookCommand, record, func(msg string) {
		e.log.Warn("hook", "session", s.id, "turn", turn, "msg", msg)
		if warn != nil {
			warn(msg)
		}
	})
}

// runHookCommand runs a hook command like a bash tool call of the session:
// under its sandbox mode, in its working directory, without the model keys.
func (s *Session) runHookCommand(ctx context.Context, c HookCommand) HookRun {
	var build tools.CommandFunc
	if sb := s.eng.cfg.Sandbox; sb != nil {
		_, build = sb.Hooks(s.Mode(), s.cwd)
	}
	start := time.Now()
	res, err := tools.Exec(ctx, scrubbed(build), tools.ExecSpec{
		Script: c.Script, Workdir: s.cwd, Stdin: c.Stdin, Env: c.Env, Timeout: c.Timeout, MaxOutput: hookOutputBytes,
	})
	return HookRun{
		Exited: res.Exited, ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr,
		TimedOut: res.TimedOut, Err: err, Duration: time.Since(start),
	}
}

// point is the HookPoint of the run's turn; warnings go to its client.
func (r *run) point(ctx context.Context) *HookPoint {
	return r.s.hookPoint(r.turn, func(msg string) { r.c.Updates.Thought(context.WithoutCancel(ctx), hookWarning(msg)) })
}

func hookWarning(msg string) string { return "hook: " + msg + "\n" }

// hookMessage is the user/message of a hook's context.
func (e *Engine) hookMessage(plugin string, texts ...string) sessionlog.UserMessage {
	parts := make([]sessionlog.ContentPart, 0, len(texts))
	for _, t := range texts {
		parts = append(parts, sessionlog.TextPart(t))
	}
	str := sessionlog.AppendString(nil, plugin)
	return sessionlog.UserMessage{
		Content: parts,
		Source:  sessionlog.MessageSource{Kind: "plugin", Extra: []sessionlog.Member{{Key: "plugin", Value: str}}},
		ID:      e.newID(),
	}
}

// hookNotice is how a client is shown a hook's message to the model, live
// and when the session is loaded.
func hookNotice(plugin, text string) string {
	return fmt.Sprintf("[%s] %s\n", plugin, text)
}

// enterHookContext turns hook contexts into messages, telling the client.
func (r *run) enterHookContext(ctx context.Context, hcs ...*HookContext) []sessionlog.UserMessage {
	var out []sessionlog.UserMessage
	for _, hc := range hcs {
		if hc == nil || len(hc.Texts) == 0 {
			continue
		}
		out = append(out, r.e.hookMessage(hc.Plugin, hc.Texts...))
		for _, t := range hc.Texts {
			r.c.Updates.Thought(ctx, hookNotice(hc.Plugin, t))
		}
	}
	return out
}

// promptSubmit runs the PromptSubmit hooks on the prompt's text: the
// messages their context adds, or blocked with the reasons.
func (r *run) promptSubmit(ctx context.Context, prompt []Content) (msgs []sessionlog.UserMessage, blocked bool, reason string) {
	hooks := r.e.hooks()
	if len(hooks) == 0 {
		return nil, false, ""
	}
	var text strings.Builder
	for _, c := range prompt {
		text.WriteString(c.Text)
	}
	p := r.point(ctx)
	var hcs []*HookContext
	for _, h := range hooks {
		d := h.PromptSubmit(ctx, p, text.String())
		if d.Block {
			return nil, true, d.Reason
		}
		hcs = append(hcs, d.Context)
	}
	return r.enterHookContext(ctx, hcs...), false, ""
}

// preTool runs the PreTool hooks: the first that denies or asks decides.
func (r *run) preTool(ctx context.Context, call ToolCall) PreToolDecision {
	hooks := r.e.hooks()
	if len(hooks) == 0 {
		return PreToolDecision{}
	}
	p := r.point(ctx)
	for _, h := range hooks {
		if d := h.PreTool(ctx, p, call); d.Verdict != PreToolPass {
			return d
		}
	}
	return PreToolDecision{}
}

// postTool runs the PostTool hooks on a call's result: the first that
// blocks replaces the result; their contexts wait for the next step.
func (r *run) postTool(ctx context.Context, call ToolCall, res tools.Result) tools.Result {
	hooks := r.e.hooks()
	if len(hooks) == 0 {
		return res
	}
	p := r.point(ctx)
	var hcs []*HookContext
	for _, h := range hooks {
		d := h.PostTool(ctx, p, call, res)
		hcs = append(hcs, d.Context)
		if d.Block {
			res = tools.Result{Text: d.Feedback, IsError: true, Kind: res.Kind, Title: res.Title}
			break
		}
	}
	r.next = append(r.next, r.enterHookContext(ctx, hcs...)...)
	return res
}

// stopHooks runs the Stop hooks when the model ended its answer: the
// messages of those that make the turn go on.
func (r *run) stopHooks(ctx context.Context) []sessionlog.UserMessage {
	hooks := r.e.hooks()
	if len(hooks) == 0 || ctx.Err() != nil {
		return nil
	}
	p := r.point(ctx)
	p.StopHookActive = r.stopContinues > 0
	var out []sessionlog.UserMessage
	for _, h := range hooks {
		d := h.Stop(ctx, p)
		if !d.Continue {
			continue
		}
		if r.stopContinues >= maxStopContinues {
			p.Warn(fmt.Sprintf("a Stop hook asked the turn to go on again after %d continuations; the turn ends here (hooks must stop asking)", r.stopContinues))
			return nil
		}
		out = append(out, r.e.hookMessage(d.Plugin, d.Message))
		r.c.Updates.Thought(ctx, hookNotice(d.Plugin, d.Message))
	}
	if len(out) > 0 {
		r.stopContinues++
	}
	return out
}

// sessionStart runs the SessionStart hooks of a session that just opened
// (source "startup" or "resume"), in the background; the session's first
// prompt waits for them (waitStarted) and enters their context.
func (s *Session) sessionStart(source string) {
	hooks := s.eng.hooks()
	s.started = make(chan struct{})
	// A subagent's session runs no SessionStart hooks (its parent did),
	// also when it is loaded again.
	if len(hooks) == 0 || s.child {
		close(s.started)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stopStart = cancel
	go func() {
		defer close(s.started)
		defer cancel()
		p := s.hookPoint(0, nil)
		var hcs []*HookContext
		for _, h := range hooks {
			if hc := h.SessionStart(ctx, p, source); hc != nil && len(hc.Texts) > 0 {
				hcs = append(hcs, hc)
			}
		}
		s.mu.Lock()
		s.startContext = hcs
		s.mu.Unlock()
	}()
}

// waitStarted waits for the SessionStart hooks and hands out their
// context once.
func (s *Session) waitStarted(ctx context.Context) ([]*HookContext, error) {
	if s.started == nil {
		return nil, nil
	}
	select {
	case <-s.started:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	hcs := s.startContext
	s.startContext = nil
	return hcs, nil
}

// keepStarted gives back SessionStart context a blocked prompt did not
// enter, for the next prompt.
func (s *Session) keepStarted(hcs []*HookContext) {
	if len(hcs) == 0 {
		return
	}
	s.mu.Lock()
	s.startContext = append(hcs, s.startContext...)
	s.mu.Unlock()
}

// hookApproval is the approval a PreTool hook's ask puts to the client.
func hookApproval(call ToolCall, mode sandbox.Mode, reason string) Approval {
	title := fmt.Sprintf("A hook asks before this %s call runs: %s", call.Name, call.Title)
	detail := "A PreToolUse hook asks for your approval"
	if reason != "" {
		detail += ": " + reason
	}
	detail += "\n\nArguments:\n" + string(call.Arguments)
	return Approval{Call: call, Mode: mode, Wanted: mode, Title: title, Detail: detail, Reason: reason}
}
