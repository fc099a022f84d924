package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrClosed is returned, wrapped or as is, by [Stream.Next] once
// [Stream.Close] has been called.
var ErrClosed = errors.New("llm: stream closed")

// Request is one model call: the request header (provider and model names,
// call options, system prompt, tool schemas) plus the history.
//
// Tools is a JSON array of {"name","description","parameters"} objects, or
// nil for none. Messages are dsh messages as recorded in the session log
// (user/message data, assistant/message and tool/result data.message), kept
// raw; see [ParseMessage]. MaxTokens 0 and a nil Temperature leave the
// provider's defaults in force.
type Request struct {
	Provider    string            `json:"provider"`
	Model       string            `json:"model"`
	System      string            `json:"system,omitempty"`
	Tools       json.RawMessage   `json:"tools,omitempty"`
	Messages    []json.RawMessage `json:"messages"`
	MaxTokens   int               `json:"maxTokens,omitempty"`
	Temperature *float64          `json:"temperature,omitempty"`
	// ReasoningEffort is the reasoning effort asked of a reasoning model
	// (OpenAI's reasoning_effort: minimal, low, medium, high); "" leaves
	// the provider's default.
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	// Purpose is what the call is for when it is not a step of the
	// conversation: PurposeTitle for a session title ("" for a step). A
	// replayed or scripted model answers such a call from its own source.
	Purpose string `json:"purpose,omitempty"`
	// HeaderReason is the reason of the request/header the step wrote
	// before this call ("" when it inherited the header in force). It is
	// not sent; a replayed model compares it with the recording's.
	HeaderReason string `json:"-"`
	// Turn and Step locate a step's call in the session log (0 for a call
	// that is not a step's: a title). They are not sent; a replayed model
	// finds the recorded request of the call by them.
	Turn, Step int `json:"-"`
	// Memo, when set, keeps the provider's work on Messages for the next
	// request of the same conversation (see [Memo]); it never changes
	// what is sent.
	Memo *Memo `json:"-"`
}

// PurposeTitle marks the model call that titles a session.
const PurposeTitle = "session-title"

// PurposeCompaction marks the model call that summarizes the history for a
// compaction (Turn and Step name the step that compacts).
const PurposeCompaction = "compaction-summary"

// Provider opens model streams.
//
// Concurrency: a Provider is safe for concurrent use; several sessions may
// call Stream at the same time, and each call is independent.
//
// Cancellation: ctx governs the whole call, including the returned stream.
// Cancelling it makes a pending Stream call, or a blocked [Stream.Next],
// return promptly with an error that wraps ctx.Err().
//
// Errors: Stream returns a [*ProviderError] when the provider refused or
// failed the call (after any retries the implementation performs), and an
// error wrapping ctx.Err() when cancelled.
type Provider interface {
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Stream is one model response being received.
//
// Chunks: Next returns the chunks in order (see the package documentation
// for the order), each of which encodes ([Chunk.AppendJSON]). No chunk
// follows a finish chunk, and a stream that reaches io.EOF has returned
// exactly one finish chunk, as its last chunk.
//
// End: the end is sticky. After Next has returned io.EOF or an error, every
// later call returns the same again (until Close, see below). A failure
// mid-stream is a [*ProviderError] (for example TRANSPORT when the
// connection broke, EMPTY_RESPONSE when the model finished with no
// content), or an error wrapping the context's error when cancelled.
//
// Cancellation: the stream lives in the context its Provider.Stream call was
// given. Once that context is done, a Next that blocks, or is blocked,
// returns promptly with an error wrapping ctx.Err() (so that
// errors.Is(err, context.Canceled) holds after a cancel); a Next that need
// not block may still return chunks already received.
//
// Close: Close releases the stream. Once Close has been called, Next returns
// an error wrapping [ErrClosed], whatever happened before (also after
// io.EOF or an error). Close may be called from any goroutine at any time,
// also concurrently with another Close or while Next is blocked; a blocked
// Next then returns promptly, with an error wrapping ErrClosed (or the
// context's error when the context is done too), and a Next racing with
// Close may still return what it had already received. Close is idempotent:
// calls after the first do nothing and return nil. It must be called when
// the consumer is done, whether or not the stream reached io.EOF. After
// Close has returned and no Next is running, the goroutines the stream
// started end on their own (shortly, not necessarily before Close returns).
//
// Concurrency: Next must not be called concurrently with itself; successive
// calls may come from different goroutines.
//
// Package [github.com/reel-agent/reel/agent/llm/llmtest] checks an
// implementation against this contract.
type Stream interface {
	Next() (Chunk, error)
	Close() error
}

// BlockFiller is implemented by a [Stream] that can leave the text of its
// blocks to a consumer that keeps the deltas anyway (the agent loop logs
// every one), so that a long answer is not accumulated twice. After
// FillBlocks, called before the first Next, the stream does not accumulate
// its blocks: a block-end it would have built from a block's deltas gets
// its text (a text or reasoning block) or arguments (a tool-call block)
// from fill, called with the block's index from within Next, which must
// return the concatenation, in order, of the text or arguments of every
// delta at that index the stream has returned.
type BlockFiller interface {
	FillBlocks(fill func(index int) string)
}

// Collect reads s to the end and closes it. It returns the chunks received
// and the first error other than io.EOF.
func Collect(s Stream) ([]Chunk, error) {
	var out []Chunk
	for {
		c, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out, closeErr(s.Close())
		}
		if err != nil {
			_ = s.Close()
			return out, err
		}
		out = append(out, c)
	}
}

func closeErr(err error) error {
	if err != nil {
		return fmt.Errorf("llm: close stream: %w", err)
	}
	return nil
}
