package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// maxSteps bounds the steps of one turn.
const maxSteps = 100

// callResult is the outcome of a model call: the seqs of its logged
// chunks and what they assemble to.
type callResult struct {
	chunkSeqs []int
	// deltaSeqs are the seqs of the logged deltas by block index, so
	// closing a block reads its own deltas, not the whole call's.
	deltaSeqs map[int][]int
	asm       llm.Assembler
	finish    string
	// cut is set when the response outgrew the cap on its bytes and reel
	// stopped its stream (agent/streamcap.go).
	cut bool
	// keepsText is set once asm holds the text of the deltas (see
	// callModel: it is assembled without it while streaming).
	keepsText bool
	// endBuf is the whole buffer of the block-end unfilledBlockEnd encoded
	// last, its data at endAt (room before and after it); inPlace is that
	// buffer once the log no longer holds it (it reads the block-end from
	// the store), for the message to be encoded around the block.
	endBuf  []byte
	endAt   int
	inPlace *inPlaceBlock
}

// inPlaceBlock is a buffer that holds a block's encoding (the block member
// of its block-end) at buf[at:at+n], free around it: the assistant message
// citing the block is encoded around those bytes, not with a copy of them.
// raw is the first byte of the block as the assembler holds it (a view of
// the stored block-end), which identifies the block among the message's.
type inPlaceBlock struct {
	buf   []byte
	at, n int
	raw   *byte
}

// Room unfilledBlockEnd leaves before and after a block-end for the
// message to be encoded around its block (inPlaceBlock).
const (
	inPlaceHead = 4 << 10
	inPlaceTail = 4 << 10
)

// steps runs the turn's steps until one ends it.
func (r *run) steps(ctx context.Context, pending []sessionlog.UserMessage) (end turnEnd) {
	// A step cut at the token limit makes the turn's end max-tokens even
	// when a Stop hook made it go on and a later step completed.
	maxed := false
	defer func() {
		if maxed && end.err == nil && end.stop == StopEndTurn {
			end = endWith(sessionlog.EndMaxTokens, StopMaxTokens)
		}
	}()
	for step := 1; ; step++ {
		if step > maxSteps {
			// The log records the limit as the turn's failure (code
			// STEP_LIMIT); the client is told ACP's max_turn_requests.
			msg := fmt.Sprintf("the turn exceeded %d steps", maxSteps)
			return turnEnd{reason: sessionlog.Failed(msg, "STEP_LIMIT"), stop: StopMaxTurnRequests}
		}
		end, more := r.step(ctx, step, pending)
		pending, r.next = r.next, nil
		if more {
			continue
		}
		if end.err != nil || (end.stop != StopEndTurn && end.stop != StopMaxTokens) {
			return end
		}
		// The model ended its answer: a Stop hook may make the turn go on.
		pending = r.stopHooks(ctx)
		if ctx.Err() != nil {
			return aborted() // cancelled while a Stop hook ran
		}
		if len(pending) == 0 {
			return end
		}
		if end.stop == StopMaxTokens {
			maxed = true
		}
	}
}

// step runs one step; more reports whether another step follows.
func (r *run) step(ctx context.Context, step int, pending []sessionlog.UserMessage) (end turnEnd, more bool) {
	s := r.s
	stepData := sessionlog.StepData{Turn: r.turn, Step: step}
	s.mu.Lock()
	desc := s.descriptor
	s.descriptor = nil
	s.mu.Unlock()
	if desc != nil {
		// A child's descriptor, when its first step is admitted (dsh's place).
		if _, err := s.emit(ctx, r.e.now(), sessionlog.TypeSubagentDescriptor, *desc, nil, nil); err != nil {
			return r.failed(ctx, err), false
		}
	}
	if _, err := s.emit(ctx, r.e.now(), sessionlog.TypeStepStart, stepData, nil, nil); err != nil {
		return r.failed(ctx, err), false
	}
	// Messages for the next step (a background child's report or notice)
	// join the turn here.
	end, more = r.stepBody(ctx, step, append(s.claimStep(), pending...))
	// step/end is written even when the step's context was cancelled.
	wctx, cancel := closing(ctx)
	defer cancel()
	if _, err := s.emit(wctx, r.e.now(), sessionlog.TypeStepEnd, stepData, nil, nil); err != nil {
		return failEnd(err), false
	}
	// The step's results are made durable now, or, when the step ends the
	// turn and nothing runs before the turn's end is written (no Stop
	// hook, no workspace capture), by the turn end's own sync (finish):
	// one write and one sync for both. Either way they are durable before
	// the prompt answers, before any model call or tool run that follows.
	if more || !r.quietEnd() {
		if err := s.checkpoint(wctx); err != nil {
			return failEnd(err), false
		}
	}
	return end, more
}

