package tools

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// argObject is a decoded argument object of one tool call. Absent and null
// members are the same.
type argObject struct {
	tool   string
	fields map[string]json.RawMessage
}

// decodeArgs decodes raw as a JSON object. Empty input and null count as an
// empty object.
func decodeArgs(tool string, raw json.RawMessage) (argObject, error) {
	o := argObject{tool: tool, fields: map[string]json.RawMessage{}}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return o, nil
	}
	if trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			return o, &ArgError{Tool: tool, Msg: "malformed JSON"}
		}
		return o, &ArgError{Tool: tool, Msg: "want a JSON object"}
	}
	if err := json.Unmarshal(trimmed, &o.fields); err != nil {
		return o, &ArgError{Tool: tool, Msg: "malformed JSON", Err: err}
	}
	for k, v := range o.fields {
		if string(v) == "null" {
			delete(o.fields, k)
		}
	}
	return o, nil
}

// has reports whether the argument is present and not null.
func (o argObject) has(name string) bool {
	_, ok := o.fields[name]
	return ok
}

// str returns a string argument; "" when absent. A required argument must
// be present and non-empty.
func (o argObject) str(name string, required bool) (string, error) {
	v, ok := o.fields[name]
	if !ok {
		if required {
			return "", &ArgError{Tool: o.tool, Arg: name, Msg: "missing (required)"}
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", &ArgError{Tool: o.tool, Arg: name, Msg: "want a string, got " + jsonKind(v)}
	}
	if required && s == "" {
		return "", &ArgError{Tool: o.tool, Arg: name, Msg: "must not be empty"}
	}
	return s, nil
}

// text returns a string argument that must be present but may be empty.
func (o argObject) text(name string) (string, error) {
	if !o.has(name) {
		return "", &ArgError{Tool: o.tool, Arg: name, Msg: "missing (required)"}
	}
	return o.str(name, false)
}

// integer returns an integer argument, 0 when absent. A JSON number with an
// integral value or a string holding one is accepted.
func (o argObject) integer(name string) (int, error) {
	v, ok := o.fields[name]
	if !ok {
		return 0, nil
	}
	lit := string(v)
	if v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, &ArgError{Tool: o.tool, Arg: name, Msg: "want an integer, got " + jsonKind(v)}
		}
		lit = strings.TrimSpace(s)
	} else if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, &ArgError{Tool: o.tool, Arg: name, Msg: "want an integer, got " + jsonKind(v)}
	}
	if n, err := strconv.ParseInt(lit, 10, 32); err == nil {
		return int(n), nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
		return 0, &ArgError{Tool: o.tool, Arg: name, Msg: "want an integer, got " + strconv.Quote(truncateRunes(lit, 40))}
	}
	return int(f), nil
}

// boolean returns a boolean argument, false when absent. true, false and
// the strings "true" and "false" are accepted.
func (o argObject) boolean(name string) (bool, error) {
	v, ok := o.fields[name]
	if !ok {
		return false, nil
	}
	switch string(v) {
	case "true", `"true"`:
		return true, nil
	case "false", `"false"`:
		return false, nil
	}
	return false, &ArgError{Tool: o.tool, Arg: name, Msg: "want a boolean, got " + jsonKind(v)}
}

// jsonKind names the JSON type of a valid JSON value.
func jsonKind(v json.RawMessage) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
