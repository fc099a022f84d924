package llm

import "fmt"

// Failure codes carried by [ProviderError.Code] and [Failure.Code]. They are
// the codes the dsh format records in failed finish chunks.
const (
	CodeAuth          = "AUTH"           // credentials refused (HTTP 401/403); not retryable
	CodeRateLimit     = "RATE_LIMIT"     // HTTP 429
	CodeServer        = "SERVER"         // HTTP 5xx or an error event inside the stream
	CodeTimeout       = "TIMEOUT"        // the transport timed out
	CodeTransport     = "TRANSPORT"      // connection failed or broke mid-stream
	CodeEmptyResponse = "EMPTY_RESPONSE" // the model finished without any content
	CodeBadRequest    = "BAD_REQUEST"    // the request was refused as malformed (other 4xx); not retryable
)

// ProviderError is a failed model call. Status is the HTTP status when
// there was one (0 otherwise). Message never contains credentials. Err is
// the underlying cause, if any, for errors.Is/As.
type ProviderError struct {
	Status  int
	Code    string
	Message string
	Err     error
}

// Error formats the code, the status when known, and the message.
func (e *ProviderError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("llm: %s (HTTP %d): %s", e.Code, e.Status, e.Message)
	}
	return fmt.Sprintf("llm: %s: %s", e.Code, e.Message)
}

// Unwrap returns the underlying cause.
func (e *ProviderError) Unwrap() error { return e.Err }

// Retryable reports whether repeating the same request may succeed: true for
// rate limits, server errors, timeouts, transport failures and empty
// responses; false for AUTH, BAD_REQUEST and unknown codes.
// The retryable set is the one the dsh retry policy names.
func (e *ProviderError) Retryable() bool {
	switch e.Code {
	case CodeEmptyResponse, CodeRateLimit, CodeServer, CodeTimeout, CodeTransport:
		return true
	}
	return false
}

// FinishChunk returns the finish chunk that records e in a session log:
// {"type":"finish","reason":{"kind":"error","failure":{"message":…,"code":…}}}.
func (e *ProviderError) FinishChunk() Chunk {
	return Chunk{Type: ChunkFinish, Reason: &FinishReason{
		Kind:    FinishError,
		Failure: &Failure{Message: e.Message, Code: e.Code},
	}}
}
