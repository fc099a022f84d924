package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
)

// benchHistory is turns × (a user line, a bash call, its result, a line of
// text), the shape of issue 31's measurement.
func benchHistory(turns int) []json.RawMessage {
	var out []json.RawMessage
	for t := 1; t <= turns; t++ {
		id := fmt.Sprintf("call_%d", t)
		out = append(out,
			json.RawMessage(fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"run step %d of the plan"}],"id":"u%d"}`, t, t)),
			json.RawMessage(fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool-call","id":%q,"name":"bash","arguments":"{\"command\":\"echo line %d\"}"}],"id":"a%d"}`, id, t, t)),
			json.RawMessage(fmt.Sprintf(`{"role":"user","content":[{"type":"tool-result","toolCallId":%q,"content":[{"type":"text","text":"line %d\n"}],"isError":false}],"id":"t%d"}`, id, t, t)),
			json.RawMessage(fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Printed line %d."}],"id":"b%d"}`, t, t)),
		)
	}
	return out
}

// BenchmarkRequestBody is the model request body of one step at N turns of
// history: what the provider builds before writing it to the socket.
func BenchmarkRequestBody(b *testing.B) {
	for _, turns := range []int{10, 5000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			hist := benchHistory(turns + 1)
			var memo llm.Memo
			owner := new(int)
			// The session so far: its encodings are kept.
			prev := llm.Request{Model: "m", System: "You are reel.", Tools: json.RawMessage(benchTools), Messages: hist[:len(hist)-4], Memo: &memo}
			if _, err := sentBody(Config{}, owner, prev); err != nil {
				b.Fatal(err)
			}
			// One step: the last turn's messages are new. Two versions of
			// it take turns, so each step encodes them again.
			last := [2][]json.RawMessage{copies(hist[len(hist)-4:]), copies(hist[len(hist)-4:])}
			for i := range last[1] {
				last[1][i] = bytes.ReplaceAll(last[1][i], []byte("line"), []byte("Line"))
			}
			i := 0
			for b.Loop() {
				req := prev
				req.Messages = append(hist[:len(hist)-4:len(hist)-4], last[i%2]...)
				i++
				params, history, err := requestBody(Config{}, owner, req)
				if err != nil {
					b.Fatal(err)
				}
				// What the SDK and the splice do before writing to the
				// socket: encode the header, find the mark.
				enc, err := params.MarshalJSON()
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := spliceHistory(enc, history); err != nil {
					b.Fatal(err)
				}
			}

		})
	}
}

// copies returns copies of msgs in new storage.
func copies(msgs []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		out[i] = append(json.RawMessage(nil), m...)
	}
	return out
}

const benchTools = `[{"name":"bash","description":"Run a <shell> command","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]`
