package sessionquery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/agent/tools"
)

// ToolName is the tool's name.
const ToolName = "session_event_read"

// MaxWindow is the largest before or after: the reference's default
// readWindowMax.
const MaxWindow = 50

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, the reference's
// bound on every integer argument.
const maxSafeInteger = 1<<53 - 1

// EventReadArgs are the arguments of session_event_read.
type EventReadArgs struct {
	// SessionID is the target session ("" or the caller's: its own).
	SessionID string
	// Seq is the target event.
	Seq int64
	// Before and After are how many neighbours on each side to summarize.
	Before, After int
}

// argNames returns the argument names, exact and case-sensitive.
func argNames() []string { return []string{"session_id", "seq", "before", "after"} }

// ParseEventReadArgs decodes session_event_read's arguments strictly: a
// JSON object whose members are among session_id (a string), seq (required),
// before and after (integers), each spelled exactly and given once; null is
// absent. seq, before and after are non-negative safe integers; before and
// after at most MaxWindow. Its error is a *tools.ArgError.
func ParseEventReadArgs(raw json.RawMessage) (EventReadArgs, error) {
	argErr := func(arg, msg string) error { return &tools.ArgError{Tool: ToolName, Arg: arg, Msg: msg} }
	var a EventReadArgs
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return a, argErr("seq", "missing (required)")
	}
	if !json.Valid(trimmed) {
		return a, argErr("", "malformed JSON")
	}
	if trimmed[0] != '{' {
		return a, argErr("", "want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	_, _ = dec.Token() // {
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return a, argErr("", "malformed JSON")
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return a, argErr("", "malformed JSON")
		}
		if names := argNames(); !slices.Contains(names, key) {
			for _, n := range names {
				if strings.EqualFold(n, key) {
					return a, argErr(key, fmt.Sprintf("unknown argument; names are case-sensitive (did you mean %q?)", n))
				}
			}
			return a, argErr(key, `unknown argument (want "session_id", "seq", "before" or "after")`)
		}
		if seen[key] {
			return a, argErr(key, "given more than once")
		}
		seen[key] = true
		if string(v) == "null" {
			seen[key] = false
			continue
		}
		switch key {
		case "session_id":
			if err := json.Unmarshal(v, &a.SessionID); err != nil {
				return a, argErr(key, "want a string")
			}
		case "seq":
			n, err := safeInteger(v)
			if err != nil {
				return a, argErr(key, err.Error())
			}
			a.Seq = n
		case "before", "after":
			n, err := safeInteger(v)
			if err == nil && n > MaxWindow {
				err = fmt.Errorf("must be an integer between 0 and %d", MaxWindow)
			}
			if err != nil {
				return a, argErr(key, err.Error())
			}
			if key == "before" {
				a.Before = int(n)
			} else {
				a.After = int(n)
			}
		}
	}
	if !seen["seq"] {
		return a, argErr("seq", "missing (required)")
	}
	return a, nil
}

// safeInteger reads a JSON number that is a non-negative safe integer
// (integral values written with a fraction or exponent, 5.0 or 5e0,
// count, as in JavaScript).
func safeInteger(v json.RawMessage) (int64, error) {
	errNotSafe := fmt.Errorf("must be a non-negative safe integer")
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, errNotSafe
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsNaN(f) || f != math.Trunc(f) || f < 0 || f > maxSafeInteger {
		return 0, errNotSafe
	}
	return int64(f), nil
}
