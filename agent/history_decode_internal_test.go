package agent

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// historyDataCases are tool/result and assistant/message data at the edges
// of decodeMessage's member lookup.
var historyDataCases = []string{
	`{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"a\nb"}],"isError":false}],"role":"tool"},"meta":{"diffs":[{"path":"/p","newText":"x"}]}}`,
	`{"turn":1,"step":2,"message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}`,
	`{"message":{"role":"a"},"message":{"id":"b"}}`,
	`{"Message":{"role":"a"},"message":{"id":"b"}}`,
	`{"MESSAGE":{"role":"a"},"META":1}`,
	`{"message":null,"meta":null}`, `{"message":1}`, `{"message":{"role":1}}`, `{"meta":{"a":1},"meta":[2]}`,
	`null`, `[]`, `"x"`, `{}`, ``, `{"message":{}`, `{"message":{}}x`,
}

// TestDecodeMessageDataIsUnmarshals holds decodeMessage to json.Unmarshal
// into messageData (zero on its error).
func TestDecodeMessageDataIsUnmarshals(t *testing.T) {
	for _, s := range historyDataCases {
		for i := range len(s) + 1 {
			raw := []byte(s[:i])
			got := decodeMessage(sessionlog.New(sessionlog.Header{}), &sessionlog.Event{Data: raw})
			var want messageData
			if json.Unmarshal(raw, &want) != nil {
				want = messageData{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q:\n got %#v\nwant %#v", raw, got, want)
			}
		}
	}
}
