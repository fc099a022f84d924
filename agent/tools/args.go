package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// argObject is a decoded argument object of one tool call. Absent and null
// members are the same.
type argObject struct {
	tool   string
	fields map[string]json.RawMessage
}

// argNames returns the argument names a tool accepts: the properties of
// its schema with every option on (escalation included). Names are exact
// and case-sensitive; TestArgNamesMatchSchemas holds this list to the
// schemas.
func argNames(tool string) []string {
	switch tool {
	case "bash":
		return []string{"command", "description", "workdir", "timeout", "run_in_background", "sandbox_permissions", "justification"}
	case "read":
		return []string{"file_path", "offset", "limit"}
	case "read_image":
		return []string{"file_path"}
	case "write":
		return []string{"file_path", "content", "sandbox_permissions", "justification"}
	case "edit":
		return []string{"file_path", "old_string", "new_string", "replace_all"}
	case "glob":
		return []string{"pattern", "path"}
	case "grep":
		return []string{"pattern", "path", "glob", "output_mode", "-i"}
	case "todo_write":
		return []string{"todos"}
	case "job_output":
		return []string{"job_id", "wait", "timeout_ms"}
	case "job_kill":
		return []string{"job_id", "reason"}
	case "job_list":
		return []string{}
	case "list_agents":
		return []string{"scope"}
	case "send_message":
		return []string{"subagent_id", "message"}
	case "interrupt_agent":
		return []string{"agent_id"}
	case "report":
		return []string{"output"}
	}
	return nil
}

// decodeArgs decodes raw as a JSON object. Empty input and null count as an
// empty object.
//
// Decoding is strict, because what a permission request shows must be
// exactly what runs: every member name must be one of the tool's argument
// names, spelled exactly; a name given twice, or two names that differ only
// in case, are refused with the names quoted. (encoding/json matches struct
// fields case-insensitively and keeps the last of duplicate keys, which is
// how {"command":…,"Command":…} could show one command and run another.)
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
	if !json.Valid(trimmed) {
		err := json.Unmarshal(trimmed, &o.fields)
		return o, &ArgError{Tool: tool, Msg: "malformed JSON", Err: err}
	}
	names, vals, plain := plainMembers(trimmed)
	if !plain {
		var err error
		if names, err = memberNames(trimmed); err != nil {
			return o, &ArgError{Tool: tool, Msg: "malformed JSON", Err: err}
		}
	}
	if err := checkNames(tool, names); err != nil {
		return o, err
	}
	if plain {
		// The names are distinct (checkNames): the map json.Unmarshal
		// would fill.
		for i, n := range names {
			o.fields[n] = bytes.Clone(vals[i])
		}
	} else if err := json.Unmarshal(trimmed, &o.fields); err != nil {
		return o, &ArgError{Tool: tool, Msg: "malformed JSON", Err: err}
	}
	for k, v := range o.fields {
		if string(v) == "null" {
			delete(o.fields, k)
		}
	}
	return o, nil
}

// plainMembers is memberNames of the valid JSON object obj, with each
// member's raw value, read by hand when no key has an escape or a byte
// past ASCII (ok false otherwise): a call's arguments went through
// encoding/json's token reader and then its reflection, which was most of
// describing a call again when a loaded session is retold.
// args_internal_test.go holds it to memberNames and json.Unmarshal.
func plainMembers(obj []byte) (names []string, vals [][]byte, ok bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, nil, false
	}
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		kend := jsonValueEnd(obj, i)
		key := obj[i+1 : kend-1]
		for _, c := range key {
			if c == '\\' || c >= 0x80 {
				return nil, nil, false
			}
		}
		i = skipSpace(obj, kend)
		i = skipSpace(obj, i+1) // the colon
		vend := jsonValueEnd(obj, i)
		names = append(names, string(key))
		vals = append(vals, obj[i:vend])
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return names, vals, true
}

// skipSpace skips JSON whitespace at i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonValueEnd returns the end of the value starting at b[i] in valid
// JSON: a string with its escapes, an object or array by depth, a literal
// up to the next delimiter.
func jsonValueEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			for j++; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if depth == 0 {
				return j + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j // a literal's end
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return j
			}
		}
	}
	return len(b)
}

// memberNames returns the member names of the valid JSON object obj, in
// order and with repeats.
func memberNames(obj []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var names []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := t.(string)
		names = append(names, name)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// checkNames refuses repeated, case-colliding and unknown member names.
func checkNames(tool string, names []string) error {
	known := argNames(tool)
	seen := make(map[string]string, len(names))
	for _, n := range names {
		folded := strings.ToLower(n)
		if prev, ok := seen[folded]; ok {
			if prev == n {
				return &ArgError{Tool: tool, Arg: n, Msg: "given more than once"}
			}
			return &ArgError{Tool: tool, Msg: fmt.Sprintf("%q and %q differ only in case; argument names are exact", prev, n)}
		}
		seen[folded] = n
		if known != nil && !slices.Contains(known, n) {
			msg := "unknown argument (want one of " + strings.Join(quoteAll(known), ", ") + ")"
			if i := slices.IndexFunc(known, func(k string) bool { return strings.EqualFold(k, n) }); i >= 0 {
				msg = fmt.Sprintf("unknown argument; names are case-sensitive (did you mean %q?)", known[i])
			}
			return &ArgError{Tool: tool, Arg: n, Msg: msg}
		}
	}
	return nil
}

// quoteAll quotes each string.
func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
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