// quietEnd reports whether nothing runs between the end of the turn's last
// step and its turn/end: no Stop hook is configured and no workspace
// capture is owed (captureAfter).
func (r *run) quietEnd() bool {
	return len(r.e.hooks()) == 0 && !r.s.captureOwed(r.turn)
}

// stepBody is a step between its step/start and step/end: the entered user
// messages, the pre-step hooks, the model call and the tool calls.
func (r *run) stepBody(ctx context.Context, step int, pending []sessionlog.UserMessage) (turnEnd, bool) {
	s := r.s
	for _, m := range pending {
		if _, err := s.emit(ctx, r.e.now(), sessionlog.TypeUserMessage, m, sessionlog.AppendOp(), nil); err != nil {
			return r.failed(ctx, err), false
		}
	}
	if end, ok := r.preStep(ctx, step); !ok {
		return end, false
	}
	showTitle := r.titleFallback(ctx)
	req, err := r.e.prepareRequest(ctx, s)
	if err != nil {
		return r.failed(ctx, err), false
	}
	if showTitle != nil {
		// The title is shown once it is durable (prepareRequest's sync).
		showTitle()
	}
	req.Turn, req.Step = r.turn, step
	if ctx.Err() != nil {
		return aborted(), false
	}
	res, callErr := r.callWithRetry(ctx, step, req)
	if ctx.Err() != nil {
		// Cancelled mid-stream: keep what arrived as an interrupted message.
		return r.interrupted(ctx, step, res), false
	}
	if callErr != nil {
		return r.modelFailure(context.WithoutCancel(ctx), step, callErr), false
	}
	if _, err := s.emit(ctx, r.e.now(), sessionlog.TypeAssistantMessage, r.e.assistantData(r.turn, step, r.s.model(), res, false), sessionlog.AppendOp(), res.chunkSeqs); err != nil {
		return failEnd(err), false
	}
	if u := res.asm.Usage(); u != nil {
		use := contextUsage(u, r.s.contextWindow())
		use.Spent = s.Spent()
		r.c.Updates.Usage(ctx, use)
	}
	calls := res.asm.ToolCalls()
	// A response cut at the token limit may end in a truncated tool call:
	// none of its calls runs (the recording system's rule).
	if len(calls) == 0 || res.finish == llm.FinishMaxTokens {
		return endOfAnswer(res.finish), false
	}
	cancelled := false
	if allSubagentCalls(calls) {
		if err := r.parallelCalls(ctx, step, calls, &cancelled); err != nil {
			return failEnd(err), false
		}
	} else {
		for _, c := range calls {
			if err := r.toolCall(ctx, step, c, &cancelled); err != nil {
				return failEnd(err), false
			}
		}
	}
	if cancelled || ctx.Err() != nil {
		return aborted(), false
	}
	return turnEnd{}, true
}

// failed ends the turn after a failed write: aborted when the write failed
// because the turn was cancelled (a cancel may land between any two
// writes), an error otherwise.
func (r *run) failed(ctx context.Context, err error) turnEnd {
	if ctx.Err() != nil {
		return aborted()
	}
	return failEnd(err)
}

// preStep runs the pre-step hooks (compaction first); ok is false when
// the turn ends there.
func (r *run) preStep(ctx context.Context, step int) (turnEnd, bool) {
	hooks := ChainPreSteps(r.e.pressureHook(r.s, r.c.Updates), r.e.cfg.PreStep)
	pre, err := hooks(ctx, StepInfo{Session: r.s.id, Turn: r.turn, Step: step})
	if pre.NewSeries {
		r.s.mu.Lock()
		r.s.newSeries = true
		r.s.mu.Unlock()
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return aborted(), false
	case err != nil:
		return failEnd(err), false
	}
	return turnEnd{}, true
}

