package strictjson

import (
	"errors"
	"strings"
	"testing"
)

func mustParse(t *testing.T, data string) Value {
	t.Helper()
	v, err := Parse("doc.json", []byte(data))
	if err != nil {
		t.Fatalf("Parse(%q): %v", data, err)
	}
	return v
}

func TestPosition(t *testing.T) {
	data := []byte("ab\ncd\n\nxyz")
	for _, c := range []struct{ off, line, col int }{
		{0, 1, 1}, {1, 1, 2}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {6, 3, 1}, {7, 4, 1}, {9, 4, 3},
		{-4, 1, 1}, {99, 4, 4},
	} {
		if l, col := position(data, c.off); l != c.line || col != c.col {
			t.Errorf("position(%d) = %d:%d, want %d:%d", c.off, l, col, c.line, c.col)
		}
	}
}

// TestParseErrors is the malformed-document table: every refusal is an
// *Error with the file, the path, the message and the position.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in string
		// walk reads the parsed document; nil means Parse itself must fail.
		walk func(Value) error
		want string
		kind error
	}{
		{"empty", "", nil, `doc.json: invalid JSON: unexpected end of JSON input (line 1, column 1)`, ErrSyntax},
		{"trailing comma", "{\n  \"a\": 1,\n}", nil, `doc.json: invalid JSON: invalid character '}' looking for beginning of object key string (line 3, column 1)`, ErrSyntax},
		{"trailing value", `{"a":1} {}`, nil, `doc.json: invalid JSON: invalid character '{' after top-level value (line 1, column 9)`, ErrSyntax},
		{"not an object", ` [1]`, func(v Value) error { _, err := v.Object(); return err }, `doc.json: expected object, got array (line 1, column 2)`, ErrBadValue},
		{"not an array", `{"a":"x"}`, func(v Value) error {
			o, _ := v.Object()
			_, err := o.Members[0].Value.Array()
			return err
		}, `doc.json: a: expected array, got string (line 1, column 6)`, ErrBadValue},
		{"duplicate key", "{\"a\":1,\n \"a\":2}", func(v Value) error { _, err := v.Object(); return err }, `doc.json: duplicate field "a" (line 2, column 2)`, ErrDuplicateField},
		{"duplicate key below", `{"a":[{"b":{"c":1,"c":2}}]}`, func(v Value) error { return v.NoDuplicates() }, `doc.json: a[0].b: duplicate field "c" (line 1, column 19)`, ErrDuplicateField},
		{"canonical duplicate", `{"cmd":"echo SAFE","cmd":"rm -rf ~"}`, func(v Value) error { _, err := v.Canonical(3); return err }, `doc.json: duplicate field "cmd" (line 1, column 20)`, ErrDuplicateField},
		{"canonical escaped duplicate", `{"cmd":"echo SAFE","c\u006dd":"rm -rf ~"}`, func(v Value) error { _, err := v.Canonical(3); return err }, `doc.json: duplicate field "cmd" (line 1, column 20)`, ErrDuplicateField},
		{"canonical case collision", `{"cmd":"echo SAFE","CMD":"rm -rf ~"}`, func(v Value) error { _, err := v.Canonical(3); return err }, `doc.json: fields "cmd" and "CMD" differ only in case (line 1, column 20)`, ErrDuplicateField},
		{"canonical kelvin collision", `{"kind":1,"\u212aind":2}`, func(v Value) error { _, err := v.Canonical(3); return err }, `doc.json: fields "kind" and "Kind" differ only in case (line 1, column 11)`, ErrDuplicateField},
		{"canonical nested case collision", `{"job":[{"Cmd":1,"cMD":2}]}`, func(v Value) error { _, err := v.Canonical(3); return err }, `doc.json: job[0]: fields "Cmd" and "cMD" differ only in case (line 1, column 18)`, ErrDuplicateField},
		{"canonical too deep", `{"a":[{"b":[]}]}`, func(v Value) error { _, err := v.Canonical(3); return err }, `doc.json: a[0].b: nested deeper than 3 levels (line 1, column 12)`, ErrBadValue},
		{"string expected", `[null]`, func(v Value) error { e, _ := v.Array(); _, err := e[0].Str(); return err }, `doc.json: [0]: expected string, got null (line 1, column 2)`, ErrBadValue},
		{"empty string", `[""]`, func(v Value) error { e, _ := v.Array(); _, err := e[0].NonEmpty(); return err }, `doc.json: [0]: must not be empty (line 1, column 2)`, ErrBadValue},
		{"fraction", `[1.5]`, func(v Value) error { e, _ := v.Array(); _, err := e[0].Int(0); return err }, `doc.json: [0]: expected integer, got 1.5 (line 1, column 2)`, ErrBadValue},
		{"exponent", `[1e3]`, func(v Value) error { e, _ := v.Array(); _, err := e[0].Int(0); return err }, `doc.json: [0]: expected integer, got 1e3 (line 1, column 2)`, ErrBadValue},
		{"integer as string", `["1"]`, func(v Value) error { e, _ := v.Array(); _, err := e[0].Int(0); return err }, `doc.json: [0]: expected integer, got string (line 1, column 2)`, ErrBadValue},
		{"too small", `[ -1]`, func(v Value) error { e, _ := v.Array(); _, err := e[0].Int(0); return err }, `doc.json: [0]: expected integer >= 0, got -1 (line 1, column 3)`, ErrBadValue},
		{"huge", `[99999999999999999999999]`, func(v Value) error { e, _ := v.Array(); _, err := e[0].Int(0); return err }, `doc.json: [0]: expected integer, got 99999999999999999999999 (line 1, column 2)`, ErrBadValue},
		{"bool expected", `[0]`, func(v Value) error { e, _ := v.Array(); _, err := e[0].Bool(); return err }, `doc.json: [0]: expected boolean, got number (line 1, column 2)`, ErrBadValue},
		{"absolute path", `["/etc/passwd"]`, func(v Value) error { e, _ := v.Array(); _, err := e[0].LocalPath("run's cwd"); return err }, `doc.json: [0]: path "/etc/passwd" is absolute; it must be relative to the run's cwd (line 1, column 2)`, ErrUnsafePath},
		{"escaping path", `["a/../../b"]`, func(v Value) error { e, _ := v.Array(); _, err := e[0].LocalPath("run's cwd"); return err }, `doc.json: [0]: path "a/../../b" escapes the run's cwd (line 1, column 2)`, ErrUnsafePath},
		{"unknown field", "{\"op\":\"x\",\n  \"txt\":1}", func(v Value) error {
			o, _ := v.Object()
			return o.Check([]string{"op", "text"}, Fields{Allowed: []string{"op", "text"}}, "op \"x\"")
		}, `doc.json: unknown field "txt" (line 2, column 3)`, ErrUnknownField},
		{"field not allowed", `{"steps":[{"op":"x","mode":"m"}]}`, func(v Value) error {
			o, _ := v.Object()
			s, _ := o.Members[0].Value.Array()
			so, _ := s[0].Object()
			return so.Check([]string{"op", "mode"}, Fields{Allowed: []string{"op"}}, `op "x"`)
		}, `doc.json: steps[0]: field "mode" is not allowed for op "x" (line 1, column 21)`, ErrUnknownField},
		{"missing field", `{"steps":[ {"op":"x"}]}`, func(v Value) error {
			o, _ := v.Object()
			s, _ := o.Members[0].Value.Array()
			so, _ := s[0].Object()
			return so.Check([]string{"op", "text"}, Fields{Allowed: []string{"op", "text"}, Required: []string{"text"}}, `op "x"`)
		}, `doc.json: steps[0]: op "x" requires field "text" (line 1, column 12)`, ErrMissingField},
		{"require", `{"a":{}}`, func(v Value) error {
			o, _ := v.Object()
			a, _ := o.Members[0].Value.Object()
			_, err := a.Require("kind")
			return err
		}, `doc.json: a: missing field "kind" (line 1, column 6)`, ErrMissingField},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse("doc.json", []byte(tt.in))
			switch {
			case tt.walk == nil && err == nil:
				t.Fatalf("Parse(%q) succeeded", tt.in)
			case tt.walk != nil && err != nil:
				t.Fatalf("Parse(%q): %v", tt.in, err)
			case tt.walk != nil:
				err = tt.walk(v)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tt.want {
				t.Errorf("error text\n got: %s\nwant: %s", err, tt.want)
			}
			var se *Error
			if !errors.As(err, &se) || se.File != "doc.json" || se.Line == 0 {
				t.Errorf("error %#v is not a positioned *Error for doc.json", err)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %v is not %v", err, tt.kind)
			}
		})
	}
}

