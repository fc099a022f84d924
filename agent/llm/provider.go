package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrClosed is returned by [Stream.Next] once the stream has been closed
// by [Stream.Close] (unless it had already ended).
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
}

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
// Next returns the chunks in order (see the package documentation for the
// order) and then io.EOF; after an error or io.EOF it keeps returning the
// same error. A failure mid-stream is a [*ProviderError] (for example
// TRANSPORT when the connection broke, EMPTY_RESPONSE when the model finished
// with no content) or an error wrapping the context's error when cancelled.
//
// Concurrency: Next must be called from one goroutine at a time. Close may be
// called from any goroutine at any time, also while Next is blocked, which
// then returns promptly with an error. Close is idempotent and must be
// called when the consumer is done, whether or not the stream reached io.EOF.
type Stream interface {
	Next() (Chunk, error)
	Close() error
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
