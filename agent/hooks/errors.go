package hooks

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// Sentinel errors; the concrete error is a *ConfigError saying where.
var (
	// ErrNotJSON reports a config file that is not JSON.
	ErrNotJSON = errors.New("hooks: config is not JSON")
	// ErrInvalidMatcher reports a matcher that is not a valid regexp (in
	// Go's RE2 syntax, which lacks lookaround and backreferences).
	ErrInvalidMatcher = errors.New("hooks: invalid matcher")
)

// ConfigError is a hook config that cannot be used: it is not JSON (it
// matches ErrNotJSON; Err is the JSON error) or a runnable group carries
// an invalid matcher (Err is a *MatcherError matching ErrInvalidMatcher).
// No hook of such a config runs.
type ConfigError struct {
	File string // the config's path, "" when parsed from bytes
	Line int    // 1-based line of a JSON syntax error, 0 when unknown
	Err  error
}

// Error says where (file and line, when known) and what is wrong.
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("hooks: ")
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	var me *MatcherError
	if !errors.As(e.Err, &me) {
		b.WriteString("config is not JSON: ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause, and ErrNotJSON for a JSON failure.
func (e *ConfigError) Unwrap() []error {
	var me *MatcherError
	if errors.As(e.Err, &me) {
		return []error{e.Err}
	}
	return []error{ErrNotJSON, e.Err}
}

// MatcherError is an invalid matcher of a runnable group on Event.
type MatcherError struct {
	Dialect Dialect
	Event   string
	Pattern string
	Err     error // the regexp parser's error
}

// Error names the dialect, the pattern and the event, as the reference
// does, and adds the regexp parser's complaint.
func (e *MatcherError) Error() string {
	msg := fmt.Sprintf("invalid %s regex matcher %s on event %s", e.Dialect,
		sessionlog.AppendString(nil, e.Pattern), sessionlog.AppendString(nil, e.Event))
	var se *syntax.Error
	if errors.As(e.Err, &se) {
		msg += " (" + se.Code.String() + ")"
	}
	return msg
}

// Unwrap returns ErrInvalidMatcher and the regexp parser's error.
func (e *MatcherError) Unwrap() []error { return []error{ErrInvalidMatcher, e.Err} }
