package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// StepInfo describes the step a pre-step hook runs before.
type StepInfo struct {
	Session    string
	Turn, Step int
}

// PreStepResult is what a pre-step hook reports. NewSeries declares that
// the step begins a new message series: its request writes a full series
// header even when the header is unchanged.
type PreStepResult struct {
	NewSeries bool
}

// PreStep runs before each step's request is assembled (after the step's
// user messages are on the log). It may append to the log through the
// agent (compaction does); it must honour ctx.
type PreStep func(ctx context.Context, info StepInfo) (PreStepResult, error)

// ChainPreSteps runs hooks in order and merges their results, so a wrapper
// never drops a series declaration made by an inner hook.
func ChainPreSteps(hooks ...PreStep) PreStep {
	return func(ctx context.Context, info StepInfo) (PreStepResult, error) {
		var out PreStepResult
		for _, h := range hooks {
			if h == nil {
				continue
			}
			r, err := h(ctx, info)
			out.NewSeries = out.NewSeries || r.NewSeries
			if err != nil {
				return out, err
			}
		}
		return out, nil
	}
}

// Compaction defaults.
const (
	// defaultContextWindow is the window (tokens) assumed when neither the
	// flag nor the model says otherwise.
	defaultContextWindow = 128000
	// pressureShare is the share of the window that triggers compaction.
	pressureShare = 0.8
	// keepTurns is how many recent user turns compaction keeps intact.
	keepTurns = 1
	// trimAbove is the tool-result size (bytes of text) that trimming shrinks.
	trimAbove = 8000
)

// estimateTokens is a cheap size estimate of a request (4 bytes a token).
func estimateTokens(req sessionlog.Request, h sessionlog.RequestHeader) int {
	n := len(h.System) + len(h.Tools)
	for _, m := range req.Messages {
		n += len(m)
	}
	return n / 4
}

// pressureHook is the automatic compaction: when the next request would
// exceed the configured share of the context window, it first trims large
// old tool results, then, if still needed, summarizes the oldest history.
//
// u is shown the compaction (agent.Compactor), if one happens.
func (e *Engine) pressureHook(s *Session, u Updates) PreStep {
	return func(ctx context.Context, info StepInfo) (PreStepResult, error) {
		limit := int(float64(s.contextWindow()) * pressureShare)
		over := func() bool {
			h := s.assembleHeader(s.Mode(), s.approval())
			s.mu.Lock()
			req := s.log.Log().CurrentRequest()
			s.mu.Unlock()
			return estimateTokens(req, h) > limit
		}
		if !over() {
			return PreStepResult{}, nil
		}
		trimmed, err := e.trimToolResults(ctx, s)
		if err != nil {
			return PreStepResult{}, err
		}
		if trimmed > 0 && !over() {
			return PreStepResult{NewSeries: true}, nil
		}
		done, err := e.compact(ctx, s, u, info.Turn, info.Step, "auto")
		return PreStepResult{NewSeries: done || trimmed > 0}, err
	}
}

