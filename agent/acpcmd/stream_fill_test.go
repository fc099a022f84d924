package acpcmd_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// TestLongAnswerBlockEnds drives the real `reel acp` (with
// --debug-invariant) against a local SSE model streaming a long answer,
// text or tool-call arguments, well past the size from which its deltas
// are logged merged. The stream no longer accumulates its blocks (the
// agent fills each block-end from the logged deltas): every block-end in
// the log must carry exactly the concatenation of its block's deltas,
// the assistant/message the same text, and every prompt must end normally.
func TestLongAnswerBlockEnds(t *testing.T) {
	t.Parallel()
	const size = 300 << 10
	for _, toolArgs := range []bool{false, true} {
		t.Run("toolArgs="+strconv.FormatBool(toolArgs), func(t *testing.T) {
			srv := &sseServer{size: size, toolArgs: toolArgs, onlyFirst: true}
			url := serveSSE(t, srv)
			dir, ws, state := workspace(t)
			p := startProc(t, dir, baseEnv(t), "acp", "--base-url", url, "--model", "m", "--state-dir", state,
				"--mode", "read-only", "--no-title-model", "--debug-invariant", "--max-response-bytes", strconv.Itoa(4*size))
			p.initialize()
			sid := p.newSession(ws)
			if stop, _ := p.prompt(sid, "Tell me a long story."); stop != "end_turn" {
				t.Fatalf("stop reason %q, want end_turn", stop)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("reel exited %d", code)
			}
			type key struct{ step, index int }
			deltas := map[key]*strings.Builder{}
			ends, merged := 0, 0
			for _, e := range logEvents(t, state, sid) {
				if e.Type != sessionlog.TypeAssistantChunk {
					continue
				}
				var d struct {
					Step  int       `json:"step"`
					Chunk llm.Chunk `json:"chunk"`
				}
				if err := json.Unmarshal(e.Data, &d); err != nil {
					t.Fatal(err)
				}
				k := key{d.Step, d.Chunk.Index}
				switch c := d.Chunk; c.Type {
				case llm.ChunkTextDelta, llm.ChunkToolCallDelta:
					if deltas[k] == nil {
						deltas[k] = &strings.Builder{}
					}
					deltas[k].WriteString(c.Text + c.ArgumentsDelta)
					if len(c.Text+c.ArgumentsDelta) > 1<<10 {
						merged++
					}
				case llm.ChunkBlockEnd:
					ends++
					want := ""
					if deltas[k] != nil {
						want = deltas[k].String()
					}
					if got := c.Block.Text + c.Block.Arguments; got != want {
						t.Errorf("step %d block %d: block-end holds %d bytes, its deltas %d (differ)", k.step, k.index, len(got), len(want))
					}
					// Its bytes are those of encoding the block whole (the
					// agent encodes a text block-end from the logged deltas).
					var raw struct {
						Chunk json.RawMessage `json:"chunk"`
					}
					if err := json.Unmarshal(e.Data, &raw); err != nil {
						t.Fatal(err)
					}
					if enc, err := c.AppendJSON(nil); err != nil || !bytes.Equal(enc, raw.Chunk) {
						t.Errorf("step %d block %d: the logged block-end is not its block encoded whole (%v)", k.step, k.index, err)
					}
				}
			}
			if ends == 0 || merged == 0 {
				t.Fatalf("%d block-ends, %d merged deltas: the answer did not stream as expected", ends, merged)
			}
		})
	}
}
