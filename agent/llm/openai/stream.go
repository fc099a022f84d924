package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/reel-agent/reel/agent/llm"
)

// stream maps SDK chunks to llm chunks. Next runs on the consumer's
// goroutine only; Close may run on any goroutine.
type stream struct {
	ctx    context.Context // the caller's context, to tell cancellation apart
	cancel context.CancelFunc
	sse    *ssestream.Stream[sdk.ChatCompletionChunk]
	key    string
	closed atomic.Bool

	pending []llm.Chunk
	err     error // terminal: io.EOF or a failure, returned once pending is drained

	blocks    []*block
	reasoning *block
	text      *block
	tools     map[int64]*block
	usage     *llm.Usage
	finish    string
	// fill, when set, gives a block's text at its end (llm.BlockFiller):
	// the blocks do not accumulate their deltas then.
	fill func(index int) string
}

// block is an open block being accumulated.
type block struct {
	index int
	typ   string
	id    string
	name  string
	buf   strings.Builder
}

var (
	_ llm.Stream      = (*stream)(nil)
	_ llm.BlockFiller = (*stream)(nil)
)

// FillBlocks implements llm.BlockFiller.
func (s *stream) FillBlocks(fill func(index int) string) { s.fill = fill }

// add appends a delta's text to b, unless the consumer fills the blocks.
func (s *stream) add(b *block, text string) {
	if s.fill == nil {
		b.buf.WriteString(text)
	}
}

func newStream(ctx context.Context, cancel context.CancelFunc, sse *ssestream.Stream[sdk.ChatCompletionChunk], key string) *stream {
	return &stream{ctx: ctx, cancel: cancel, sse: sse, key: key, tools: map[int64]*block{}}
}

// Next implements llm.Stream. Once Close has been called it returns
// llm.ErrClosed, also after io.EOF or a failure.
func (s *stream) Next() (llm.Chunk, error) {
	if s.closed.Load() {
		return llm.Chunk{}, llm.ErrClosed
	}
	for len(s.pending) == 0 {
		if s.err != nil {
			return llm.Chunk{}, s.err
		}
		s.pull()
	}
	c := s.pending[0]
	s.pending[0] = llm.Chunk{} // a block-end's text is not kept alive by the queue
	s.pending = s.pending[1:]
	return c, nil
}

// Close implements llm.Stream. It cancels the request and closes the
// response body, which unblocks a Next reading it.
func (s *stream) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.cancel()
	_ = s.sse.Close()
	return nil
}

// pull reads one SDK event, queuing the chunks it yields or setting err.
func (s *stream) pull() {
	if s.sse.Next() {
		s.handle(s.sse.Current())
		return
	}
	if err := s.sse.Err(); err != nil {
		s.fail(err)
		return
	}
	if s.closed.Load() {
		s.err = llm.ErrClosed
		return
	}
	s.end()
}

func (s *stream) fail(err error) {
	switch {
	case s.ctx.Err() != nil:
		s.err = fmt.Errorf("openai: stream: %w", s.ctx.Err())
	case s.closed.Load():
		s.err = llm.ErrClosed
	default:
		pe := classify(err, 0, s.key)
		if pe.Code == llm.CodeTransport || pe.Code == llm.CodeTimeout {
			pe.Message = "reading the stream: " + pe.Message
		}
		s.err = pe
	}
	s.cancel()
}

// end finishes a stream whose events are exhausted.
func (s *stream) end() {
	s.cancel()
	if s.finish == "" {
		s.err = &llm.ProviderError{Code: llm.CodeTransport, Message: "stream ended before the model finished"}
		return
	}
	for _, b := range s.blocks {
		blk := &llm.Block{Type: b.typ}
		text := b.buf.String()
		if s.fill != nil {
			text = s.fill(b.index)
		}
		if b.typ == llm.BlockToolCall {
			blk.ID, blk.Name, blk.Arguments = b.id, b.name, text
		} else {
			blk.Text = text
		}
		s.pending = append(s.pending, llm.Chunk{Type: llm.ChunkBlockEnd, Index: b.index, Block: blk})
	}
	if s.usage != nil {
		s.pending = append(s.pending, llm.Chunk{Type: llm.ChunkUsage, Usage: s.usage})
	}
	if len(s.blocks) == 0 {
		s.err = &llm.ProviderError{Code: llm.CodeEmptyResponse, Message: "model returned a completed response with no content"}
		return
	}
	s.pending = append(s.pending, llm.Chunk{Type: llm.ChunkFinish, Reason: finishReason(s.finish)})
	s.err = io.EOF
}

