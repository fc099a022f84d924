package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Sentinel errors classify an *Error; test them with errors.Is. They are
// constants, so a package that re-exports one (harness/scenario) is
// initialized statically, doing no work at program start.
const (
	// ErrSyntax marks a document that is not exactly one well-formed JSON
	// value.
	ErrSyntax sentinel = "strictjson: invalid JSON"
	// ErrDuplicateField marks an object that names a key twice.
	ErrDuplicateField sentinel = "strictjson: duplicate field"
	// ErrUnknownField marks a member the vocabulary does not define, or one
	// the surrounding variant (op, kind, type) does not accept.
	ErrUnknownField sentinel = "strictjson: unknown field"
	// ErrMissingField marks a required member that is absent.
	ErrMissingField sentinel = "strictjson: missing field"
	// ErrBadValue marks a value of the wrong JSON type or an invalid value.
	ErrBadValue sentinel = "strictjson: bad value"
	// ErrUnsafePath marks a path that is absolute or climbs out of its base
	// directory.
	ErrUnsafePath sentinel = "strictjson: unsafe path"
)

// sentinel is the type of the package's sentinel errors: a constant
// message, equal to another sentinel when the messages are equal.
type sentinel string

// Error returns the message.
func (e sentinel) Error() string { return string(e) }

// Error is a problem found in a document (or, with no Path and no Line, in
// a file as a whole). See the package documentation for its text.
type Error struct {
	// File names the document (or folder entry) the problem is in.
	File string
	// Path is the JSON path of the offending value, such as
	// "patches[0].entry.chunks[2]"; "" for the document itself.
	Path string
	// Line and Column locate the problem, 1-based (Column counts bytes);
	// both are 0 when the problem has no position.
	Line, Column int
	// Msg says what is wrong.
	Msg string
	// Err is the classification sentinel, possibly joined with a cause.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Path != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Path)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d, column %d)", e.Line, e.Column)
	}
	return b.String()
}

// Unwrap returns the classification sentinel (and cause, if any).
func (e *Error) Unwrap() error { return e.Err }

// document is the file a Value belongs to.
type document struct {
	file string
	data []byte
}

// Value is one JSON value of a parsed document: its bytes as written, its
// JSON path and its offset. Get one from Parse or from an Object or Array of
// another Value; of the zero Value only Errorf may be used.
type Value struct {
	doc  *document
	path string
	off  int    // offset of raw[0] in doc.data
	raw  []byte // the value, without surrounding whitespace
}

// Parse checks that data is exactly one well-formed JSON value (trailing
// data is a syntax error) and returns it. file is used in error messages.
// A refusal is an *Error classified ErrSyntax, located at the offending
// byte.
func Parse(file string, data []byte) (Value, error) {
	doc := &document{file: file, data: data}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		e := &Error{File: file, Msg: fmt.Sprintf("invalid JSON: %v", err), Err: errors.Join(ErrSyntax, err)}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := int(se.Offset) - 1 // Offset counts the offending byte
			if off < 0 {
				off = 0
			}
			e.Line, e.Column = position(data, off)
		}
		return Value{}, e
	}
	start := skip(data, 0)
	return Value{doc: doc, off: start, raw: data[start : start+len(raw)]}, nil
}

// position converts a byte offset into a 1-based line and column.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	return line, off - (bytes.LastIndexByte(data[:off], '\n') + 1) + 1
}

// skip returns the index of the first byte at or after i that is not JSON
// whitespace or a separator (',' or ':').
func skip(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r', ',', ':':
			i++
		default:
			return i
		}
	}
	return i
}

// File names the document the value belongs to.
func (v Value) File() string { return v.doc.file }

// Path is the value's JSON path ("" for the document root).
func (v Value) Path() string { return v.path }

// Position returns the 1-based line and column of the value's first byte.
func (v Value) Position() (line, col int) { return position(v.doc.data, v.off) }

// Raw returns the value's bytes as written (not a copy: do not modify).
func (v Value) Raw() json.RawMessage { return v.raw }

