package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// maxSteps bounds the steps of one turn.
const maxSteps = 100

// turnEnd is how a turn ended: the logged reason and what the client gets.
type turnEnd struct {
	reason []byte // turn/end reason JSON
	stop   acp.StopReason
	err    error // non-nil: the prompt answers with this error
}

func endWith(kind string, stop acp.StopReason) turnEnd {
	return turnEnd{reason: jsonObject("kind", kind), stop: stop}
}

// block accumulates one content block of a model response.
type block struct {
	typ        string
	text       []byte
	id, name   string
	args       []byte
	end        *llm.Block
	blockIndex int
}

// callResult is the outcome of a model call.
type callResult struct {
	chunkSeqs []int
	blocks    []*block
	usage     json.RawMessage
	finish    string
}

// runTurn runs one prompt turn on s. It returns the ACP stop reason, or an
// error the prompt answers with.
func (srv *Server) runTurn(ctx context.Context, s *session, prompt []acp.ContentBlock) (acp.StopReason, error) {
	turn := s.lastTurn() + 1
	if _, err := s.emit(ctx, srv.now(), sessionlog.TypeTurnStart, jsonObject("turn", turn), nil, nil); err != nil {
		return "", err
	}
	pending := [][]byte{srv.userMessage(prompt)}
	end := srv.runSteps(ctx, s, turn, pending)
	// The turn end is written even when the turn's context was cancelled.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := s.emit(wctx, srv.now(), sessionlog.TypeTurnEnd, jsonObject("turn", turn, "reason", end.reason), nil, nil); err != nil {
		return "", errors.Join(end.err, err)
	}
	if err := s.checkpoint(wctx); err != nil {
		return "", errors.Join(end.err, err)
	}
	if end.err != nil {
		return "", end.err
	}
	return end.stop, nil
}

// userMessage builds the data of a user/message from ACP prompt content.
func (srv *Server) userMessage(prompt []acp.ContentBlock) []byte {
	var parts [][]byte
	for _, c := range prompt {
		var text string
		switch {
		case c.Text != nil:
			text = c.Text.Text
		case c.ResourceLink != nil:
			text = "@" + c.ResourceLink.Uri
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			text = fmt.Sprintf("<file uri=%q>\n%s\n</file>", r.Uri, r.Text)
		case c.Image != nil:
			text = "[an image was attached; reel does not send images to the model]"
		case c.Audio != nil:
			text = "[an audio clip was attached; reel does not send audio to the model]"
		default:
			continue
		}
		parts = append(parts, jsonObject("type", "text", "text", text))
	}
	return jsonObject(
		"content", jsonArray(parts),
		"source", jsonObject("kind", "user"),
		"role", "user",
		"id", srv.newID(),
	)
}

func (srv *Server) runSteps(ctx context.Context, s *session, turn int, pending [][]byte) turnEnd {
	for step := 1; ; step++ {
		if step > maxSteps {
			return turnEnd{reason: jsonObject("kind", sessionlog.EndError, "error", jsonObject("message", fmt.Sprintf("the turn exceeded %d steps", maxSteps), "code", "STEP_LIMIT")),
				err: fmt.Errorf("turn failed: the turn exceeded %d steps", maxSteps)}
		}
		end, more := srv.runStep(ctx, s, turn, step, pending)
		pending = nil
		if !more {
			return end
		}
	}
}

// failEnd is an error end for a failure inside the loop (a log or
// invariant failure): the prompt answers with the error.
func failEnd(err error) turnEnd {
	return turnEnd{reason: jsonObject("kind", sessionlog.EndError, "error", jsonObject("message", err.Error(), "code", "UNKNOWN")),
		err: fmt.Errorf("turn failed: %w", err)}
}

