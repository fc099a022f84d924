package agent

import (
	"strings"
	"testing"
)

// TestCanonicalArguments: the chain key and the quoted arguments are what
// the reference computes: JSON.stringify of the key-sorted JSON.parse of
// the raw arguments, or the JSON string of arguments that are not JSON.
func TestCanonicalArguments(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{` { "a" : [ {"z":1, "y":[true,false,null]} ] } `, `{"a":[{"y":[true,false,null],"z":1}]}`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{"b":1,"10":2,"9":3,"a":4,"01":5}`, `{"9":3,"10":2,"01":5,"a":4,"b":1}`},
		{`{"｡":1,"😀":2}`, `{"😀":2,"｡":1}`},
		{`[1.0, 1e21, 1e20, 0.000001, 1e-7, -0, 12345678901234567890, 1.5e300, 1e400, 0.1, 123.456, -2.50]`,
			`[1,1e+21,100000000000000000000,0.000001,1e-7,0,12345678901234567000,1.5e+300,null,0.1,123.456,-2.5]`},
		{`{"s":"<tag>&\u2028\u0001\"\\/"}`, "{\"s\":\"<tag>&\u2028\\u0001\\\"\\\\/\"}"},
		{`"just a string"`, `"just a string"`},
		{`{"a":`, `"{\"a\":"`},
		{`{"a":1}}`, `"{\"a\":1}}"`},
		{``, `""`},
		{"not json\n", `"not json\n"`},
	} {
		if got := canonicalArguments(tc.in); got != tc.want {
			t.Errorf("canonicalArguments(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestPreviewArguments counts in UTF-16 code units, as the reference does,
// and never splits a surrogate pair.
func TestPreviewArguments(t *testing.T) {
	a500 := strings.Repeat("a", 500)
	for _, tc := range []struct{ in, want string }{
		{a500, a500},
		{a500 + "b", a500 + "… (+1 more chars)"},
		{strings.Repeat("a", 499) + "😀x", strings.Repeat("a", 499) + "… (+3 more chars)"},
		{strings.Repeat("é", 600), strings.Repeat("é", 500) + "… (+100 more chars)"},
	} {
		if got := previewArguments(tc.in); got != tc.want {
			t.Errorf("previewArguments(%d chars) = …%q, want …%q", len(tc.in), got[max(0, len(got)-30):], tc.want[max(0, len(tc.want)-30):])
		}
	}
}