// Kind names the value's JSON type: "object", "array", "string", "number",
// "boolean" or "null".
func (v Value) Kind() string {
	switch v.raw[0] {
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

// Errorf returns an *Error at v: its file, path and position, the message
// and the classification class (a sentinel, possibly joined with a cause).
// For the zero Value the error has neither file nor position.
func (v Value) Errorf(class error, format string, args ...any) *Error {
	return v.errorAt(v.path, v.off, class, format, args...)
}

func (v Value) errorAt(path string, off int, class error, format string, args ...any) *Error {
	e := &Error{Path: path, Msg: fmt.Sprintf(format, args...), Err: class}
	if v.doc != nil { // not the zero Value
		e.File = v.doc.file
		e.Line, e.Column = position(v.doc.data, off)
	}
	return e
}

// expect refuses a value whose kind is not want.
func (v Value) expect(want string) error {
	if k := v.Kind(); k != want {
		return v.Errorf(ErrBadValue, "expected %s, got %s", want, k)
	}
	return nil
}

func (v Value) child(path string, off int, raw []byte) Value {
	return Value{doc: v.doc, path: path, off: v.off + off, raw: raw}
}

// Member is one "key": value pair of an object.
type Member struct {
	// Key is the member's name.
	Key string
	// Value is the member's value; its path is the object's path dot Key.
	Value  Value
	keyOff int // offset of the key's opening quote in the document
}

// Object is a JSON object split into its members, in document order.
type Object struct {
	// Value is the object itself.
	Value Value
	// Members are the object's members in document order; keys are unique.
	Members []Member
}

// Object splits v, which must be an object, into its members. A key named
// twice is refused (ErrDuplicateField, at the second occurrence).
func (v Value) Object() (Object, error) {
	if err := v.expect("object"); err != nil {
		return Object{}, err
	}
	obj := Object{Value: v}
	dec := json.NewDecoder(bytes.NewReader(v.raw))
	if _, err := dec.Token(); err != nil { // '{'
		return Object{}, v.Errorf(ErrSyntax, "invalid JSON: %v", err)
	}
	seen := make(map[string]bool)
	for dec.More() {
		keyOff := skip(v.raw, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			return Object{}, v.Errorf(ErrSyntax, "invalid JSON: %v", err)
		}
		key, _ := tok.(string)
		valOff := skip(v.raw, int(dec.InputOffset()))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Object{}, v.Errorf(ErrSyntax, "invalid JSON: %v", err)
		}
		if seen[key] {
			return Object{}, v.errorAt(v.path, v.off+keyOff, ErrDuplicateField, "duplicate field %q", key)
		}
		seen[key] = true
		obj.Members = append(obj.Members, Member{
			Key:    key,
			Value:  v.child(Field(v.path, key), valOff, v.raw[valOff:valOff+len(raw)]),
			keyOff: v.off + keyOff,
		})
	}
	return obj, nil
}

// Array splits v, which must be an array, into its elements.
func (v Value) Array() ([]Value, error) {
	if err := v.expect("array"); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(v.raw))
	if _, err := dec.Token(); err != nil { // '['
		return nil, v.Errorf(ErrSyntax, "invalid JSON: %v", err)
	}
	var out []Value
	for i := 0; dec.More(); i++ {
		off := skip(v.raw, int(dec.InputOffset()))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, v.Errorf(ErrSyntax, "invalid JSON: %v", err)
		}
		out = append(out, v.child(Index(v.path, i), off, v.raw[off:off+len(raw)]))
	}
	return out, nil
}

// Str decodes v, which must be a string.
func (v Value) Str() (string, error) {
	if err := v.expect("string"); err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(v.raw, &s); err != nil {
		return "", v.Errorf(ErrSyntax, "invalid JSON: %v", err)
	}
	return s, nil
}

// NonEmpty decodes v, which must be a non-empty string.
func (v Value) NonEmpty() (string, error) {
	s, err := v.Str()
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", v.Errorf(ErrBadValue, "must not be empty")
	}
	return s, nil
}

// Int decodes v, which must be an integer (no fraction, no exponent) no
// smaller than lowest.
func (v Value) Int(lowest int) (int, error) {
	if k := v.Kind(); k != "number" {
		return 0, v.Errorf(ErrBadValue, "expected integer, got %s", k)
	}
	n, err := strconv.Atoi(string(v.raw))
	if err != nil {
		return 0, v.Errorf(ErrBadValue, "expected integer, got %s", v.raw)
	}
	if n < lowest {
		return 0, v.Errorf(ErrBadValue, "expected integer >= %d, got %d", lowest, n)
	}
	return n, nil
}

// Bool decodes v, which must be true or false.
func (v Value) Bool() (bool, error) {
	if err := v.expect("boolean"); err != nil {
		return false, err
	}
	return v.raw[0] == 't', nil
}

// LocalPath decodes v, which must be a non-empty slash-separated path
// relative to base (a phrase such as "run's cwd", used in the message):
// absolute paths and paths that climb out with ".." are refused
// (ErrUnsafePath).
func (v Value) LocalPath(base string) (string, error) {
	p, err := v.NonEmpty()
	if err != nil {
		return "", err
	}
	if why := NotLocal(p, base); why != "" {
		return "", v.Errorf(ErrUnsafePath, "%s", why)
	}
	return p, nil
}

// NotLocal explains why p is not a slash-separated path local to base (a
// phrase such as "scenario directory"), or returns "" when it is.
func NotLocal(p, base string) string {
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return fmt.Sprintf("path %q is absolute; it must be relative to the %s", p, base)
	}
	if !filepath.IsLocal(filepath.FromSlash(p)) {
		return fmt.Sprintf("path %q escapes the %s", p, base)
	}
	return ""
}

// NoDuplicates refuses a key named twice in any object at or below v, in
// one pass; the error names the object and points at the second key.
func (v Value) NoDuplicates() error {
	return v.walk(false, 0)
}