// interrupted logs what a cancelled model call streamed so far as an
// interrupted assistant message, and ends the turn aborted.
func (r *run) interrupted(ctx context.Context, step int, res *callResult) turnEnd {
	if len(res.chunkSeqs) > 0 {
		data := r.e.assistantData(r.turn, step, r.s.model(), res, true)
		if _, err := r.s.emit(context.WithoutCancel(ctx), r.e.now(), sessionlog.TypeAssistantMessage, data, sessionlog.AppendOp(), res.chunkSeqs); err != nil {
			return failEnd(err)
		}
	}
	return aborted()
}

// endOfAnswer is the end of a turn whose last model call asked for no tool.
func endOfAnswer(finish string) turnEnd {
	if finish == llm.FinishMaxTokens {
		return endWith(sessionlog.EndMaxTokens, StopMaxTokens)
	}
	return endWith(sessionlog.EndCompleted, StopEndTurn)
}

// prepareRequest writes the header the step owes and request/context, makes
// the log durable, and builds the model request from the log.
func (e *Engine) prepareRequest(ctx context.Context, s *Session) (llm.Request, error) {
	if err := s.logNarrowing(ctx); err != nil {
		return llm.Request{}, err
	}
	assembled := s.assembleHeader(s.Mode(), s.approval())
	rc := s.requestContext()
	s.mu.Lock()
	var latest *sessionlog.RequestHeader
	if h, _, _, ok := s.log.Log().LatestHeader(); ok {
		latest = &h
	}
	reason := sessionlog.OwedHeader(latest, assembled, s.firstOfInstance, s.newSeries)
	now := e.now()
	if reason != "" {
		if _, err := s.emitLocked(ctx, now, sessionlog.TypeRequestHeader, assembled.Snapshot(reason), nil, nil); err != nil {
			s.mu.Unlock()
			return llm.Request{}, err
		}
	}
	s.firstOfInstance, s.newSeries = false, false
	if _, err := s.emitLocked(ctx, now, sessionlog.TypeRequestContext, rc, nil, nil); err != nil {
		s.mu.Unlock()
		return llm.Request{}, err
	}
	lg := s.log.Log()
	cur := lg.CurrentRequest()
	h, _, _, _ := lg.LatestHeader()
	var inv error
	if e.cfg.Invariant {
		inv = s.invariant.Check(lg.Header(), lg.Events()[:lg.Len()-1], cur)
	}
	s.mu.Unlock()
	if inv != nil {
		return llm.Request{}, inv
	}
	if err := s.checkpoint(ctx); err != nil {
		return llm.Request{}, err
	}
	var cfg struct {
		Provider        string `json:"provider"`
		Model           string `json:"model"`
		ReasoningEffort string `json:"reasoningEffort"`
	}
	_ = json.Unmarshal(h.Config, &cfg)
	return llm.Request{
		Provider: cfg.Provider, Model: cfg.Model, ReasoningEffort: cfg.ReasoningEffort,
		System: h.System, Tools: h.Tools,
		Messages: cur.Messages, MaxTokens: e.cfg.MaxTokens, HeaderReason: reason, Memo: &s.memo,
	}, nil
}

