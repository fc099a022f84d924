package jsrules_test

import (
	"testing"

	"github.com/reel-agent/reel/internal/jsrules"
)

// TestParseAppend: JSON.stringify(JSON.parse(s)) and its sorted-keys
// form; the want columns are node's output for each input.
func TestParseAppend(t *testing.T) {
	for _, c := range []struct{ in, own, sorted string }{
		{`{"b":1,"2":[true,null,1e400],"a":{"z":"x","10":0.1,"1":-0}}`,
			`{"2":[true,null,null],"b":1,"a":{"1":0,"10":0.1,"z":"x"}}`,
			`{"2":[true,null,null],"a":{"1":0,"10":0.1,"z":"x"},"b":1}`},
		{"[1.50,\"\u2028<&>\"]", "[1.5,\"\u2028<&>\"]", "[1.5,\"\u2028<&>\"]"},
		{`{"k":1,"k":2,"j":3}`, `{"k":2,"j":3}`, `{"j":3,"k":2}`},
	} {
		v, err := jsrules.Parse([]byte(c.in))
		if err != nil {
			t.Fatalf("Parse(%s): %v", c.in, err)
		}
		if got := string(jsrules.Append(nil, v)); got != c.own {
			t.Errorf("Append(%s) = %s, want %s", c.in, got, c.own)
		}
		if got := string(jsrules.AppendSorted(nil, v)); got != c.sorted {
			t.Errorf("AppendSorted(%s) = %s, want %s", c.in, got, c.sorted)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":1} x`, `[1,]`} {
		if _, err := jsrules.Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
