package sessionlog

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// validCases are inputs at the edges of the JSON grammar, each checked
// against encoding/json.Valid.
var validCases = []string{
	``, ` `, `{}`, `[]`, ` {} `, "\t[\n]\r", `{`, `}`, `[`, `]`, `[}`, `{]`, `{"a":1}`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a" : 1 , "b" : [ 1 , 2 ] }`,
	`[1,]`, `[,1]`, `[1 2]`, `[1,,2]`, `{"a":1 "b":2}`, `{"a":1}}`, `[[]]]`, `{}{}`, `{} x`, `1 2`,
	`0`, `-0`, `01`, `-01`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `-`, `--1`, `+1`, `1.5e3.2`, `12345678901234567890123`, `0x10`, `1_000`, `Infinity`, `NaN`,
	`true`, `false`, `null`, `tru`, `nul`, `falsey`, `True`, `nullnull`, `[true,false,null]`,
	`""`, `"a"`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u00e9"`, `"\u00E9"`, `"\u00g9"`, `"\u00e"`, `"\x"`, `"\'"`, `"a\"`, `"a\\"`, `"\`, `"`, `"tab	in"`, "\"nl\nin\"", "\"\x00\"", "\"\x1f\"", "\"\x7f\"",
	"\"bad \xff utf8\"", "\"\xc3\"", "{\"\xff\":1}", `{"a\"b":1}`, `{"a":"b\"}`, `{"data":{"text":"say \"hi\""},"seq":1}`,
	`{"type":"x","seq":0,"time":1,"data":{"a":[1,{"b":"c"}]}}`, `{"a":[{"b":[{"c":{}}]}]}`, `[{"a":1},{"b":2}]`, `{"a":{"b":{"c":[1,2,{"d":null}]}}}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 9999) + "[]" + strings.Repeat("]", 9999),
	strings.Repeat("[", 10000) + "[]" + strings.Repeat("]", 10000),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10000) + "{}" + strings.Repeat("}", 10000),
	strings.Repeat("[", 100),
}

// TestValidJSONIsEncodingJSONs holds validJSON to json.Valid over the edge
// cases, every prefix of each, and random texts over JSON's punctuation.
func TestValidJSONIsEncodingJSONs(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Fatalf("validJSON(%.200q) = %v, json.Valid says %v", s, got, want)
		}
	}
	for _, s := range validCases {
		check(s)
		if len(s) < 200 {
			for i := range len(s) {
				check(s[:i])
				check(s[i:])
			}
		}
	}
	// Strings long enough to be read eight bytes at a time, a byte that
	// needs care at every offset.
	for n := range 40 {
		for pos := range n {
			for _, odd := range []string{`"`, `\"`, `\\`, "\x00", "\x1f", "\x7f", "\xff", `\u0041`, `\x`, "\n"} {
				s := strings.Repeat("a", pos) + odd + strings.Repeat("b", n-pos)
				check(`"` + s + `"`)
				check(`{"k":"` + s + `","z":1}`)
			}
		}
	}
	r := rand.New(rand.NewPCG(34, 5000))
	alphabet := []string{"{", "}", "[", "]", ",", ":", `"`, `\`, `\"`, `\u12ab`, "u", "a", "0", "1", "-", ".", "e", "+", " ", "\n", "true", "null", "f", "\x00", "\xff", `"k":`, `"s"`}
	for range 200000 {
		var sb strings.Builder
		for range r.IntN(16) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		check(sb.String())
	}
}

// FuzzValidJSON holds validJSON to json.Valid on any input.
func FuzzValidJSON(f *testing.F) {
	for _, s := range validCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}