// runStep runs one step; more reports whether another step follows.
func (srv *Server) runStep(ctx context.Context, s *session, turn, step int, pending [][]byte) (turnEnd, bool) {
	wctx := context.WithoutCancel(ctx)
	stepData := jsonObject("turn", turn, "step", step)
	closeStep := func(end turnEnd) (turnEnd, bool) {
		if _, err := s.emit(wctx, srv.now(), sessionlog.TypeStepEnd, stepData, nil, nil); err != nil {
			return failEnd(err), false
		}
		if err := s.checkpoint(wctx); err != nil {
			return failEnd(err), false
		}
		return end, false
	}
	if _, err := s.emit(ctx, srv.now(), sessionlog.TypeStepStart, stepData, nil, nil); err != nil {
		return failEnd(err), false
	}
	for _, m := range pending {
		if _, err := s.emit(ctx, srv.now(), sessionlog.TypeUserMessage, m, sessionlog.AppendOp(), nil); err != nil {
			return closeStep(failEnd(err))
		}
	}
	hooks := ChainPreSteps(srv.pressureHook(s), srv.cfg.PreStep)
	pre, err := hooks(ctx, StepInfo{Session: s.id, Turn: turn, Step: step})
	if pre.NewSeries {
		s.mu.Lock()
		s.newSeries = true
		s.mu.Unlock()
	}
	if err != nil {
		if ctx.Err() != nil {
			return closeStep(turnEnd{reason: jsonObject("kind", sessionlog.EndAborted, "reason", jsonObject("kind", "user")), stop: acp.StopReasonCancelled})
		}
		return closeStep(failEnd(err))
	}
	req, err := srv.prepareRequest(ctx, s)
	if err != nil {
		return closeStep(failEnd(err))
	}
	if ctx.Err() != nil {
		return closeStep(endWith(sessionlog.EndAborted, acp.StopReasonCancelled))
	}
	res, callErr := srv.callWithRetry(ctx, s, turn, step, req)
	if ctx.Err() != nil {
		// Cancelled mid-stream: keep what arrived as an interrupted message.
		if len(res.chunkSeqs) > 0 {
			data := srv.assistantData(turn, step, res, true)
			if _, err := s.emit(wctx, srv.now(), sessionlog.TypeAssistantMessage, data, sessionlog.AppendOp(), res.chunkSeqs); err != nil {
				return closeStep(failEnd(err))
			}
		}
		return closeStep(turnEnd{reason: jsonObject("kind", sessionlog.EndAborted, "reason", jsonObject("kind", "user")), stop: acp.StopReasonCancelled})
	}
	if callErr != nil {
		return closeStep(srv.modelFailure(wctx, s, turn, step, callErr))
	}
	data := srv.assistantData(turn, step, res, false)
	if _, err := s.emit(ctx, srv.now(), sessionlog.TypeAssistantMessage, data, sessionlog.AppendOp(), res.chunkSeqs); err != nil {
		return closeStep(failEnd(err))
	}
	var calls []*block
	for _, b := range res.blocks {
		if b.typ == llm.BlockToolCall {
			calls = append(calls, b)
		}
	}
	if len(calls) == 0 {
		switch res.finish {
		case llm.FinishLength:
			return closeStep(endWith(sessionlog.EndMaxTokens, acp.StopReasonMaxTokens))
		case llm.FinishContentFilter:
			return closeStep(endWith(sessionlog.EndBlocked, acp.StopReasonRefusal))
		}
		return closeStep(endWith(sessionlog.EndCompleted, acp.StopReasonEndTurn))
	}
	cancelled := false
	for _, c := range calls {
		if err := srv.runToolCall(ctx, s, turn, step, c, &cancelled); err != nil {
			return closeStep(failEnd(err))
		}
	}
	if cancelled || ctx.Err() != nil {
		return closeStep(turnEnd{reason: jsonObject("kind", sessionlog.EndAborted, "reason", jsonObject("kind", "user")), stop: acp.StopReasonCancelled})
	}
	end, _ := closeStep(turnEnd{})
	if end.err != nil {
		return end, false
	}
	return turnEnd{}, true
}