// callModel streams one model call into the log and the client.
func (r *run) callModel(ctx context.Context, step int, req llm.Request) (*callResult, error) {
	res := &callResult{}
	// The log keeps every delta and the stream's block-ends repeat the
	// blocks, so the assembler does not keep the deltas' text too (a long
	// answer would be held once more). A response left without its
	// block-ends (cut, cancelled, failed) is assembled again from the
	// logged chunks, after the last of them is logged (defers run last
	// first).
	res.asm.SkipDeltaText()
	defer func() {
		if err := r.wholeAssembly(res); err != nil {
			r.e.log.Error("reassembling a model response from its logged chunks", "session", r.s.id, "turn", r.turn, "step", step, "err", err)
		}
	}()
	where := fmt.Sprintf("turn %d step %d", r.turn, step)
	r.s.mu.Lock()
	anchor := lastContextSeq(r.s.log.Log().Events())
	r.s.mu.Unlock()
	markMessage(ctx, r.c.Updates, "assistant", anchor)
	stream, err := r.s.provider.Stream(ctx, req)
	if err != nil {
		return res, fmt.Errorf("%s: %w", where, err)
	}
	defer stream.Close()
	limit := r.e.maxResponseBytes()
	budget := newResponseBudget(limit)
	merger := newDeltaMerger()
	// deltaTypes is the type of the deltas streamed at each block index;
	// unfilled marks the text and reasoning blocks whose block-end the
	// stream leaves empty, to be encoded straight from the logged deltas.
	deltaTypes, unfilled := map[int]string{}, map[int]bool{}
	if f, ok := stream.(llm.BlockFiller); ok {
		// The stream need not accumulate its blocks: every delta is
		// logged (or held by the merger), and the block-ends are built
		// from there. A text or reasoning block-end is encoded as it is
		// logged, from the logged deltas, without its text as a string
		// (a long answer would be held once more).
		f.FillBlocks(func(i int) string {
			switch deltaTypes[i] {
			case llm.ChunkTextDelta, llm.ChunkReasoningDelta:
				unfilled[i] = true
				return ""
			}
			return r.blockPayload(res, merger, i)
		})
	}
	// endEnc is the block member of the block-end chunk logChunks logged
	// last (nil after any other chunk): the assembler keeps it, shared
	// with the log, instead of the block's text.
	var endEnc json.RawMessage
	// unsynced is the chunk data logged since the last checkpoint. A long
	// response is made durable every syncChunkBytes as it streams, and
	// after a large block-end: the store can then hand back what it wrote
	// as views of the file (sessionlog.DataViews), and the log does not
	// hold the answer in memory (three times: deltas, block-end, message).
	unsynced := 0
	logChunks := func(ctx context.Context, cs []llm.Chunk) error {
		for _, c := range cs {
			var data encodedData
			var err error
			var buf []byte
			var at int
			if c.Type == llm.ChunkBlockEnd && unfilled[c.Index] {
				delete(unfilled, c.Index)
				data, err = r.unfilledBlockEnd(res, step, c)
				buf, at, res.endBuf = res.endBuf, res.endAt, nil
			} else {
				data, err = chunkData(r.turn, step, c)
			}
			if err != nil {
				return fmt.Errorf("%s: encode chunk: %w", where, err)
			}
			seq, err := r.s.emit(ctx, r.e.now(), sessionlog.TypeAssistantChunk, data, nil, nil)
			if err != nil {
				return err
			}
			res.chunkSeqs = append(res.chunkSeqs, seq)
			if unsynced += len(data); unsynced >= syncChunkBytes || (c.Type == llm.ChunkBlockEnd && len(data) >= syncChunkBytes/4) {
				if err := r.s.checkpoint(ctx); err != nil {
					return err
				}
				unsynced = 0
				// The assembler keeps the block as the log now holds it.
				stored := r.s.eventData([]int{seq})[0]
				if m, sm := blockMember(c, data), blockMember(c, encodedData(stored)); buf != nil && m != nil && sm != nil && &stored[0] != &data[0] {
					// The log reads the block-end from the store: its
					// buffer is free for the message.
					res.inPlace = &inPlaceBlock{buf: buf[:cap(buf)], at: at + len(data) - len(`}}`) - len(m), n: len(m), raw: &sm[0]}
				}
				data = encodedData(stored)
			}
			endEnc = blockMember(c, data)
			if _, ok := deltaPayload(c); ok {
				if res.deltaSeqs == nil {
					res.deltaSeqs = map[int][]int{}
				}
				res.deltaSeqs[c.Index] = append(res.deltaSeqs[c.Index], seq)
			}
		}
		return nil
	}
	// A merge still held when the call fails or is cancelled is logged
	// all the same: the interrupted message cites every delta shown.
	defer func() { _ = logChunks(context.WithoutCancel(ctx), merger.flush()) }()
	for !res.cut {
		c, err := stream.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return res, fmt.Errorf("%s: %w", where, err)
		}
		if !budget.admit(c) {
			// Past the cap the stream is stopped (its body closed): what
			// arrived is kept and the response finishes as cut at the
			// output limit, so none of its tool calls runs.
			_ = stream.Close()
			res.cut = true
			c = llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishMaxTokens}}
			r.e.log.Warn("model response over the byte cap: stream stopped", "session", r.s.id, "turn", r.turn, "step", step, "limit", limit)
		}
		if _, ok := deltaPayload(c); ok {
			deltaTypes[c.Index] = c.Type
		}
		if err := logChunks(ctx, merger.add(c)); err != nil {
			return res, err
		}
		var d llm.Delta
		if endEnc != nil && c.Type == llm.ChunkBlockEnd {
			d, err = res.asm.AddEnd(c, endEnc)
		} else {
			d, err = res.asm.Add(c)
		}
		endEnc = nil
		switch d.Type {
		case llm.BlockText:
			r.c.Updates.Text(ctx, d.Text)
		case llm.BlockReasoning:
			r.c.Updates.Thought(ctx, d.Text)
		}
		if err != nil {
			return res, err
		}
	}
	if err := logChunks(ctx, merger.flush()); err != nil {
		return res, err
	}
	if err := r.wholeAssembly(res); err != nil {
		return res, fmt.Errorf("%s: %w", where, err)
	}
	if res.cut {
		// The model learns of the cut at its next step; the user now.
		r.s.queueNotice(r.s.cutNotice(limit))
		r.c.Updates.Text(ctx, "\n\n"+cutNote(limit)+"\n")
	}
	fin, err := res.asm.Finish()
	if errors.Is(err, llm.ErrNoFinish) {
		return res, fmt.Errorf("%s: the model stream ended without a finish chunk", where)
	}
	res.finish = fin.Kind
	return res, err
}

