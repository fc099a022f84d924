package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFinishReplayState: a finish chunk's replayState decodes and encodes
// back byte for byte; anything but an object (with "blocks" an array of
// objects, within the size bound) is refused naming replayState.
func TestFinishReplayState(t *testing.T) {
	ok := []string{
		`{"type":"finish","reason":{"kind":"max-tokens"},"replayState":{"response":{"kind":"pi-ai","version":2,"stopReason":"length"},"blocks":[{"type":"text"},{"type":"tool-call"}]}}`,
		`{"type":"finish","reason":{"kind":"stop"},"replayState":{"response":{"kind":"x"}}}`,
		`{"type":"finish","reason":{"kind":"stop"},"replayState":{}}`,
	}
	for _, in := range ok {
		var c Chunk
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if out, err := c.MarshalJSON(); err != nil || string(out) != in {
			t.Errorf("round trip of %s = %s, %v", in, out, err)
		}
	}
	bad := []string{
		`{"type":"finish","reason":{"kind":"stop"},"replayState":[]}`,
		`{"type":"finish","reason":{"kind":"stop"},"replayState":"x"}`,
		`{"type":"finish","reason":{"kind":"stop"},"replayState":null}`,
		`{"type":"finish","reason":{"kind":"stop"},"replayState":{"blocks":{}}}`,
		`{"type":"finish","reason":{"kind":"stop"},"replayState":{"blocks":null}}`,
		`{"type":"finish","reason":{"kind":"stop"},"replayState":{"blocks":[1]}}`,
		`{"type":"finish","reason":{"kind":"stop"},"replayState":{"r":"` + strings.Repeat("x", MaxReplayStateBytes) + `"}}`,
		`{"type":"finish","reason":{"kind":"stop"},"replaystate":{}}`,
	}
	for _, in := range bad {
		var c Chunk
		err := json.Unmarshal([]byte(in), &c)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "replaystate") {
			t.Errorf("%.120s: error %v, want one naming replayState", in, err)
		}
	}
}

// TestAssemblerMaxTokens: a response cut at the token limit keeps its text
// and drops its tool-call blocks (they never run), and its replayState's
// per-block entries are pruned in step; an envelope whose entries do not
// match the blocks is dropped, one without entries kept as it is.
func TestAssemblerMaxTokens(t *testing.T) {
	const env = `{"response":{"kind":"pi-ai","stopReason":"length"},"blocks":[{"type":"text"},{"type":"tool-call"}]}`
	feed := func(finish, replay string) *Assembler {
		var a Assembler
		chunks := []string{
			`{"type":"block-start","index":0,"blockType":"text"}`,
			`{"type":"text-delta","index":0,"text":"Starting."}`,
			`{"type":"block-end","index":0,"block":{"type":"text","text":"Starting."}}`,
			`{"type":"block-start","index":1,"blockType":"tool-call"}`,
			`{"type":"tool-call-delta","index":1,"id":"c","name":"bash","argumentsDelta":"{\"command\":\"echo > "}`,
			`{"type":"finish","reason":{"kind":"` + finish + `"}` + replay + `}`,
		}
		for _, s := range chunks {
			var c Chunk
			if err := json.Unmarshal([]byte(s), &c); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Add(c); err != nil {
				t.Fatal(err)
			}
		}
		return &a
	}
	a := feed("max-tokens", `,"replayState":`+env)
	if got := string(a.Content()); got != `[{"type":"text","text":"Starting."}]` {
		t.Errorf("content %s, want the text block only", got)
	}
	if calls := a.ToolCalls(); len(calls) != 0 {
		t.Errorf("tool calls %v, want none", calls)
	}
	if got, want := string(a.ReplayState()), `{"response":{"kind":"pi-ai","stopReason":"length"},"blocks":[{"type":"text"}]}`; got != want {
		t.Errorf("replayState %s, want %s", got, want)
	}
	a = feed("tool-calls", `,"replayState":`+env)
	if len(a.Blocks()) != 2 || len(a.ToolCalls()) != 1 || string(a.ReplayState()) != env {
		t.Errorf("a finished response: %d blocks, %d calls, replayState %s", len(a.Blocks()), len(a.ToolCalls()), a.ReplayState())
	}
	if rs := feed("max-tokens", `,"replayState":{"blocks":[{"type":"text"}]}`).ReplayState(); rs != nil {
		t.Errorf("mismatched entries kept: %s", rs)
	}
	if rs := feed("max-tokens", `,"replayState":{"response":{"k":1}}`).ReplayState(); string(rs) != `{"response":{"k":1}}` {
		t.Errorf("an envelope without entries: %s", rs)
	}
	if rs := feed("max-tokens", ``).ReplayState(); rs != nil {
		t.Errorf("no envelope: %s", rs)
	}
}