func TestWalk(t *testing.T) {
	doc := "{\n  \"name\": \"n\",\n  \"list\": [ 1, {\"deep\": true}, \"s\" ],\n  \"empty\": {}\n}"
	v := mustParse(t, doc)
	if v.Path() != "" || v.File() != "doc.json" || v.Kind() != "object" {
		t.Errorf("root: path %q file %q kind %q", v.Path(), v.File(), v.Kind())
	}
	o, err := v.Object()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range o.Members {
		keys = append(keys, m.Key)
	}
	if strings.Join(keys, ",") != "name,list,empty" {
		t.Errorf("keys %v, want document order", keys)
	}
	list, _ := o.Get("list")
	elems, err := list.Array()
	if err != nil || len(elems) != 3 {
		t.Fatalf("list: %v %v", elems, err)
	}
	wants := []struct {
		path, raw string
		line, col int
	}{
		{"list[0]", "1", 3, 13},
		{"list[1]", `{"deep": true}`, 3, 16},
		{"list[2]", `"s"`, 3, 32},
	}
	for i, w := range wants {
		e := elems[i]
		line, col := e.Position()
		if e.Path() != w.path || string(e.Raw()) != w.raw || line != w.line || col != w.col {
			t.Errorf("element %d: %q %q at %d:%d, want %q %q at %d:%d", i, e.Path(), e.Raw(), line, col, w.path, w.raw, w.line, w.col)
		}
	}
	deep, _ := elems[1].Object()
	d, _ := deep.Get("deep")
	if b, err := d.Bool(); err != nil || !b || d.Path() != "list[1].deep" {
		t.Errorf("deep = %v %v at %q", b, err, d.Path())
	}
	if n, err := elems[0].Int(1); err != nil || n != 1 {
		t.Errorf("Int = %d %v", n, err)
	}
	name, _ := o.Get("name")
	if s, err := name.NonEmpty(); err != nil || s != "n" {
		t.Errorf("name = %q %v", s, err)
	}
	empty, _ := o.Get("empty")
	if eo, err := empty.Object(); err != nil || len(eo.Members) != 0 {
		t.Errorf("empty = %+v %v", eo, err)
	}
	if _, ok := o.Get("nope"); ok {
		t.Error("Get found an absent key")
	}
	if err := v.NoDuplicates(); err != nil {
		t.Errorf("NoDuplicates: %v", err)
	}
	if err := o.Check([]string{"name", "list", "empty", "x"}, Fields{Allowed: []string{"name", "list", "empty"}, Required: []string{"name"}}, "doc"); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestNoDuplicatesAllowsRepeatsInSiblings(t *testing.T) {
	for _, doc := range []string{
		`[{"a":1},{"a":2}]`,
		`{"a":{"a":{"a":1}},"b":{"a":2}}`,
		`{"x":[{"k":1,"j":2},{"k":3}],"k":4}`,
		`"scalar"`, `[]`, `{}`, `[[[]],[[{}]]]`,
	} {
		if err := mustParse(t, doc).NoDuplicates(); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
	for doc, want := range map[string]string{
		`{"x":[{"k":1},{"k":3,"k":4}]}`: `doc.json: x[1]: duplicate field "k" (line 1, column 22)`,
		`[[{"a":1}],{"a":[],"a":{}}]`:   `doc.json: [1]: duplicate field "a" (line 1, column 20)`,
		`{"a":{},"a":1}`:                `doc.json: duplicate field "a" (line 1, column 9)`,
	} {
		err := mustParse(t, doc).NoDuplicates()
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", doc, err, want)
		}
	}
}

func TestErrorText(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{File: "f", Msg: "m"}, "f: m"},
		{Error{File: "f", Path: "a[0]", Msg: "m"}, "f: a[0]: m"},
		{Error{File: "f", Path: "a", Line: 2, Column: 3, Msg: "m"}, "f: a: m (line 2, column 3)"},
		{Error{Path: "a", Msg: "m"}, "a: m"},
		{Error{Msg: "m"}, "m"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
	e := &Error{Err: errors.Join(ErrBadValue, errors.New("cause"))}
	if !errors.Is(e, ErrBadValue) {
		t.Error("Unwrap does not reach the sentinel")
	}
}

func TestPaths(t *testing.T) {
	if got := Field(Index(Field("", "patches"), 0), "entry"); got != "patches[0].entry" {
		t.Errorf("got %q", got)
	}
	if got := Index("", 3); got != "[3]" {
		t.Errorf("got %q", got)
	}
	if NotLocal("a/b", "x") != "" || NotLocal(`\x`, "x") == "" || NotLocal("..", "x") == "" {
		t.Error("NotLocal")
	}
}

func TestZeroValueErrorf(t *testing.T) {
	err := Value{}.Errorf(ErrBadValue, "bad %d", 1)
	if err.Error() != "bad 1" || err.File != "" || err.Line != 0 || !errors.Is(err, ErrBadValue) {
		t.Errorf("zero Value error: %#v", err)
	}
}

// TestCanonical: an accepted value is re-encoded from its one decoding
// (no whitespace, sorted keys, json.Marshal's escaping, numbers as
// written), and the result is its own canonical form; keys that differ in
// more than case, and repeats in sibling objects, are accepted.
func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{}`, `{}`},
		{" { \"b\" : [1, 2.50, -0, 1e3, 12345678901234567890123] ,\n \"a\": null } ", `{"a":null,"b":[1,2.50,-0,1e3,12345678901234567890123]}`},
		{`{"s":"x<y & \u00e9\u2028\ud800\"\/"}`, `{"s":"x\u003cy \u0026 é\u2028�\"/"}`},
		{`{"m":{"b":"","A":{},"c":[]},"n":[{"k":1},{"k":2}]}`, `{"m":{"A":{},"b":"","c":[]},"n":[{"k":1},{"k":2}]}`},
		{`{"ab":1,"a\u0062c":2,"ß":3,"SS":4}`, `{"SS":4,"ab":1,"abc":2,"ß":3}`},
		{`[[[]]]`, `[[[]]]`},
	}
	for _, tc := range tests {
		got, err := mustParse(t, tc.in).Canonical(3)
		if err != nil || string(got) != tc.want {
			t.Errorf("Canonical(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
			continue
		}
		again, err := mustParse(t, string(got)).Canonical(3)
		if err != nil || string(again) != string(got) {
			t.Errorf("Canonical(%s) = %s, %v: not a fixed point", got, again, err)
		}
	}
}