// finishReason maps the wire finish_reason onto the recording system's
// vocabulary, as its DeepSeek adapter does: stop, tool-calls, max-tokens
// (length); anything else (content_filter, insufficient_system_resource,
// a future value) is an error finish naming the reason, code upper-cased.
func finishReason(reason string) *llm.FinishReason {
	switch reason {
	case "stop":
		return &llm.FinishReason{Kind: llm.FinishStop}
	case "tool_calls", "function_call":
		return &llm.FinishReason{Kind: llm.FinishToolCalls}
	case "length":
		return &llm.FinishReason{Kind: llm.FinishMaxTokens}
	}
	return &llm.FinishReason{Kind: llm.FinishError, Failure: &llm.Failure{
		Message: "model stopped: " + reason, Code: strings.ToUpper(reason)}}
}

// open starts a block of type typ and queues its block-start.
func (s *stream) open(typ string) *block {
	b := &block{index: len(s.blocks), typ: typ}
	s.blocks = append(s.blocks, b)
	s.pending = append(s.pending, llm.Chunk{Type: llm.ChunkBlockStart, Index: b.index, BlockType: typ})
	return b
}

// deltaExtras are the DeepSeek members of a delta the SDK does not model.
type deltaExtras struct {
	ReasoningContent *string `json:"reasoning_content"`
}

// usageExtras are DeepSeek's cache members of usage.
type usageExtras struct {
	PromptCacheHitTokens *int64 `json:"prompt_cache_hit_tokens"`
}

func (s *stream) handle(c sdk.ChatCompletionChunk) {
	if c.JSON.Usage.Valid() {
		s.setUsage(c.Usage)
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only the first choice is requested
		}
		d := ch.Delta
		var extras deltaExtras
		if raw := d.RawJSON(); raw != "" {
			_ = json.Unmarshal([]byte(raw), &extras)
		}
		if r := extras.ReasoningContent; r != nil && *r != "" {
			if s.reasoning == nil {
				s.reasoning = s.open(llm.BlockReasoning)
			}
			s.add(s.reasoning, *r)
			s.pending = append(s.pending, llm.Chunk{Type: llm.ChunkReasoningDelta, Index: s.reasoning.index, Text: *r})
		}
		for _, text := range []string{d.Content, d.Refusal} {
			if text == "" {
				continue
			}
			if s.text == nil {
				s.text = s.open(llm.BlockText)
			}
			s.add(s.text, text)
			s.pending = append(s.pending, llm.Chunk{Type: llm.ChunkTextDelta, Index: s.text.index, Text: text})
		}
		for _, tc := range d.ToolCalls {
			b := s.tools[tc.Index]
			if b == nil {
				b = s.open(llm.BlockToolCall)
				s.tools[tc.Index] = b
			}
			if b.id == "" {
				b.id = tc.ID
			}
			if b.name == "" {
				b.name = tc.Function.Name
			}
			s.add(b, tc.Function.Arguments)
			s.pending = append(s.pending, llm.Chunk{Type: llm.ChunkToolCallDelta, Index: b.index, ID: b.id, Name: b.name,
				ArgumentsDelta: tc.Function.Arguments})
		}
		if ch.FinishReason != "" {
			s.finish = ch.FinishReason
		}
	}
}

func (s *stream) setUsage(u sdk.CompletionUsage) {
	var extras usageExtras
	_ = json.Unmarshal([]byte(u.RawJSON()), &extras)
	hits := u.PromptTokensDetails.CachedTokens
	if extras.PromptCacheHitTokens != nil {
		hits = *extras.PromptCacheHitTokens
	}
	reasoning := u.CompletionTokensDetails.ReasoningTokens
	s.usage = &llm.Usage{
		InputTokens:     max(u.PromptTokens-hits, 0),
		OutputTokens:    u.CompletionTokens,
		CacheReadTokens: &hits,
		ReasoningTokens: &reasoning,
	}
}
