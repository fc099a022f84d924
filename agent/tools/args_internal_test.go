package tools

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// checkPlainMembers fails when plainMembers reads a valid object otherwise
// than memberNames (names) and json.Unmarshal (values, names distinct).
func checkPlainMembers(t *testing.T, obj []byte) {
	t.Helper()
	if !json.Valid(obj) {
		return
	}
	names, vals, ok := plainMembers(obj)
	if !ok {
		return
	}
	want, err := memberNames(obj)
	if err != nil || !slices.Equal(names, want) {
		t.Fatalf("%s: names %q, memberNames %q (%v)", obj, names, want, err)
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(obj, &fields); err != nil {
		t.Fatalf("%s: read by hand, json.Unmarshal: %v", obj, err)
	}
	if len(fields) != len(names) {
		return // a name repeated: checkNames refuses it before the values count
	}
	for i, n := range names {
		if !bytes.Equal(vals[i], fields[n]) {
			t.Fatalf("%s: %q is %s, json.Unmarshal %s", obj, n, vals[i], fields[n])
		}
	}
}

// TestPlainMembersIsTheDecoders holds plainMembers to the token reader and
// json.Unmarshal over edge cases and random objects.
func TestPlainMembersIsTheDecoders(t *testing.T) {
	for _, s := range []string{`{}`, ` { } `, `{"file_path":"f.txt"}`, `{"a":"x\"y","b":[1,{"c":"]}"}],"d":null}`, `{ "a" : 1 , "b" : -2.5e3 }`, `{"a\u0062":1}`, `{"é":1}`, `{"a":1,"a":2}`, `{"a":{"b":{}},"c":[[],[{}]]}`, `{"a":"\\"}`, `{"a":true,"b":false}`} {
		checkPlainMembers(t, []byte(s))
	}
	r := rand.New(rand.NewPCG(34, 69))
	keys := []string{`"a"`, `"b"`, `"file_path"`, `"k\"q"`, `"A"`}
	vals := []string{`1`, `-0.5`, `"s"`, `"x\"y\\"`, `{"a":[1,"]"]}`, `[]`, `null`, `true`, ` "sp" `}
	for range 50000 {
		var sb strings.Builder
		sb.WriteString("{")
		for k := range r.IntN(6) {
			if k > 0 {
				sb.WriteString(",")
			}
			sb.WriteString(keys[r.IntN(len(keys))] + ":" + vals[r.IntN(len(vals))])
		}
		sb.WriteString("}")
		checkPlainMembers(t, []byte(sb.String()))
	}
}

// FuzzPlainMembers holds plainMembers to the decoders on any valid object.
func FuzzPlainMembers(f *testing.F) {
	f.Add([]byte(`{"file_path":"f.txt","offset":3}`))
	f.Fuzz(func(t *testing.T, obj []byte) { checkPlainMembers(t, obj) })
}
