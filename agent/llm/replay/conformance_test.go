package replay_test

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/llmtest"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// response is a complete recorded response in the dsh shape.
var response = []llm.Chunk{
	{Type: llm.ChunkBlockStart, Index: 0, BlockType: llm.BlockReasoning},
	{Type: llm.ChunkReasoningDelta, Index: 0, Text: "The user wants a listing."},
	{Type: llm.ChunkBlockEnd, Index: 0, Block: &llm.Block{Type: llm.BlockReasoning, Text: "The user wants a listing."}},
	{Type: llm.ChunkBlockStart, Index: 1, BlockType: llm.BlockText},
	{Type: llm.ChunkTextDelta, Index: 1, Text: "Listing files."},
	{Type: llm.ChunkBlockEnd, Index: 1, Block: &llm.Block{Type: llm.BlockText, Text: "Listing files."}},
	{Type: llm.ChunkBlockStart, Index: 2, BlockType: llm.BlockToolCall},
	{Type: llm.ChunkToolCallDelta, Index: 2, ID: "call_1", Name: "bash", ArgumentsDelta: `{"command":"ls"}`},
	{Type: llm.ChunkBlockEnd, Index: 2, Block: &llm.Block{Type: llm.BlockToolCall, ID: "call_1", Name: "bash", Arguments: `{"command":"ls"}`}},
	{Type: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5}},
	{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishToolCalls}},
}

// serve opens a stream of a provider whose script is the one entry e.
func serve(e replay.Entry) llmtest.Opener {
	return func(t testing.TB, ctx context.Context) llm.Stream {
		s, err := replay.New([]replay.Entry{e}, 0, "").Stream(ctx, llm.Request{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

func TestConformance(t *testing.T) {
	llmtest.TestStream(t, llmtest.Streams{
		Open: serve(replay.Entry{Kind: replay.KindChunks, Chunks: response}),
		Hang: serve(replay.Entry{Kind: replay.KindHang, Chunks: response[:5]}),
		Fail: serve(replay.Entry{Kind: replay.KindThrow, Chunks: response[:2], Message: "overloaded", Code: llm.CodeServer}),
	})
}

// TestConformanceCorpus checks every complete call recorded in the corpus
// against the stream order, and runs the suite on the recorded call with
// the most blocks.
func TestConformanceCorpus(t *testing.T) {
	var entries []replay.Entry
	for _, dir := range corpusDirs(t) {
		d, err := jsonl.ReadFile(filepath.Join(dir, "session.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		override := filepath.Join(dir, "replay.override.json")
		if _, err := os.Stat(override); err != nil {
			override = ""
		}
		script, err := replay.Load(d.Events, override)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range script {
			if e.Kind != replay.KindChunks {
				continue
			}
			if err := llmtest.CheckChunks(e.Chunks); err != nil {
				t.Errorf("%s: call %d (%s): %v", filepath.Base(dir), i+1, e.Where, err)
			}
			e.Where = filepath.Base(dir) + " " + e.Where
			entries = append(entries, e)
		}
	}
	t.Logf("%d recorded calls checked", len(entries))
	if len(entries) == 0 {
		t.Fatal("the corpus has no complete call")
	}
	richest := slices.MaxFunc(entries, func(a, b replay.Entry) int { return cmp.Compare(blocks(a), blocks(b)) })
	t.Logf("suite on %s (%d blocks)", richest.Where, blocks(richest))
	llmtest.TestStream(t, llmtest.Streams{
		Open: serve(richest),
		Hang: serve(replay.Entry{Kind: replay.KindHang, Chunks: richest.Chunks[:len(richest.Chunks)/2]}),
		Fail: serve(replay.Entry{Kind: replay.KindThrow, Chunks: richest.Chunks[:len(richest.Chunks)/2], Message: "overloaded", Code: llm.CodeServer}),
	})
}

// blocks counts the block-start chunks of e.
func blocks(e replay.Entry) int {
	n := 0
	for _, c := range e.Chunks {
		if c.Type == llm.ChunkBlockStart {
			n++
		}
	}
	return n
}
