package tools

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzArgs feeds arbitrary bytes to every tool's argument parser and to
// Describe. Nothing may panic, and whatever parses must survive a round
// trip: parse → marshal → parse gives the same arguments.
func FuzzArgs(f *testing.F) {
	seeds := []string{
		`{"command":"echo HELLO","description":"Echo HELLO","timeout":"200","run_in_background":false}`,
		`{"file_path":"a.txt","offset":1e1,"limit":null,"content":"x","old_string":"a","new_string":"b","replace_all":"true"}`,
		`{"pattern":"**/*.{go,md}","path":"src","glob":"*.go","output_mode":"content","-i":true}`,
		`{"sandbox_permissions":"danger-full-access","justification":"asked","command":"ls"}`,
		`[1,2]`, `"str"`, `null`, ``, `{"command":`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	type parser struct {
		tool  string
		parse func(json.RawMessage) (any, error)
	}
	parsers := []parser{
		{"bash", func(r json.RawMessage) (any, error) { return ParseBashArgs(r) }},
		{"read", func(r json.RawMessage) (any, error) { return ParseReadArgs(r) }},
		{"write", func(r json.RawMessage) (any, error) { return ParseWriteArgs(r) }},
		{"edit", func(r json.RawMessage) (any, error) { return ParseEditArgs(r) }},
		{"glob", func(r json.RawMessage) (any, error) { return ParseGlobArgs(r) }},
		{"grep", func(r json.RawMessage) (any, error) { return ParseGrepArgs(r) }},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range parsers {
			_, _, _ = Describe(p.tool, data)
			got, err := p.parse(data)
			if err != nil {
				if _, ok := err.(*ArgError); !ok {
					t.Fatalf("%s: error %T is not an *ArgError: %v", p.tool, err, err)
				}
				continue
			}
			enc, err := json.Marshal(got)
			if err != nil {
				t.Fatalf("%s: marshal %#v: %v", p.tool, got, err)
			}
			again, err := p.parse(enc)
			if err != nil {
				t.Fatalf("%s: re-parse of %s: %v", p.tool, enc, err)
			}
			if !reflect.DeepEqual(got, again) {
				t.Fatalf("%s: round trip changed %#v into %#v", p.tool, got, again)
			}
		}
	})
}

// FuzzGlobPattern checks that compiling and matching arbitrary glob
// patterns never panics.
func FuzzGlobPattern(f *testing.F) {
	f.Add("**/*.{ts,tsx}", "src/a/b.ts")
	f.Add("{a,{b,c}}/[x-z]?", "c/yy")
	f.Add(`\{a,b}/**/**`, "{a,b}/q")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		g, err := compileGlob(pattern)
		if err != nil {
			return
		}
		_ = g.match(name)
		_ = g.mayContain(name)
		_ = g.matchFile(name)
	})
}
