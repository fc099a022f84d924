package mcp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/mcp"
	"github.com/reel-agent/reel/agent/tools"
)

// TestCheckArguments is the table of the one parse of MCP arguments: what
// it refuses (with the message the model reads) and the canonical bytes it
// returns otherwise, which it returns unchanged when given them.
func TestCheckArguments(t *testing.T) {
	deep := strings.Repeat(`[`, mcp.MaxArgDepth) + strings.Repeat(`]`, mcp.MaxArgDepth)
	tests := []struct{ name, in, want, err string }{
		{"empty", ``, `{}`, ""},
		{"null", ` null `, `{}`, ""},
		{"canonical", "{ \"b\": [1, 2.0, {\"y\": null, \"x\": \"<&>\"}],\n \"a\": \"\\u00e9\" }", `{"a":"é","b":[1,2.0,{"x":"\u003c\u0026\u003e","y":null}]}`, ""},
		{"deepest allowed", `{"a":` + deep[1:len(deep)-1] + `}`, `{"a":` + deep[1:len(deep)-1] + `}`, ""},
		{"repeated", `{"cmd":"echo SAFE","cmd":"rm -rf ~"}`, "",
			`tools: mcp__s__t: arguments: duplicate field "cmd" (byte 20 of line 1); a key may appear once in an object, spelled one way (not repeated, escaped differently or in another case). Nothing was sent to the server`},
		{"escaped repeat", `{"cmd":"echo SAFE","c\u006dd":"rm -rf ~"}`, "",
			`tools: mcp__s__t: arguments: duplicate field "cmd" (byte 20 of line 1); a key may appear once in an object, spelled one way (not repeated, escaped differently or in another case). Nothing was sent to the server`},
		{"case", `{"cmd":"echo SAFE","CMD":"rm -rf ~"}`, "",
			`tools: mcp__s__t: arguments: fields "cmd" and "CMD" differ only in case (byte 20 of line 1); a key may appear once in an object, spelled one way (not repeated, escaped differently or in another case). Nothing was sent to the server`},
		{"nested", `{"job":{"steps":[{"cmd":1,"cmd":2}]}}`, "",
			`tools: mcp__s__t: arguments: duplicate field "cmd" in "job.steps[0]" (byte 27 of line 1); a key may appear once in an object, spelled one way (not repeated, escaped differently or in another case). Nothing was sent to the server`},
		{"too deep", `{"a":` + deep + `}`, "",
			`tools: mcp__s__t: arguments: nested deeper than 64 levels in "a` + strings.Repeat("[0]", mcp.MaxArgDepth-1) + `" (byte 69 of line 1); objects and arrays may nest that deep at most. Nothing was sent to the server`},
		{"too big", `{"a":"` + strings.Repeat("x", 100) + `"}`, "", `tools: mcp__s__t: arguments: the arguments are 108 bytes, more than the 100-byte limit`},
		{"not an object", `[1]`, "", `tools: mcp__s__t: arguments: the arguments must be a JSON object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := 0 // the default bound
			if tt.name == "too big" {
				limit = 100
			}
			got, err := mcp.CheckArguments("mcp__s__t", json.RawMessage(tt.in), limit)
			if tt.err != "" {
				var ae *tools.ArgError
				if !errors.As(err, &ae) || err.Error() != tt.err {
					t.Fatalf("got %s, %v\nwant the error %s", got, err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
			again, err := mcp.CheckArguments("mcp__s__t", got, limit)
			if err != nil || string(again) != string(got) {
				t.Errorf("given its result %s it returned %s, %v", got, again, err)
			}
		})
	}
}
