package replay

import "github.com/reel-agent/reel/agent/llm"

// TextEntry is a scripted model call that answers text and stops.
func TextEntry(text string) Entry {
	return Entry{Kind: KindChunks, Chunks: []llm.Chunk{
		{Type: llm.ChunkBlockStart, Index: 0, BlockType: llm.BlockText},
		{Type: llm.ChunkTextDelta, Index: 0, Text: text},
		{Type: llm.ChunkBlockEnd, Index: 0, Block: &llm.Block{Type: llm.BlockText, Text: text}},
		{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}},
	}}
}

// ToolCallEntry is a scripted model call that asks for one tool call (id,
// tool name, arguments as JSON text) and finishes with tool-calls.
func ToolCallEntry(id, name, args string) Entry {
	return Entry{Kind: KindChunks, Chunks: []llm.Chunk{
		{Type: llm.ChunkBlockStart, Index: 0, BlockType: llm.BlockToolCall},
		{Type: llm.ChunkToolCallDelta, Index: 0, ID: id, Name: name, ArgumentsDelta: args},
		{Type: llm.ChunkBlockEnd, Index: 0, Block: &llm.Block{Type: llm.BlockToolCall, ID: id, Name: name, Arguments: args}},
		{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishToolCalls}},
	}}
}
