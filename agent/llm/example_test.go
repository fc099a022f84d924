package llm_test

import (
	"errors"
	"fmt"
	"io"

	"github.com/reel-agent/reel/agent/llm"
)

// sliceStream serves fixed chunks, for the example.
type sliceStream struct{ chunks []llm.Chunk }

func (s *sliceStream) Next() (llm.Chunk, error) {
	if len(s.chunks) == 0 {
		return llm.Chunk{}, io.EOF
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}

func (s *sliceStream) Close() error { return nil }

// An Assembler turns a model stream into the assistant message: the loop
// shows each delta as it arrives, then writes the content parts and runs
// the tool calls.
func ExampleAssembler() {
	stream := &sliceStream{chunks: []llm.Chunk{
		{Type: llm.ChunkBlockStart, Index: 0, BlockType: llm.BlockReasoning},
		{Type: llm.ChunkReasoningDelta, Index: 0, Text: "The user wants a listing."},
		{Type: llm.ChunkTextDelta, Index: 1, Text: "Listing "}, // no block-start: opens a text block
		{Type: llm.ChunkTextDelta, Index: 1, Text: "files."},
		{Type: llm.ChunkToolCallDelta, Index: 2, ID: "call_1", Name: "bash", ArgumentsDelta: `{"command":`},
		{Type: llm.ChunkToolCallDelta, Index: 2, ID: "call_1", ArgumentsDelta: `"ls"}`},
		{Type: llm.ChunkBlockEnd, Index: 0, Block: &llm.Block{Type: llm.BlockReasoning, Text: "The user wants a listing."}},
		{Type: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 12, OutputTokens: 9}},
		{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishToolCalls}},
	}}
	defer stream.Close()

	var a llm.Assembler
	for {
		c, err := stream.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println("stream failed:", err)
			return
		}
		d, err := a.Add(c)
		if err != nil {
			fmt.Println("model failed:", err)
			return
		}
		if d.Type != "" {
			fmt.Printf("show %s %q\n", d.Type, d.Text)
		}
	}
	reason, err := a.Finish()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("finish:", reason.Kind)
	fmt.Printf("content: %s\n", a.Content())
	fmt.Printf("usage: %s\n", a.Usage().AppendJSON(nil))
	for _, tc := range a.ToolCalls() {
		fmt.Printf("run %s %s %s\n", tc.ID, tc.Name, tc.Arguments)
	}
	// Output:
	// show reasoning "The user wants a listing."
	// show text "Listing "
	// show text "files."
	// finish: tool-calls
	// content: [{"type":"reasoning","text":"The user wants a listing."},{"type":"text","text":"Listing files."},{"type":"tool-call","id":"call_1","name":"bash","arguments":"{\"command\":\"ls\"}"}]
	// usage: {"inputTokens":12,"outputTokens":9}
	// run call_1 bash {"command":"ls"}
}
