package openai

import (
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
// history: what the provider builds before the SDK writes it to the socket.
// Each iteration is the next step of one session (its history one turn
// longer), so run it with a fixed -benchtime (e.g. 200x) to keep N near
// its value.
func BenchmarkRequestBody(b *testing.B) {
	for _, turns := range []int{10, 5000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			hist := benchHistory(turns + b.N)
			var memo llm.Memo
			owner := new(int)
			req := llm.Request{Model: "m", System: "You are reel.", Tools: json.RawMessage(benchTools), Messages: hist[:4*turns], Memo: &memo}
			if _, err := sentBody(Config{}, owner, req); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				req.Messages = hist[:4*(turns+i+1)]
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

const benchTools = `[{"name":"bash","description":"Run a <shell> command","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]`