// prepareRequest writes the header the step owes and request/context, makes
// the log durable, and builds the model request from the log.
func (srv *Server) prepareRequest(ctx context.Context, s *session) (llm.Request, error) {
	mode, approval := s.mode(srv.cfg.Mode), s.approval(srv.cfg.Approval)
	assembled := srv.assembleHeader(s.cwd, mode, approval)
	s.mu.Lock()
	var latest *sessionlog.RequestHeader
	if h, _, _, ok := s.log.Log().LatestHeader(); ok {
		latest = &h
	}
	reason := sessionlog.OwedHeader(latest, assembled, s.firstOfInstance, s.newSeries)
	now := srv.now()
	if reason != "" {
		if _, err := s.emitLocked(ctx, now, sessionlog.TypeRequestHeader, sessionlog.HeaderData(assembled, reason), nil, nil); err != nil {
			s.mu.Unlock()
			return llm.Request{}, err
		}
	}
	s.firstOfInstance, s.newSeries = false, false
	if _, err := s.emitLocked(ctx, now, sessionlog.TypeRequestContext, jsonObject("provider", srv.cfg.Provider, "model", srv.cfg.Model), nil, nil); err != nil {
		s.mu.Unlock()
		return llm.Request{}, err
	}
	lg := s.log.Log()
	cur := lg.CurrentRequest()
	h, _, _, _ := lg.LatestHeader()
	var inv error
	if srv.cfg.Invariant {
		inv = sessionlog.CheckRequest(lg.Header(), lg.Events()[:lg.Len()-1], cur)
	}
	s.mu.Unlock()
	if inv != nil {
		return llm.Request{}, inv
	}
	if err := s.checkpoint(ctx); err != nil {
		return llm.Request{}, err
	}
	var cfg struct {
		Provider string `json:"provider"`
		Model    string `json:"model"`
	}
	_ = json.Unmarshal(h.Config, &cfg)
	return llm.Request{
		Provider: cfg.Provider, Model: cfg.Model,
		System: h.System, Tools: h.Tools,
		Messages: cur.Messages, MaxTokens: srv.cfg.MaxTokens,
	}, nil
}

// callModel streams one model call into the log and the client.
func (srv *Server) callModel(ctx context.Context, s *session, turn, step int, req llm.Request) (callResult, error) {
	var res callResult
	where := fmt.Sprintf("turn %d step %d", turn, step)
	stream, err := s.provider.Stream(ctx, req)
	if err != nil {
		return res, fmt.Errorf("%s: %w", where, err)
	}
	defer stream.Close()
	byIndex := map[int]*block{}
	for {
		c, err := stream.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return res, fmt.Errorf("%s: %w", where, err)
		}
		chunkJSON, err := c.AppendJSON(nil)
		if err != nil {
			return res, fmt.Errorf("%s: encode chunk: %w", where, err)
		}
		seq, err := s.emit(ctx, srv.now(), sessionlog.TypeAssistantChunk, jsonObject("turn", turn, "step", step, "chunk", chunkJSON), nil, nil)
		if err != nil {
			return res, err
		}
		res.chunkSeqs = append(res.chunkSeqs, seq)
		switch c.Type {
		case llm.ChunkBlockStart:
			b := &block{typ: c.BlockType, blockIndex: c.Index}
			byIndex[c.Index] = b
			res.blocks = append(res.blocks, b)
		case llm.ChunkTextDelta, llm.ChunkReasoningDelta:
			b := byIndex[c.Index]
			if b == nil {
				b = &block{typ: llm.BlockText, blockIndex: c.Index}
				if c.Type == llm.ChunkReasoningDelta {
					b.typ = llm.BlockReasoning
				}
				byIndex[c.Index] = b
				res.blocks = append(res.blocks, b)
			}
			b.text = append(b.text, c.Text...)
			upd := acp.UpdateAgentMessageText(c.Text)
			if c.Type == llm.ChunkReasoningDelta {
				upd = acp.UpdateAgentThoughtText(c.Text)
			}
			srv.notify(ctx, s, upd)
		case llm.ChunkToolCallDelta:
			b := byIndex[c.Index]
			if b == nil {
				b = &block{typ: llm.BlockToolCall, blockIndex: c.Index}
				byIndex[c.Index] = b
				res.blocks = append(res.blocks, b)
			}
			if c.ID != "" {
				b.id = c.ID
			}
			if c.Name != "" {
				b.name = c.Name
			}
			b.args = append(b.args, c.ArgumentsDelta...)
		case llm.ChunkBlockEnd:
			if b := byIndex[c.Index]; b != nil && c.Block != nil {
				b.end = c.Block
			}
		case llm.ChunkUsage:
			if c.Usage != nil {
				raw, _ := c.AppendJSON(nil)
				var u struct {
					Usage json.RawMessage `json:"usage"`
				}
				_ = json.Unmarshal(raw, &u)
				res.usage = u.Usage
			}
		case llm.ChunkFinish:
			if c.Reason != nil {
				res.finish = c.Reason.Kind
				if c.Reason.Kind == llm.FinishError && c.Reason.Failure != nil {
					return res, &llm.ProviderError{Code: c.Reason.Failure.Code, Message: c.Reason.Failure.Message, Err: errRecordedFailure}
				}
			}
		}
	}
	if res.finish == "" {
		return res, fmt.Errorf("%s: the model stream ended without a finish chunk", where)
	}
	return res, nil
}