// Canonical is the one parse of a value that another program reads after
// a human approved it: it refuses, in one pass and before anything is
// decoded, a key named twice in any object at or below v (also when one
// spelling escapes what the other writes plainly), two keys of one object
// that differ only in case as encoding/json folds them when it matches
// struct fields (both ErrDuplicateField, at the second key), and objects
// and arrays nested more than maxDepth deep (ErrBadValue, at the first
// bracket too deep; maxDepth 0 sets no bound). Otherwise it returns v
// encoded by encoding/json from its one decoding: no whitespace, object
// keys sorted, strings escaped as json.Marshal escapes them (<, >, &,
// U+2028 and U+2029 included), numbers as written. Canonical of its own
// result returns the same bytes, and so does re-encoding them with
// encoding/json, with or without HTML escaping.
func (v Value) Canonical(maxDepth int) ([]byte, error) {
	if err := v.walk(true, maxDepth); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(v.raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, v.Errorf(ErrSyntax, "invalid JSON: %v", err)
	}
	out, err := json.Marshal(x)
	if err != nil {
		return nil, v.Errorf(ErrBadValue, "cannot encode: %v", err)
	}
	return out, nil
}

// walk refuses, in one pass over v's tokens, a key named twice in an
// object at or below v, with fold also two keys of one object that fold
// to the same name, and with maxDepth > 0 nesting deeper than maxDepth.
func (v Value) walk(fold bool, maxDepth int) error {
	type frame struct {
		path  string
		obj   bool
		keys  map[string]string // folded (or exact) key -> key as decoded
		key   string            // the member whose value comes next (objects)
		isKey bool              // the next token is a key (objects)
		next  int               // the next element's index (arrays)
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(v.raw))
	dec.UseNumber() // a number too large for float64 is still well-formed
	for {
		before := int(dec.InputOffset())
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return v.Errorf(ErrSyntax, "invalid JSON: %v", err)
		}
		if tok == json.Delim('}') || tok == json.Delim(']') {
			stack = stack[:len(stack)-1]
			continue
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.isKey {
			key, _ := tok.(string)
			name := key
			if fold {
				name = FoldKey(key)
			}
			if prev, ok := top.keys[name]; ok {
				at := v.off + skip(v.raw, before)
				if prev == key {
					return v.errorAt(top.path, at, ErrDuplicateField, "duplicate field %q", key)
				}
				return v.errorAt(top.path, at, ErrDuplicateField, "fields %q and %q differ only in case", prev, key)
			}
			top.keys[name], top.key, top.isKey = key, key, false
			continue
		}
		path := v.path // tok starts a value: find its path
		switch {
		case top == nil:
		case top.obj:
			path, top.isKey = Field(top.path, top.key), true
		default:
			path = Index(top.path, top.next)
			top.next++
		}
		if tok == json.Delim('{') || tok == json.Delim('[') {
			if maxDepth > 0 && len(stack) >= maxDepth {
				return v.errorAt(path, v.off+skip(v.raw, before), ErrBadValue, "nested deeper than %d levels", maxDepth)
			}
			f := &frame{path: path, obj: tok == json.Delim('{'), isKey: true}
			if f.obj {
				f.keys = map[string]string{}
			}
			stack = append(stack, f)
		}
	}
}

// FoldKey returns the name encoding/json matches an object key to struct
// fields by: every rune replaced by the smallest rune of its case-folding
// orbit, so FoldKey(a) == FoldKey(b) exactly when strings.EqualFold(a, b)
// ("K", "k" and the Kelvin sign U+212A fold together).
func FoldKey(key string) string {
	var b strings.Builder
	b.Grow(len(key))
	for _, r := range key {
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Fields says which members an object accepts and which it requires.
type Fields struct {
	// Allowed lists the accepted keys.
	Allowed []string
	// Required lists the keys that must be present (a subset of Allowed).
	Required []string
}

// Get returns the member named key.
func (o Object) Get(key string) (Value, bool) {
	for _, m := range o.Members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return Value{}, false
}

// Require returns the member named key, or an ErrMissingField error at the
// object.
func (o Object) Require(key string) (Value, error) {
	if v, ok := o.Get(key); ok {
		return v, nil
	}
	return Value{}, o.Value.Errorf(ErrMissingField, "missing field %q", key)
}

// Check refuses, in document order, a member whose key is not in universe
// ("unknown field", at the key) and one in universe that fs does not allow
// ("not allowed for WHAT", at the key), then, in fs order, a missing
// required member (at the object). what names the variant, such as `op
// "prompt"`.
func (o Object) Check(universe []string, fs Fields, what string) error {
	for _, m := range o.Members {
		if !slices.Contains(universe, m.Key) {
			return o.Value.errorAt(o.Value.path, m.keyOff, ErrUnknownField, "unknown field %q", m.Key)
		}
		if !slices.Contains(fs.Allowed, m.Key) {
			return o.Value.errorAt(o.Value.path, m.keyOff, ErrUnknownField, "field %q is not allowed for %s", m.Key, what)
		}
	}
	for _, r := range fs.Required {
		if _, ok := o.Get(r); !ok {
			return o.Value.Errorf(ErrMissingField, "%s requires field %q", what, r)
		}
	}
	return nil
}

// Index returns the JSON path of element i of the array at path.
func Index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// Field returns the JSON path of member key of the object at path.
func Field(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
