package scenario

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Sentinel errors classify an *Error; test them with errors.Is.
var (
	// ErrSyntax marks a file that is not well-formed JSON.
	ErrSyntax = errors.New("scenario: invalid JSON")
	// ErrUnknownField marks a field the scenario vocabulary does not define,
	// or one that the surrounding op or kind does not accept.
	ErrUnknownField = errors.New("scenario: unknown field")
	// ErrMissingField marks a required field that is absent.
	ErrMissingField = errors.New("scenario: missing field")
	// ErrBadValue marks a field whose value has the wrong JSON type or an
	// invalid value (unknown op, negative index, bad base64, …).
	ErrBadValue = errors.New("scenario: bad value")
	// ErrUnsafePath marks a path that is absolute or escapes its base
	// directory, including workspace symlinks that point outside it.
	ErrUnsafePath = errors.New("scenario: unsafe path")
	// ErrLayout marks a problem with the files of a scenario folder: a
	// missing input.json, a gap in session.N.jsonl numbering, a file where a
	// directory belongs, and so on.
	ErrLayout = errors.New("scenario: bad folder layout")
)

// Error is a problem found while loading a scenario. It names the file and,
// when the problem is inside a JSON document, the field as a path such as
// "steps[2].waitForFile.path". Its Error text is "FILE: FIELD: MSG" (or
// "FILE: MSG" when Field is empty). Err is one of the sentinels above,
// possibly joined with an underlying cause.
type Error struct {
	// File is the path of the offending file or folder entry.
	File string
	// Field is the JSON path inside File ("" when the problem is the file).
	Field string
	// Msg says what is wrong.
	Msg string
	// Err is the classification sentinel, possibly joined with a cause.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Field + ": " + e.Msg
}

// Unwrap returns the classification sentinel (and cause, if any).
func (e *Error) Unwrap() error { return e.Err }

// decoder carries the file name into every error it builds.
type decoder struct {
	file string
}

func (d decoder) errorf(field string, kind error, format string, args ...any) *Error {
	return &Error{File: d.file, Field: field, Msg: fmt.Sprintf(format, args...), Err: kind}
}

// member is one "key": value pair of a JSON object, in document order.
type member struct {
	key string
	val json.RawMessage
}

// syntax checks that data is exactly one JSON value and reports a syntax
// error with its line and column.
func (d decoder) syntax(data []byte) error {
	var raw json.RawMessage
	err := json.Unmarshal(data, &raw)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(data, se.Offset)
		return &Error{File: d.file, Msg: fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, se), Err: errors.Join(ErrSyntax, err)}
	}
	return &Error{File: d.file, Msg: fmt.Sprintf("invalid JSON: %v", err), Err: errors.Join(ErrSyntax, err)}
}

// lineCol converts a byte offset (as reported by json.SyntaxError, which
// points just past the offending byte) into 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off > 0 {
		off-- // point at the offending byte itself
	}
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
			continue
		}
		col++
	}
	return line, col
}

// kindOf names the JSON type of a well-formed raw value.
func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// object splits a well-formed JSON object into its members in document
// order, refusing duplicate keys.
func (d decoder) object(field string, raw json.RawMessage) ([]member, error) {
	if k := kindOf(raw); k != "object" {
		return nil, d.errorf(field, ErrBadValue, "expected object, got %s", k)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, d.errorf(field, ErrSyntax, "invalid JSON: %v", err)
	}
	var out []member
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, d.errorf(field, ErrSyntax, "invalid JSON: %v", err)
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, d.errorf(field, ErrSyntax, "invalid JSON: %v", err)
		}
		if seen[key] {
			return nil, d.errorf(field, ErrBadValue, "duplicate field %q", key)
		}
		seen[key] = true
		out = append(out, member{key: key, val: val})
	}
	return out, nil
}

// array splits a well-formed JSON array into its elements.
func (d decoder) array(field string, raw json.RawMessage) ([]json.RawMessage, error) {
	if k := kindOf(raw); k != "array" {
		return nil, d.errorf(field, ErrBadValue, "expected array, got %s", k)
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, d.errorf(field, ErrSyntax, "invalid JSON: %v", err)
	}
	return out, nil
}

func (d decoder) str(field string, raw json.RawMessage) (string, error) {
	if k := kindOf(raw); k != "string" {
		return "", d.errorf(field, ErrBadValue, "expected string, got %s", k)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", d.errorf(field, ErrSyntax, "invalid JSON: %v", err)
	}
	return s, nil
}

func (d decoder) nonEmpty(field string, raw json.RawMessage) (string, error) {
	s, err := d.str(field, raw)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", d.errorf(field, ErrBadValue, "must not be empty")
	}
	return s, nil
}

// integer decodes a JSON integer no smaller than lowest.
func (d decoder) integer(field string, raw json.RawMessage, lowest int) (int, error) {
	if k := kindOf(raw); k != "number" {
		return 0, d.errorf(field, ErrBadValue, "expected integer, got %s", k)
	}
	text := string(bytes.TrimSpace(raw))
	n, err := strconv.Atoi(text)
	if err != nil {
		return 0, d.errorf(field, ErrBadValue, "expected integer, got %s", text)
	}
	if n < lowest {
		return 0, d.errorf(field, ErrBadValue, "expected integer >= %d, got %d", lowest, n)
	}
	return n, nil
}

// localPath decodes a slash-separated relative path and refuses absolute
// paths and paths that climb out of base (a phrase such as "run's cwd").
func (d decoder) localPath(field string, raw json.RawMessage, base string) (string, error) {
	p, err := d.nonEmpty(field, raw)
	if err != nil {
		return "", err
	}
	if why := notLocal(p, base); why != "" {
		return "", d.errorf(field, ErrUnsafePath, "%s", why)
	}
	return p, nil
}

// notLocal explains why p is not a path local to base, or returns "".
func notLocal(p, base string) string {
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return fmt.Sprintf("path %q is absolute; it must be relative to the %s", p, base)
	}
	if !filepath.IsLocal(filepath.FromSlash(p)) {
		return fmt.Sprintf("path %q escapes the %s", p, base)
	}
	return ""
}

func (d decoder) base64Data(field string, raw json.RawMessage) (string, error) {
	s, err := d.nonEmpty(field, raw)
	if err != nil {
		return "", err
	}
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return "", &Error{File: d.file, Field: field, Msg: fmt.Sprintf("invalid base64: %v", err), Err: errors.Join(ErrBadValue, err)}
	}
	return s, nil
}

// fieldSet describes which keys an object accepts and which it requires.
type fieldSet struct {
	allowed  []string
	required []string
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// check refuses keys outside universe (unknown field), keys inside universe
// but not in fs.allowed (not allowed for what), and missing required keys.
func (d decoder) check(field string, members []member, universe []string, fs fieldSet, what string) error {
	for _, m := range members {
		if !contains(universe, m.key) {
			return d.errorf(field, ErrUnknownField, "unknown field %q", m.key)
		}
		if !contains(fs.allowed, m.key) {
			return d.errorf(field, ErrUnknownField, "field %q is not allowed for %s", m.key, what)
		}
	}
	for _, r := range fs.required {
		if !has(members, r) {
			return d.errorf(field, ErrMissingField, "%s requires field %q", what, r)
		}
	}
	return nil
}

func has(members []member, key string) bool {
	for _, m := range members {
		if m.key == key {
			return true
		}
	}
	return false
}

func lookup(members []member, key string) (json.RawMessage, bool) {
	for _, m := range members {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

func index(field string, i int) string {
	return field + "[" + strconv.Itoa(i) + "]"
}

func dot(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}
