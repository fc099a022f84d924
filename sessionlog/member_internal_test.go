package sessionlog

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestObjectMemberAsUnmarshal checks objectMember against what
// encoding/json decodes into a struct field "message" (the projection's
// earlier implementation): the same bytes, found or not alike.
func TestObjectMemberAsUnmarshal(t *testing.T) {
	cases := []string{
		`{"turn":1,"message":{"role":"assistant","content":[]}}`,
		` { "message" : {"a":"}]\"{"} , "x":[1,{"y":"z"}] } `,
		`{"message":{"a":1},"message":{"b":2}}`,
		`{"MESSAGE":{"a":1}}`,
		`{"mess\u0061ge":{"a":1}}`,
		`{"message":null}`,
		`{"message":"text"}`,
		`{"message":12.5e3,"z":true}`,
		`{"message":[1,2,[3]]}`,
		`{"messages":{"a":1}}`,
		`{"x":{"message":{"a":1}}}`,
		`{}`,
		`[{"message":{}}]`,
		`"message"`,
		`{"message":{"a":1}`,
		`{"message":{"a":1}} x`,
		``,
		`{"k\"ey":"v\\","message":{"t":"\u00e9\n"}}`,
	}
	for _, c := range cases {
		var d struct {
			Message json.RawMessage `json:"message"`
		}
		err := json.Unmarshal([]byte(c), &d)
		wantOK := err == nil && d.Message != nil
		got, ok := objectMember([]byte(c), "message")
		if ok != wantOK || (ok && !bytes.Equal(got, d.Message)) {
			t.Errorf("%s: objectMember = %q, %v; encoding/json %q, %v", c, got, ok, d.Message, wantOK)
		}
	}
}
