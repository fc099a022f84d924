// Package strictjson decodes hand-written JSON documents (scenario scripts,
// replay overrides) and untrusted ones (MCP tool arguments) member by member, refusing what encoding/json lets
// through silently, and reports every problem as an *Error that names the
// file, the JSON path of the offending value and its line and column.
//
// # Model
//
// Parse checks that a document is exactly one well-formed JSON value and
// returns it as a Value: a view of the value's bytes that knows its document,
// its JSON path ("", "steps[2]", "patches[0].entry.chunks[1]") and its byte
// offset. A Value is split one level at a time by Object (members in
// document order, a duplicate key refused) and Array (elements), and read by
// Str, NonEmpty, Int, Bool and LocalPath, each refusing a value of the wrong
// JSON type. Object.Check refuses members outside a vocabulary (unknown
// field), members the vocabulary has but the surrounding variant does not
// accept, and missing required members. NoDuplicates refuses a duplicate key
// anywhere below a value, for values that another decoder reads as a whole.
// Canonical is the one parse of a value a human approves before another
// program reads it (an MCP tool's arguments): it also refuses keys that
// differ only in case (FoldKey, as encoding/json matches struct fields) and
// nesting beyond a bound, and returns the value re-encoded from its one
// decoding, so what was shown and what is sent are the same bytes.
//
// # Errors
//
// An *Error renders as
//
//	FILE: PATH: MSG (line L, column C)
//
// with ": PATH" left out for a problem of the whole document and the
// position left out when there is none (a problem of the file rather than of
// its content). Lines and columns are 1-based; a column counts bytes. The
// position is that of the offending value's first byte, of the offending key
// for an unknown or duplicate member, of the enclosing object for a missing
// member, and of the offending byte for a syntax error. Err is one of the
// sentinels (ErrSyntax, ErrDuplicateField, ErrUnknownField,
// ErrMissingField, ErrBadValue, ErrUnsafePath), possibly joined with a
// cause; test it with errors.Is.
//
// Values and Objects are immutable and safe for concurrent use.
package strictjson
