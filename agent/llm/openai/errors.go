package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/reel-agent/reel/agent/llm"
)

// redact removes every occurrence of key from s.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// classify turns a failure into a ProviderError. status is the HTTP status
// of the response, when one arrived. The API error itself is not kept as the
// cause, since it holds the request and so the key; transport errors are.
func classify(err error, status int, key string) *llm.ProviderError {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = strings.TrimSpace(apiErr.RawJSON())
		}
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		return &llm.ProviderError{Status: apiErr.StatusCode, Code: statusCode(apiErr.StatusCode), Message: redact(msg, key)}
	}
	if status >= 400 {
		// An error response whose body the SDK could not read as an error.
		msg := fmt.Sprintf("%s (unreadable error body: %v)", http.StatusText(status), err)
		return &llm.ProviderError{Status: status, Code: statusCode(status), Message: redact(msg, key)}
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		return &llm.ProviderError{Code: llm.CodeServer, Message: redact(streamErrorMessage(streamErr), key)}
	}
	code := llm.CodeTransport
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		code = llm.CodeTimeout
	}
	return &llm.ProviderError{Status: status, Code: code, Message: redact(err.Error(), key), Err: err}
}

// statusCode maps an HTTP error status to a failure code.
func statusCode(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return llm.CodeAuth
	case status == http.StatusTooManyRequests:
		return llm.CodeRateLimit
	case status == http.StatusRequestTimeout:
		return llm.CodeTimeout
	case status >= 500:
		return llm.CodeServer
	default:
		return llm.CodeBadRequest
	}
}

// streamErrorMessage extracts the message of an {"error":…} event.
func streamErrorMessage(e *ssestream.StreamError) string {
	var ev struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(e.Event.Data, &ev) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(ev.Error, &obj) == nil && obj.Message != "" {
			return "error event in stream: " + obj.Message
		}
		var s string
		if json.Unmarshal(ev.Error, &s) == nil && s != "" {
			return "error event in stream: " + s
		}
	}
	return e.Message
}