// maxModelRetries bounds the retries of a retryable model failure (an empty
// response, a rate limit, a server error, a timeout or a broken transport)
// within one step. This is reel's one retry policy: the live provider makes
// a single attempt per call (reel acp sets openai.Config.MaxAttempts to 1),
// so a failing endpoint gets 1 + maxModelRetries requests per step.
const maxModelRetries = 2

// callWithRetry makes the step's model call, retrying retryable failures:
// each failed attempt is closed in the log with its error finish chunk and
// an llm/retry event, and the retry is a new request/context with the same
// request (the same message series). Before each wait the editor gets an
// agent_thought_chunk saying what failed and when the next attempt comes;
// it is not written to the log, so reconstruction and replay are unchanged.
func (srv *Server) callWithRetry(ctx context.Context, s *session, turn, step int, req llm.Request) (callResult, error) {
	for attempt := 1; ; attempt++ {
		res, err := srv.callModel(ctx, s, turn, step, req)
		var pe *llm.ProviderError
		if err == nil || ctx.Err() != nil || !errors.As(err, &pe) || !pe.Retryable() || attempt > maxModelRetries {
			return res, err
		}
		if !errors.Is(err, errRecordedFailure) {
			fin, _ := pe.FinishChunk().AppendJSON(nil)
			if _, lerr := s.emit(ctx, srv.now(), sessionlog.TypeAssistantChunk, jsonObject("turn", turn, "step", step, "chunk", fin), nil, nil); lerr != nil {
				return res, lerr
			}
		}
		delay := srv.cfg.RetryDelay << (attempt - 1)
		srv.log.Warn("retrying model call", "session", s.id, "turn", turn, "step", step, "retry", attempt, "code", pe.Code, "status", pe.Status, "delay", delay, "err", pe.Message)
		// The editor sees the retry as a thought. It is not logged as model
		// output (the llm/retry event records it), so the log and the
		// requests rebuilt from it do not change.
		srv.notify(ctx, s, acp.UpdateAgentThoughtText(retryNotice(pe, delay, attempt+1, maxModelRetries+1)))
		if _, lerr := s.emit(ctx, srv.now(), "llm/retry", jsonObject(
			"turn", turn, "step", step, "provider", srv.cfg.Provider,
			"retry", attempt, "maxRetries", maxModelRetries, "delayMs", int(delay.Milliseconds()),
			"failure", jsonObject("message", pe.Message, "code", pe.Code),
		), nil, nil); lerr != nil {
			return res, lerr
		}
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return res, ctx.Err()
			case <-t.C:
			}
		}
		if _, lerr := s.emit(ctx, srv.now(), sessionlog.TypeRequestContext, jsonObject("provider", srv.cfg.Provider, "model", srv.cfg.Model), nil, nil); lerr != nil {
			return res, lerr
		}
		if lerr := s.checkpoint(ctx); lerr != nil {
			return res, lerr
		}
	}
}

// errRecordedFailure marks a failure the stream itself logged as a finish chunk.
var errRecordedFailure = errors.New("failure recorded in the stream")

