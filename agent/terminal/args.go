package terminal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/reel-agent/reel/agent/tools"
)

// argKind is the JSON type an argument must have.
type argKind int

const (
	argString argKind = iota
	argBool
	argNumber
)

// argSpec declares one argument of a tool.
type argSpec struct {
	name     string
	kind     argKind
	required bool
}

// args are a call's decoded arguments: strings, bools and integers by
// name; an absent (or null) argument is missing.
type args map[string]any

func (a args) str(name string) string {
	s, _ := a[name].(string)
	return s
}

func (a args) boolean(name string, def bool) bool {
	if b, ok := a[name].(bool); ok {
		return b
	}
	return def
}

func (a args) integer(name string) (int, bool) {
	n, ok := a[name].(int)
	return n, ok
}

// maxSafe is the largest integer a JSON number may name here (the
// reference's Number.MAX_SAFE_INTEGER).
const maxSafe = 1<<53 - 1

// decodeArgs is the one strict parse of a terminal tool's arguments: a
// JSON object (empty input and null count as {}) whose members are the
// tool's arguments, each spelled exactly, given once, of its type; a
// number must be an integer. Every problem is a *tools.ArgError.
func decodeArgs(tool string, raw json.RawMessage, specs []argSpec) (args, error) {
	bad := func(arg, format string, a ...any) error {
		return &tools.ArgError{Tool: tool, Arg: arg, Msg: fmt.Sprintf(format, a...)}
	}
	out := args{}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	if !json.Valid(trimmed) {
		return nil, bad("", "malformed JSON")
	}
	if trimmed[0] != '{' {
		return nil, bad("", "want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, bad("", "malformed JSON")
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, bad("", "malformed JSON")
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, bad("", "malformed JSON")
		}
		i := slices.IndexFunc(specs, func(s argSpec) bool { return s.name == key })
		if i < 0 {
			for _, s := range specs {
				if strings.EqualFold(s.name, key) {
					return nil, bad(key, "unknown argument; names are case-sensitive (did you mean %q?)", s.name)
				}
			}
			return nil, bad(key, "unknown argument")
		}
		if seen[key] {
			return nil, bad(key, "given more than once")
		}
		seen[key] = true
		if string(v) == "null" {
			continue
		}
		switch specs[i].kind {
		case argString:
			var s string
			if json.Unmarshal(v, &s) != nil {
				return nil, bad(key, "want a string")
			}
			out[key] = s
		case argBool:
			var b bool
			if json.Unmarshal(v, &b) != nil {
				return nil, bad(key, "want a boolean")
			}
			out[key] = b
		case argNumber:
			var f float64
			if v[0] == '"' || json.Unmarshal(v, &f) != nil {
				return nil, bad(key, "want a number")
			}
			if f != math.Trunc(f) || math.Abs(f) > maxSafe {
				return nil, bad(key, "want a safe integer")
			}
			out[key] = int(f)
		}
	}
	for _, s := range specs {
		if _, ok := out[s.name]; s.required && !ok {
			return nil, bad(s.name, "missing (required)")
		}
	}
	return out, nil
}
