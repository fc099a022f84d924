package lsp

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/reel-agent/reel/agent/tools"
)

// ToolName is the tool's name as the model calls it.
const ToolName = "lsp"

// The operations of the tool, as the model names them.
const (
	OpDefinition     = "goToDefinition"
	OpReferences     = "findReferences"
	OpImplementation = "goToImplementation"
	OpHover          = "hover"
)

// Operations lists the operations in the schema's order.
func Operations() []string {
	return []string{OpDefinition, OpReferences, OpImplementation, OpHover}
}

// Args are a call's arguments.
type Args struct {
	// Operation is one of Operations.
	Operation string
	// FilePath is the source file, relative to the session's cwd or
	// absolute, as the model gave it.
	FilePath string
	// Line and Character are the one-based cursor (Character in UTF-16
	// code units), as the model gave them.
	Line, Character int
}

// ParseArgs is the one strict parse of a call's arguments: a JSON object
// with exactly the members operation, file_path, line and character, each
// once and spelled exactly; operation one of Operations, file_path a
// non-blank string, line and character positive integers (a number with a
// fraction, or beyond 2^31, is refused). Failures are *tools.ArgError.
func ParseArgs(raw json.RawMessage) (Args, error) {
	fail := func(arg, msg string) (Args, error) {
		return Args{}, &tools.ArgError{Tool: ToolName, Arg: arg, Msg: msg}
	}
	trimmed := bytes.TrimSpace(raw)
	if !json.Valid(trimmed) {
		return fail("", "malformed JSON")
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fail("", "want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	_, _ = dec.Token() // {
	fields := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fail("", "malformed JSON")
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fail("", "malformed JSON")
		}
		if !slices.Contains([]string{"operation", "file_path", "line", "character"}, key) {
			return fail(key, "unknown argument (want operation, file_path, line, character)")
		}
		if _, dup := fields[key]; dup {
			return fail(key, "given more than once")
		}
		fields[key] = v
	}
	var a Args
	str := func(name string) (string, bool) {
		var s string
		v, ok := fields[name]
		if !ok || json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	}
	pos := func(name string) (int, bool) {
		var f float64
		v, ok := fields[name]
		if !ok || json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
			return 0, false
		}
		return int(f), true
	}
	var ok bool
	if a.Operation, ok = str("operation"); !ok || !slices.Contains(Operations(), a.Operation) {
		return fail("operation", "must be one of "+strings.Join(Operations(), ", "))
	}
	if a.FilePath, ok = str("file_path"); !ok || strings.TrimSpace(a.FilePath) == "" {
		return fail("file_path", "must be a non-empty string")
	}
	if a.Line, ok = pos("line"); !ok {
		return fail("line", "must be a positive integer (one-based)")
	}
	if a.Character, ok = pos("character"); !ok {
		return fail("character", "must be a positive integer (one-based)")
	}
	return a, nil
}

// method is the LSP request of an operation.
func method(op string) string {
	switch op {
	case OpDefinition:
		return "textDocument/definition"
	case OpReferences:
		return "textDocument/references"
	case OpImplementation:
		return "textDocument/implementation"
	}
	return "textDocument/hover"
}