// modelFailure logs a failed model call and ends the turn with an error.
func (srv *Server) modelFailure(ctx context.Context, s *session, turn, step int, err error) turnEnd {
	var pe *llm.ProviderError
	msg, code := err.Error(), "UNKNOWN"
	if errors.As(err, &pe) {
		msg, code = pe.Message, pe.Code
		if code == "" {
			code = "UNKNOWN"
		}
		if !errors.Is(err, errRecordedFailure) {
			fin, _ := pe.FinishChunk().AppendJSON(nil)
			if _, lerr := s.emit(ctx, srv.now(), sessionlog.TypeAssistantChunk, jsonObject("turn", turn, "step", step, "chunk", fin), nil, nil); lerr != nil {
				return failEnd(lerr)
			}
		}
	}
	srv.log.Warn("model call failed", "session", s.id, "turn", turn, "step", step, "code", code, "err", msg)
	return turnEnd{
		reason: jsonObject("kind", sessionlog.EndError, "error", jsonObject("message", msg, "code", code)),
		err:    modelError(pe, msg),
	}
}

// modelError is the ACP error a prompt answers with when the model call
// failed: its message is the provider's own, its code auth-required
// (-32000) for refused credentials and internal error (-32603) otherwise;
// data repeats the failure code for programs. Only what the log records
// goes in (not the HTTP status), so a replay answers exactly as the
// recorded run did. pe is nil for a failure that is not the provider's.
func modelError(pe *llm.ProviderError, msg string) *acp.RequestError {
	data := map[string]any{"error": "turn failed: " + msg}
	if pe == nil {
		return acp.NewInternalError(data)
	}
	if pe.Code != "" {
		data["code"] = pe.Code
	}
	e := &acp.RequestError{Code: acp.NewInternalError(nil).Code, Message: "model call failed: " + msg, Data: data}
	if pe.Code == llm.CodeAuth {
		e.Code = acp.NewAuthRequired(nil).Code
	}
	return e
}

// retryNotice is the line the editor sees before a retry, e.g. "model
// endpoint failed (HTTP 500), retrying in 2 s (attempt 2 of 3)".
func retryNotice(pe *llm.ProviderError, delay time.Duration, next, total int) string {
	what := pe.Code
	if pe.Status != 0 {
		what = fmt.Sprintf("HTTP %d", pe.Status)
	}
	when := "now"
	switch {
	case delay <= 0:
	case delay%time.Second == 0:
		when = fmt.Sprintf("in %d s", delay/time.Second)
	default:
		when = fmt.Sprintf("in %.1f s", delay.Seconds())
	}
	return fmt.Sprintf("model endpoint failed (%s), retrying %s (attempt %d of %d)\n", what, when, next, total)
}

// blockPart renders a finished block as a message content part.
func blockPart(b *block) []byte {
	if b.end != nil {
		switch b.end.Type {
		case llm.BlockText, llm.BlockReasoning:
			return jsonObject("type", b.end.Type, "text", b.end.Text)
		case llm.BlockToolCall:
			return jsonObject("type", "tool-call", "id", b.end.ID, "name", b.end.Name, "arguments", b.end.Arguments)
		}
		if b.end.Raw != nil {
			return b.end.Raw
		}
	}
	switch b.typ {
	case llm.BlockToolCall:
		return jsonObject("type", "tool-call", "id", b.id, "name", b.name, "arguments", string(b.args))
	case llm.BlockReasoning:
		return jsonObject("type", "reasoning", "text", string(b.text))
	}
	return jsonObject("type", "text", "text", string(b.text))
}

// assistantData builds the data of an assistant/message.
func (srv *Server) assistantData(turn, step int, res callResult, interrupted bool) []byte {
	parts := make([][]byte, 0, len(res.blocks))
	for _, b := range res.blocks {
		parts = append(parts, blockPart(b))
	}
	msg := jsonObject(
		"role", "assistant",
		"content", jsonArray(parts),
		"source", jsonObject("kind", "model", "provider", srv.cfg.Provider, "model", srv.cfg.Model),
		"id", srv.newID(),
	)
	kv := []any{"turn", turn, "step", step, "message", msg}
	if res.usage != nil {
		kv = append(kv, "usage", res.usage)
	}
	if interrupted {
		kv = append(kv, "interrupted", true)
	}
	return jsonObject(kv...)
}

// toolCallOf returns the id, name and arguments of a tool-call block.
func toolCallOf(b *block) (id, name, args string) {
	if b.end != nil && b.end.Type == llm.BlockToolCall {
		return b.end.ID, b.end.Name, b.end.Arguments
	}
	return b.id, b.name, string(b.args)
}
