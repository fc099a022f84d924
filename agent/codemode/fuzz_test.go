package codemode

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzRender: render lays out any compact JSON value (as encode writes
// one) as JSON of the same value, indented by at most maxIndent columns.
func FuzzRender(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `"a\"b"`, `{"a":[1,{"b":"}{]["}]}`, `[[[[[[[[1]]]]]]]]`, `{"k":{"k":{"k":{"k":{"k":{"k":{}}}}}},"z":[]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		if json.Unmarshal([]byte(in), &v) != nil {
			return
		}
		var compact bytes.Buffer
		if json.Compact(&compact, []byte(in)) != nil {
			return
		}
		out := render(compact.Bytes())
		var back any
		if err := json.Unmarshal([]byte(out), &back); err != nil {
			t.Fatalf("render(%s) = %q is not JSON: %v", compact.Bytes(), out, err)
		}
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(back)
		if !bytes.Equal(a, b) {
			t.Fatalf("render(%s) = %q changes the value", compact.Bytes(), out)
		}
		for _, line := range strings.Split(out, "\n") {
			if n := len(line) - len(strings.TrimLeft(line, " ")); n > maxIndent {
				t.Fatalf("render(%s) indents %d columns: %q", compact.Bytes(), n, line)
			}
		}
	})
}

// FuzzParseArgs: run_code's argument parse never panics, and what it
// accepts has a description that is not blank.
func FuzzParseArgs(f *testing.F) {
	f.Add(`{"code":"return 1","description":"d"}`)
	f.Add(`{"code":"x","description":"d","code":"y"}`)
	f.Fuzz(func(t *testing.T, raw string) {
		a, err := ParseArgs(json.RawMessage(raw))
		if err == nil && isBlank(a.Description) {
			t.Fatalf("accepted a blank description from %q", raw)
		}
	})
}
