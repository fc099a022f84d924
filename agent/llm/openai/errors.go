package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/reel-agent/reel/agent/llm"
)

// redacted replaces the key wherever redact finds it.
const redacted = "[redacted]"

// minEncodedKey is the shortest key (in bytes) whose encoded forms are
// redacted too: a shorter key's base64 fragments would match ordinary text.
const minEncodedKey = 8

// redact removes every occurrence of key from s, in every encoding it can
// reach a message in: raw; each character JSON-escaped (\u0073, either hex
// case, any number of backslashes, \/ for a slash) or percent-escaped
// (%73, either case, %2573 when escaped again), in any mix with raw
// characters; and base64, standard or URL alphabet, padded or not, at each
// of the three byte alignments the key can have inside a longer encoded
// blob (the characters that depend on the key's bytes alone, which are
// themselves matched with the same per-character escapes). The few bits a
// base64 boundary character shares with the key's neighbours are left.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	s = strings.ReplaceAll(s, key, redacted)
	if len(key) < minEncodedKey {
		return s
	}
	return keyPattern(key).ReplaceAllString(s, redacted)
}

// keyPattern matches the key and its base64 fragments, each character in
// any of its escapes.
func keyPattern(key string) *regexp.Regexp {
	forms := []string{key}
	for _, f := range base64Fragments([]byte(key)) {
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	alts := make([]string, len(forms))
	for i, f := range forms {
		var b strings.Builder
		for _, r := range f {
			b.WriteString(charPattern(r))
		}
		alts[i] = b.String()
	}
	return regexp.MustCompile(strings.Join(alts, "|"))
}

// charPattern matches one character raw, JSON-escaped or percent-escaped.
func charPattern(r rune) string {
	var raw [utf8.UTFMax]byte
	n := utf8.EncodeRune(raw[:], r)
	alts := []string{regexp.QuoteMeta(string(raw[:n]))}
	// JSON: \uXXXX (a surrogate pair beyond the BMP); \/ for a slash.
	var u strings.Builder
	if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
		u.WriteString(`\\+u` + hexPattern(uint16(r1)) + `\\+u` + hexPattern(uint16(r2)))
	} else {
		u.WriteString(`\\+u` + hexPattern(uint16(r)))
	}
	alts = append(alts, u.String())
	if r == '/' {
		alts = append(alts, `\\+/`)
	}
	// Percent: each UTF-8 byte as %XX, the % itself possibly escaped
	// again (%25XX).
	var p strings.Builder
	for _, c := range raw[:n] {
		p.WriteString(`%(?:25)*` + hexDigits(c>>4) + hexDigits(c&0xf))
	}
	alts = append(alts, p.String())
	return "(?:" + strings.Join(alts, "|") + ")"
}

// hexPattern matches v as four hex digits in either case.
func hexPattern(v uint16) string {
	return hexDigits(byte(v>>12)) + hexDigits(byte(v>>8&0xf)) + hexDigits(byte(v>>4&0xf)) + hexDigits(byte(v&0xf))
}

// hexDigits matches one hex digit of value d (0–15) in either case.
func hexDigits(d byte) string {
	const digits = "0123456789abcdef"
	c := digits[d]
	if c >= 'a' {
		return "[" + string(c) + string(c-'a'+'A') + "]"
	}
	return string(c)
}

// base64Fragments returns, for each alignment of key inside a longer
// blob (0, 1 or 2 bytes before it in its 3-byte group) and each alphabet,
// the base64 characters determined by the key's bytes alone.
func base64Fragments(key []byte) []string {
	var out []string
	for align := 0; align < 3; align++ {
		blob := append(make([]byte, align), key...)
		first := (8*align + 5) / 6         // the first character made of key bits only
		last := 8 * (align + len(key)) / 6 // one past the last such character
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			if e := enc.EncodeToString(blob); last > first {
				out = append(out, e[first:last])
			}
		}
	}
	return out
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
