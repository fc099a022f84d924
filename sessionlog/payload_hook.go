package sessionlog

import (
	"math"
	"strconv"
	"strings"
)

// The hook records: a hook command invoked at an extension point, and its
// outcome, paired by handlerId. Both are log-only (no surface op) and lie
// inside the turn they name.
const (
	TypeHookInvoked = "hook/invoked"
	TypeHookResult  = "hook/result"
)

// The hook dialects dsh and reel write.
const (
	DialectClaudeCode = "claude-code"
	DialectCodex      = "codex"
)

// HookInvokedData is the data of hook/invoked: the command HandlerID of
// Dialect ran at Point in Turn; Matcher is the matcher group's pattern
// that selected it ("" for a match-all group, omitted).
type HookInvokedData struct {
	Turn      int    `json:"turn"`
	Point     string `json:"point"`
	Dialect   string `json:"dialect"`
	HandlerID string `json:"handlerId"`
	Matcher   string `json:"matcher,omitempty"`
}

// AppendJSON appends {"turn","point","dialect","handlerId","matcher"?}.
func (d HookInvokedData) AppendJSON(b []byte) []byte {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(d.Turn), 10)
	b = append(b, `,"point":`...)
	b = AppendString(b, d.Point)
	b = append(b, `,"dialect":`...)
	b = AppendString(b, d.Dialect)
	b = append(b, `,"handlerId":`...)
	b = AppendString(b, d.HandlerID)
	if d.Matcher != "" {
		b = append(b, `,"matcher":`...)
		b = AppendString(b, d.Matcher)
	}
	return append(b, '}')
}

// HookResultData is the data of hook/result: what the command HandlerID
// decided ("allow", "deny", "ask", "approve", "block", "stop" or "pass"),
// its exit code (nil when it did not exit: killed, timed out, could not
// run), its stderr trimmed and cut (omitted when empty) and its wall-clock
// run time in milliseconds.
type HookResultData struct {
	Turn          int     `json:"turn"`
	Point         string  `json:"point"`
	HandlerID     string  `json:"handlerId"`
	Decision      string  `json:"decision"`
	ExitCode      *int    `json:"exitCode,omitempty"`
	StderrSummary string  `json:"stderrSummary,omitempty"`
	DurationMs    float64 `json:"durationMs"`
}

// AppendJSON appends {"turn","point","handlerId","decision","exitCode"?,
// "stderrSummary"?,"durationMs"}.
func (d HookResultData) AppendJSON(b []byte) []byte {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(d.Turn), 10)
	b = append(b, `,"point":`...)
	b = AppendString(b, d.Point)
	b = append(b, `,"handlerId":`...)
	b = AppendString(b, d.HandlerID)
	b = append(b, `,"decision":`...)
	b = AppendString(b, d.Decision)
	if d.ExitCode != nil {
		b = append(b, `,"exitCode":`...)
		b = strconv.AppendInt(b, int64(*d.ExitCode), 10)
	}
	if d.StderrSummary != "" {
		b = append(b, `,"stderrSummary":`...)
		b = AppendString(b, d.StderrSummary)
	}
	b = append(b, `,"durationMs":`...)
	b = AppendNumber(b, d.DurationMs)
	return append(b, '}')
}

// AppendNumber appends f as JavaScript's JSON.stringify writes a number:
// the shortest digits that read back as f, in plain notation from 1e-6 up
// to 1e21 and in exponent notation (e+21, e-7) outside; NaN and the
// infinities, which JSON cannot hold, as null.
func AppendNumber(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return append(b, "null"...)
	case f == 0:
		return append(b, '0')
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1.5e+21, 1e-07
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[0]
	digits := exp[1:]
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
	}
	b = append(b, mant...)
	b = append(b, 'e', sign)
	return append(b, digits...)
}
