package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
)

// TestResponseBudget: every kind of content counts against the cap once (a
// block-end repeating its deltas adds nothing; one that arrives whole
// counts whole), and the first chunk past the cap is refused.
func TestResponseBudget(t *testing.T) {
	text := func(s string) llm.Chunk { return llm.Chunk{Type: llm.ChunkTextDelta, Text: s} }
	cases := []struct {
		name   string
		limit  int
		chunks []llm.Chunk
		admits int // how many chunks fit
	}{
		{"text within", 10, []llm.Chunk{text("12345"), text("12345")}, 2},
		{"text past", 10, []llm.Chunk{text("12345"), text("123456")}, 1},
		{"reasoning counts", 4, []llm.Chunk{{Type: llm.ChunkReasoningDelta, Text: "12345"}}, 0},
		{"tool-call id, name and arguments count", 10, []llm.Chunk{
			{Type: llm.ChunkToolCallDelta, ID: "ab", Name: "cd", ArgumentsDelta: "123456"},
			{Type: llm.ChunkToolCallDelta, ID: "ab", ArgumentsDelta: "1"},
		}, 1},
		{"block-end repeating its deltas adds nothing", 10, []llm.Chunk{
			text("1234567890"),
			{Type: llm.ChunkBlockEnd, Block: &llm.Block{Type: llm.BlockText, Text: "1234567890"}},
		}, 2},
		{"block-end arriving whole counts whole", 10, []llm.Chunk{
			{Type: llm.ChunkBlockEnd, Index: 1, Block: &llm.Block{Type: llm.BlockText, Text: strings.Repeat("x", 11)}},
		}, 0},
		{"raw chunk counts whole", 10, []llm.Chunk{{Raw: json.RawMessage(`{"type":"future","x":"123456"}`)}}, 0},
		{"finish and usage count nothing", 0, []llm.Chunk{
			{Type: llm.ChunkUsage, Usage: &llm.Usage{}},
			{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}},
		}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newResponseBudget(tc.limit)
			n := 0
			for _, c := range tc.chunks {
				if !b.admit(c) {
					break
				}
				n++
			}
			if n != tc.admits {
				t.Errorf("%d chunks admitted, want %d", n, tc.admits)
			}
			if b.used > tc.limit {
				t.Errorf("used %d of %d", b.used, tc.limit)
			}
		})
	}
}