// trimToolResults replaces large tool results outside the most recent turn
// with a short note, one single-entry replace each (every data field but the
// content is kept). It returns how many it trimmed.
func (e *Engine) trimToolResults(ctx context.Context, s *Session) (int, error) {
	s.mu.Lock()
	lg := s.log.Log()
	seqs := append([]int(nil), lg.Surface().Seqs()...)
	keepFrom := recentCut(lg, seqs, keepTurns)
	var todo []sessionlog.Event
	for _, seq := range seqs[:keepFrom] {
		e := lg.Event(seq)
		if e.Type != sessionlog.TypeToolResult {
			continue
		}
		if size := resultTextSize(e); size > trimAbove {
			todo = append(todo, *e)
		}
	}
	s.mu.Unlock()
	n := 0
	for i := range todo {
		data, err := trimmedData(&todo[i])
		if err != nil {
			return n, err
		}
		if _, err := s.emit(ctx, e.now(), sessionlog.TypeToolResult, data,
			sessionlog.ReplaceOp(todo[i].Seq, todo[i].Seq), []int{todo[i].Seq}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func resultTextSize(e *sessionlog.Event) int {
	m := parsed(e)
	n := 0
	for _, p := range m.Content {
		for _, c := range p.Content {
			n += len(c.Text)
		}
	}
	return n
}

// trimmedData rewrites a tool/result's message content to a note, keeping
// every other field as it was.
func trimmedData(e *sessionlog.Event) (sessionlog.ToolResultData, error) {
	d, err := sessionlog.DecodeData[sessionlog.ToolResultData](e)
	if err != nil {
		return d, err
	}
	c := d.Message.Content
	if len(c) == 0 || c[0].Type != sessionlog.PartToolResult {
		return d, fmt.Errorf("seq %d: tool result has no tool-result part", e.Seq)
	}
	note := fmt.Sprintf("[output trimmed to save context: %d bytes; the full result is in the session log at seq %d]", resultTextSize(e), e.Seq)
	d.Message.Content = []sessionlog.ContentPart{sessionlog.ToolResultPart(c[0].ToolCallID, note, c[0].IsError)}
	return d, nil
}

// recentCut returns the surface position where the most recent keep user
// turns begin, moved earlier until the cut separates no tool call from its
// result (tool-pairing balance 0). 0 means nothing can be cut.
func recentCut(lg *sessionlog.Log, seqs []int, keep int) int {
	cut := len(seqs)
	for i := len(seqs) - 1; i >= 0 && keep > 0; i-- {
		e := lg.Event(seqs[i])
		if e.Type == sessionlog.TypeUserMessage && isUserPrompt(e) {
			keep--
			cut = i
		}
	}
	if keep > 0 {
		return 0
	}
	balance := lg.PairingBalance()
	for cut > 0 && balance[cut] != 0 {
		cut--
	}
	return cut
}

// isUserPrompt reports whether a user/message came from the user (not a
// compaction summary).
func isUserPrompt(e *sessionlog.Event) bool {
	var d struct {
		Source struct {
			Kind string `json:"kind"`
		} `json:"source"`
	}
	return json.Unmarshal(e.Data, &d) == nil && d.Source.Kind == "user"
}

// compactionSystem is the system prompt of the summary call.
const compactionSystem = "You summarize a coding session so it can continue with less context. Write a concise summary of the conversation so far: the user's goals, decisions made, files read or changed (with paths), commands run and their outcomes, and what remains to do. Do not call tools."

// compact summarizes the oldest surface range that keeps the most recent
// turn intact and never separates a tool call from its result, logging
// compaction/start, compaction/summary (the model call, marked as a local
// stream call so replay serves it from the log), the replacing
// user/message and compaction/end. It reports whether it replaced anything.
// An automatic compaction is shown to u as it runs (in progress, then
// completed with its summary, or failed); /compact shows its result itself.
func (e *Engine) compact(ctx context.Context, s *Session, u Updates, turn, step int, reason string) (bool, error) {
	s.mu.Lock()
	lg := s.log.Log()
	seqs := append([]int(nil), lg.Surface().Seqs()...)
	cut := recentCut(lg, seqs, keepTurns)
	if reason == "manual" && cut < 2 {
		// Nothing older than the last turn: summarize everything there is.
		cut = recentCut(lg, seqs, 0)
	}
	var msgs []json.RawMessage
	if cut >= 2 {
		for _, seq := range seqs[:cut] {
			m, _ := sessionlog.ProjectMessage(lg.Event(seq))
			msgs = append(msgs, m)
		}
	}
	s.mu.Unlock()
	if cut < 2 {
		e.log.Info("nothing to compact", "session", s.id, "reason", reason)
		return false, nil
	}
	shadowed := seqs[:cut]
	startSeq, err := s.emit(ctx, e.now(), sessionlog.TypeCompactionStart, sessionlog.CompactionStartData{
		Turn: turn, Step: step, Reason: reason,
		Start: shadowed[0], End: shadowed[len(shadowed)-1], Messages: len(shadowed),
	}, nil, nil)
	if err != nil {
		return false, err
	}
	id := "compaction-" + strconv.Itoa(startSeq)
	auto := reason == "auto"
	if auto {
		showCompaction(ctx, u, Compaction{ID: id, Status: "in_progress"})
	}
	ask := sessionlog.UserMessage{Content: []sessionlog.ContentPart{sessionlog.TextPart("Summarize the conversation above for the continuation of this session.")}}
	msgs = append(msgs, ask.AppendJSON(nil))
	model := s.model()
	req := llm.Request{Provider: e.cfg.Provider, Model: model, System: compactionSystem, Messages: msgs, MaxTokens: summaryMaxTokens,
		Purpose: llm.PurposeCompaction, Turn: turn, Step: step}
	text, output, usage, err := e.summaryCall(ctx, s, req)
	if err != nil {
		_, _ = s.emit(context.WithoutCancel(ctx), e.now(), sessionlog.TypeCompactionEnd, sessionlog.CompactionFailed(turn, step, err.Error()), nil, nil)
		if auto {
			status := "failed"
			if ctx.Err() != nil {
				status = "cancelled"
			}
			showCompaction(context.WithoutCancel(ctx), u, Compaction{ID: id, Status: status, Error: err.Error()})
		}
		return false, fmt.Errorf("compaction summary: %w", err)
	}
	sum := sessionlog.CompactionSummaryData{Provider: e.cfg.Provider, Model: model, MaxTokens: summaryMaxTokens,
		RawOutput: output, Usage: usage, LLMStreamCall: true}
	if _, err := s.emit(ctx, e.now(), sessionlog.TypeCompactionSum, sum, nil, nil); err != nil {
		return false, err
	}
	summary := sessionlog.UserMessage{
		Content: []sessionlog.ContentPart{sessionlog.TextPart("Summary of the earlier conversation (compacted):\n\n" + text)},
		Source:  sessionlog.CompactionSource(),
		ID:      e.newID(),
	}
	if _, err := s.emit(ctx, e.now(), sessionlog.TypeUserMessage, summary,
		sessionlog.ReplaceOp(shadowed[0], shadowed[len(shadowed)-1]), shadowed); err != nil {
		return false, err
	}
	if _, err := s.emit(ctx, e.now(), sessionlog.TypeCompactionEnd, sessionlog.CompactionDone(turn, step), nil, nil); err != nil {
		return false, err
	}
	s.mu.Lock()
	s.newSeries = true
	s.compacted = Compaction{ID: id, Status: "completed", Summary: text}
	s.mu.Unlock()
	if auto {
		showCompaction(ctx, u, Compaction{ID: id, Status: "completed", Summary: text, Notice: autoCompacted()})
	}
	return true, s.checkpoint(ctx)
}

// summaryMaxTokens caps the summary call.
const summaryMaxTokens = 4096

// summaryCall streams the summary model call and returns its text, its
// output blocks (as raw JSON) and its usage.
func (e *Engine) summaryCall(ctx context.Context, s *Session, req llm.Request) (string, []byte, json.RawMessage, error) {
	if err := s.checkpoint(ctx); err != nil {
		return "", nil, nil, err
	}
	stream, err := s.provider.Stream(ctx, req)
	if err != nil {
		return "", nil, nil, err
	}
	defer stream.Close()
	var asm llm.Assembler
	budget := newResponseBudget(e.maxResponseBytes())
	for {
		c, err := stream.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, nil, err
		}
		if !budget.admit(c) {
			return "", nil, nil, fmt.Errorf("the summary call streamed more than %d bytes (--max-response-bytes)", budget.limit)
		}
		if _, err := asm.Add(c); err != nil {
			return "", nil, nil, err
		}
	}
	// A summary stream without a finish chunk is still a summary.
	if _, err := asm.Finish(); err != nil && !errors.Is(err, llm.ErrNoFinish) {
		return "", nil, nil, err
	}
	text := asm.Text()
	if text == "" {
		return "", nil, nil, errors.New("the summary call returned no text")
	}
	var usage json.RawMessage
	if u := asm.Usage(); u != nil {
		usage = u.AppendJSON(nil)
	}
	return text, asm.Content(), usage, nil
}

// compactCommand handles a /compact prompt: it compacts now, in the turn
// the prompt opened, and reports the result as agent text.
func (r *run) compactCommand(ctx context.Context) turnEnd {
	done, err := r.e.compact(ctx, r.s, r.c.Updates, r.turn, 0, "manual")
	switch {
	case err != nil && ctx.Err() != nil:
		return aborted()
	case err != nil:
		return turnEnd{reason: sessionlog.Failed(err.Error(), "COMPACTION"), err: fmt.Errorf("compaction failed: %w", err)}
	case done:
		r.s.mu.Lock()
		c := r.s.compacted
		r.s.mu.Unlock()
		c.Text = "Compacted the earlier conversation into a summary; the next request starts a new series."
		showCompaction(ctx, r.c.Updates, c)
	default:
		r.c.Updates.Text(ctx, "Nothing to compact yet.")
	}
	return endWith(sessionlog.EndCompleted, StopEndTurn)
}