// wholeAssembly makes res.asm hold the whole response: when a block was
// left without a block-end that stands for it, the call's logged chunks
// are assembled again, keeping the deltas' text.
func (r *run) wholeAssembly(res *callResult) error {
	if res.keepsText || res.asm.Whole() {
		return nil
	}
	datas := r.s.eventData(res.chunkSeqs)
	var asm llm.Assembler
	for i, raw := range datas {
		var d struct {
			Chunk llm.Chunk `json:"chunk"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("decode logged chunk %d: %w", res.chunkSeqs[i], err)
		}
		_, _ = asm.Add(d.Chunk) // an error finish stays in asm, as it did in res.asm
	}
	res.asm, res.keepsText = asm, true
	return nil
}

// syncChunkBytes is how much chunk data a streaming response logs between
// checkpoints (see callModel).
const syncChunkBytes = 1 << 20

// blockPayload is the text or arguments of every delta at block index i
// of the call so far, in order: the logged ones, then the merge the merger
// m still holds (when m is not nil).
func (r *run) blockPayload(res *callResult, m *deltaMerger, i int) string {
	var sb strings.Builder
	if m != nil {
		sb.Grow(m.streamed[i])
	}
	seqs := res.deltaSeqs[i]
	for k, raw := range r.s.eventData(seqs) {
		var d struct {
			Chunk llm.Chunk `json:"chunk"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			r.e.log.Error("decoding a logged chunk to close its block", "session", r.s.id, "turn", r.turn, "seq", seqs[k], "err", err)
			continue
		}
		if p, ok := deltaPayload(d.Chunk); ok && d.Chunk.Index == i {
			sb.WriteString(p)
		}
	}
	if m != nil && m.holding && m.held.Index == i {
		sb.Write(m.payload)
	}
	return sb.String()
}

// unfilledBlockEnd is the data of the block-end chunk c of a text or
// reasoning block that the stream left empty: c with its block's text, the
// text of every logged delta at c's index in order, encoded piece by piece
// into one buffer sized up front. Every logged delta is already logged
// (the merger logs what it holds before c), and each piece decoded from
// the log is valid UTF-8, so escaping it piece by piece gives the bytes
// escaping the whole text would. The text is never held as a string.
func (r *run) unfilledBlockEnd(res *callResult, step int, c llm.Chunk) (encodedData, error) {
	if c.Raw != nil || c.Block == nil || c.Block.Raw != nil || c.Block.Text != "" ||
		(c.Block.Type != llm.BlockText && c.Block.Type != llm.BlockReasoning) {
		return chunkData(r.turn, step, c)
	}
	empty, err := chunkData(r.turn, step, c)
	if err != nil {
		return nil, err
	}
	const tail = `"}}}` // closes the text, the block, the chunk and the data
	if !bytes.HasSuffix(empty, []byte(`"`+tail)) {
		return nil, fmt.Errorf("block-end %d: unexpected encoding %.80q", c.Index, empty)
	}
	seqs := res.deltaSeqs[c.Index]
	datas := r.s.eventData(seqs)
	n := len(empty)
	for _, raw := range datas {
		n += len(raw) // bounds the escaped text the delta adds
	}
	// A delta this call logged typed is its head and a JSON string: its
	// escaped text is copied as it is (the bytes escaping its decoded
	// text again would give).
	var heads [2][]byte
	for j, t := range []string{llm.ChunkTextDelta, llm.ChunkReasoningDelta} {
		h, err := chunkData(r.turn, step, llm.Chunk{Type: t, Index: c.Index})
		if err != nil {
			return nil, err
		}
		heads[j] = h[:len(h)-len(`"}}`)]
	}
	// Room around it lets the message be encoded around the block
	// (inPlaceBlock) once the log reads the block-end from the store.
	whole := make([]byte, inPlaceHead, inPlaceHead+n+inPlaceTail)
	b := append(whole[inPlaceHead:], empty[:len(empty)-len(tail)]...)
	read := 0
	for k, raw := range datas {
		// The deltas may be views of the stored log: what was read of
		// them goes back as the block is copied, a few MiB at a time.
		if read += len(raw); read >= releaseEvery {
			r.s.releaseViews()
			read = 0
		}
		if body, ok := escapedText(raw, heads[:]); ok {
			b = append(b, body...)
			continue
		}
		var d struct {
			Chunk llm.Chunk `json:"chunk"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("block-end %d: decode logged chunk %d: %w", c.Index, seqs[k], err)
		}
		p, ok := deltaPayload(d.Chunk)
		if !ok || d.Chunk.Index != c.Index {
			continue
		}
		if !utf8.ValidString(p) {
			// Not from a decoded log; escape the whole text at once.
			blk := *c.Block
			blk.Text = r.blockPayload(res, nil, c.Index)
			c.Block = &blk
			return chunkData(r.turn, step, c)
		}
		start := len(b)
		b = sessionlog.AppendString(b, p)
		// Drop the quotes AppendString puts around the piece.
		copy(b[start:], b[start+1:len(b)-1])
		b = b[:len(b)-2]
	}
	b = append(b, tail...)
	if &b[0] == &whole[:inPlaceHead+1][inPlaceHead] { // not grown away
		res.endBuf, res.endAt = whole, inPlaceHead
	}
	return b, nil
}

// releaseEvery is how much of the stored log a long read goes through
// before it lets the pages it read go (Session.releaseViews).
const releaseEvery = 4 << 20

// escapedText is the escaped text of a logged delta whose data is one of
// heads (up to the text's opening quote), a JSON string's body and the
// closing `"}}`, with no unescaped quote in the body; ok is false for any
// other data.
func escapedText(raw []byte, heads [][]byte) (body []byte, ok bool) {
	for _, h := range heads {
		if len(raw) < len(h)+3 || !bytes.HasPrefix(raw, h) || !bytes.HasSuffix(raw, []byte(`"}}`)) {
			continue
		}
		body = raw[len(h) : len(raw)-3]
		for i := 0; i < len(body); i++ {
			switch body[i] {
			case '\\':
				if i++; i == len(body) {
					return nil, false // the closing quote is escaped
				}
			case '"':
				return nil, false
			}
		}
		return body, true
	}
	return nil, false
}

// chunkData is the data of the assistant/chunk that logs c, encoded once
// (the same bytes as [sessionlog.ChunkData] with c's JSON): a block-end
// that repeats a long answer is not held encoded twice.
func chunkData(turn, step int, c llm.Chunk) (encodedData, error) {
	n := 64 + len(c.Text) + len(c.ArgumentsDelta) + len(c.Raw)
	if c.Block != nil {
		n += len(c.Block.Text) + len(c.Block.Arguments) + len(c.Block.Raw) + len(c.Block.ID) + len(c.Block.Name)
	}
	b := sessionlog.ChunkData{Turn: turn, Step: step}.AppendHead(make([]byte, 0, n+n/16))
	b, err := c.AppendJSON(b)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// blockMember is the block member of data, the logged data of the
// block-end chunk c as [chunkData] encodes it (a subslice, shared), or nil
// when c is not a block-end encoded from its block.
func blockMember(c llm.Chunk, data encodedData) json.RawMessage {
	if c.Type != llm.ChunkBlockEnd || c.Raw != nil || c.Block == nil {
		return nil
	}
	// data is the head, the chunk {"type":"block-end","index":N,"block":…}
	// and the closing brace: the block member is the chunk's last.
	const key = `,"block":`
	i := bytes.Index(data, []byte(`{"type":"block-end","index":`))
	if i < 0 {
		return nil
	}
	j := bytes.Index(data[i:], []byte(key))
	if j < 0 || !bytes.HasSuffix(data, []byte("}}")) {
		return nil
	}
	enc := data[i+j+len(key) : len(data)-2]
	return json.RawMessage(enc[:len(enc):len(enc)])
}

// encodedData is an event's data already encoded. Appended to nothing it
// is itself, not a copy.
type encodedData []byte

// AppendJSON implements sessionlog.Payload.
func (d encodedData) AppendJSON(b []byte) []byte {
	if b == nil {
		return d
	}
	return append(b, d...)
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
// request (the same message series). Before each wait the client gets a
// thought saying what failed and when the next attempt comes; it is not
// written to the log, so reconstruction and replay are unchanged.
func (r *run) callWithRetry(ctx context.Context, step int, req llm.Request) (*callResult, error) {
	for attempt := 1; ; attempt++ {
		res, err := r.callModel(ctx, step, req)
		var pe *llm.ProviderError
		if err == nil || ctx.Err() != nil || !errors.As(err, &pe) || !pe.Retryable() || attempt > maxModelRetries {
			return res, err
		}
		if err := r.retry(ctx, step, attempt, pe); err != nil {
			return res, err
		}
	}
}

// retry logs a failed attempt and waits before the next one.
func (r *run) retry(ctx context.Context, step, attempt int, pe *llm.ProviderError) error {
	s := r.s
	if !errors.Is(pe, llm.ErrStreamFailure) {
		if err := r.logFailure(ctx, step, pe); err != nil {
			return err
		}
	}
	delay := r.e.cfg.RetryDelay << (attempt - 1)
	r.e.log.Warn("retrying model call", "session", s.id, "turn", r.turn, "step", step, "retry", attempt, "code", pe.Code, "status", pe.Status, "delay", delay, "err", pe.Message)
	// The client sees the retry as a thought. It is not logged as model
	// output (the llm/retry event records it), so the log and the requests
	// rebuilt from it do not change.
	notify(ctx, r.c.Updates, textNotice(retryNotice(pe, delay, attempt+1, maxModelRetries+1)))
	if _, err := s.emit(ctx, r.e.now(), sessionlog.TypeLLMRetry, sessionlog.LLMRetryData{
		Turn: r.turn, Step: step, Provider: r.e.cfg.Provider,
		Retry: attempt, MaxRetries: maxModelRetries, DelayMs: int(delay.Milliseconds()),
		Failure: sessionlog.ReasonError{Message: pe.Message, Code: pe.Code},
	}, nil, nil); err != nil {
		return err
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	if _, err := s.emit(ctx, r.e.now(), sessionlog.TypeRequestContext, r.s.requestContext(), nil, nil); err != nil {
		return err
	}
	return s.checkpoint(ctx)
}

// logFailure closes a failed call's stream in the log with its error
// finish chunk.
func (r *run) logFailure(ctx context.Context, step int, pe *llm.ProviderError) error {
	fin, _ := pe.FinishChunk().AppendJSON(nil)
	_, err := r.s.emit(ctx, r.e.now(), sessionlog.TypeAssistantChunk, sessionlog.ChunkData{Turn: r.turn, Step: step, Chunk: fin}, nil, nil)
	return err
}

// modelFailure logs a failed model call and ends the turn with an error.
func (r *run) modelFailure(ctx context.Context, step int, err error) turnEnd {
	var pe *llm.ProviderError
	msg, code := err.Error(), "UNKNOWN"
	me := &ModelError{Message: msg}
	if errors.As(err, &pe) {
		msg, code = pe.Message, pe.Code
		me = &ModelError{Message: msg, Code: pe.Code, Provider: true}
		if code == "" {
			code = "UNKNOWN"
		}
		if !errors.Is(err, llm.ErrStreamFailure) {
			if lerr := r.logFailure(ctx, step, pe); lerr != nil {
				return failEnd(lerr)
			}
		}
	}
	r.e.log.Warn("model call failed", "session", r.s.id, "turn", r.turn, "step", step, "code", code, "err", msg)
	return turnEnd{
		reason: sessionlog.Failed(msg, code),
		err:    me,
	}
}

// retryNotice is the line the client sees before a retry, e.g. "model
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

// contextUsage is the use of a window of that size after a call that used
// u: its whole input (cached or not) and its output.
func contextUsage(u *llm.Usage, window int) ContextUsage {
	used := u.InputTokens + u.OutputTokens
	if u.CacheReadTokens != nil {
		used += *u.CacheReadTokens
	}
	return ContextUsage{Used: int(used), Size: window}
}

// assistantData is the assistant/message of a model call, encoded once:
// its parts share the assembled blocks' strings (typed parts encode as the
// assembler's parts do), and the buffer is sized for them up front.
func (e *Engine) assistantData(turn, step int, model string, res *callResult, interrupted bool) encodedData {
	blocks := res.asm.Blocks()
	parts := make([]sessionlog.ContentPart, len(blocks))
	n := 256
	for i, b := range blocks {
		if b.Raw != nil {
			parts[i] = sessionlog.RawPart(b.Raw)
		} else {
			parts[i] = sessionlog.ContentPart{Type: b.Type, Text: b.Text, ID: b.ID, Name: b.Name, Arguments: b.Arguments}
		}
		n += 64 + len(b.Raw) + len(b.Text) + len(b.ID) + len(b.Name) + len(b.Arguments)
	}
	d := sessionlog.NewAssistantMessage(turn, step, e.cfg.Provider, model, e.newID(), parts...)
	if rs := res.asm.ReplayState(); rs != nil {
		// The recording system's provider envelope, pruned in step with
		// the blocks kept: it travels with the message it describes.
		d.Message.Source.Extra = append(d.Message.Source.Extra, sessionlog.Member{Key: "replayState", Value: rs})
		n += len(rs)
	}
	if u := res.asm.Usage(); u != nil {
		d.Usage = u.AppendJSON(nil)
	}
	d.Interrupted = interrupted
	if ip := res.inPlace; ip != nil {
		for k, p := range parts {
			if len(p.Raw) == ip.n && &p.Raw[0] == ip.raw {
				if b, ok := ip.around(d, k); ok {
					res.inPlace = nil // the buffer is the message's now
					return b
				}
				break
			}
		}
	}
	return d.AppendJSON(make([]byte, 0, n+n/16))
}

// around encodes d, whose part k is the block ip holds, around ip's
// bytes: d encoded with a one-byte stand-in for the part twice (the
// stand-ins differ) tells where the part goes and what precedes and
// follows it. ok is false when what precedes it does not fit the room
// before the block.
func (ip *inPlaceBlock) around(d sessionlog.AssistantMessageData, k int) (encodedData, bool) {
	parts := d.Message.Content
	part := parts[k]
	defer func() { parts[k] = part }()
	parts[k] = sessionlog.RawPart(json.RawMessage("0"))
	a := d.AppendJSON(nil)
	parts[k] = sessionlog.RawPart(json.RawMessage("1"))
	b := d.AppendJSON(nil)
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) != len(b) || i == len(a) || i > ip.at {
		return nil, false
	}
	start := ip.at - i
	copy(ip.buf[start:], a[:i])
	out := append(ip.buf[:ip.at+ip.n], a[i+1:]...)
	return out[start:len(out):len(out)], true
}
