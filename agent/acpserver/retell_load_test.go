package acpserver_test

import (
	"context"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/acpserver"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// answerEntry is a model call that thinks reasoning (when not "") and
// answers text.
func answerEntry(reasoning, text string) replay.Entry {
	var cs []llm.Chunk
	idx := 0
	if reasoning != "" {
		cs = append(cs,
			llm.Chunk{Type: llm.ChunkBlockStart, Index: 0, BlockType: llm.BlockReasoning},
			llm.Chunk{Type: llm.ChunkReasoningDelta, Index: 0, Text: reasoning},
			llm.Chunk{Type: llm.ChunkBlockEnd, Index: 0, Block: &llm.Block{Type: llm.BlockReasoning, Text: reasoning}})
		idx = 1
	}
	cs = append(cs,
		llm.Chunk{Type: llm.ChunkBlockStart, Index: idx, BlockType: llm.BlockText},
		llm.Chunk{Type: llm.ChunkTextDelta, Index: idx, Text: text},
		llm.Chunk{Type: llm.ChunkBlockEnd, Index: idx, Block: &llm.Block{Type: llm.BlockText, Text: text}},
		llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}})
	return replay.Entry{Kind: replay.KindChunks, Chunks: cs}
}

// callEntry is a model call that calls tool name with args.
func callEntry(id, name, args string) replay.Entry {
	return replay.Entry{Kind: replay.KindChunks, Chunks: []llm.Chunk{
		{Type: llm.ChunkBlockStart, Index: 0, BlockType: llm.BlockToolCall},
		{Type: llm.ChunkToolCallDelta, Index: 0, ID: id, Name: name, ArgumentsDelta: args},
		{Type: llm.ChunkBlockEnd, Index: 0, Block: &llm.Block{Type: llm.BlockToolCall, ID: id, Name: name, Arguments: args}},
		{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishToolCalls}},
	}}
}

// loadFrames serves srv over pipes, loads session sid and returns every
// frame written up to the load's answer (included).
func loadFrames(t *testing.T, srv *acpserver.Server, sid, cwd string) []string {
	t.Helper()
	var frames []string
	serveLoad(t, srv, sid, cwd, func(line []byte) { frames = append(frames, string(line)) })
	return frames
}

// TestPlainRetellIsDecodedRetell loads one session twice — its history
// retold straight from the log's bytes where the records are plain, then
// the decoded way only — and compares the frames byte for byte: prompts,
// thoughts and answers with characters the frames escape (and ones the
// plain path leaves to the decoded one), tool calls that succeed and fail,
// and a todo_write's plan.
func TestPlainRetellIsDecodedRetell(t *testing.T) {
	odd := "a <b> & \"c\" \\ / \n\t\b\f\r \x7f"
	script := []replay.Entry{
		answerEntry("thinking "+odd, "answer "+odd),
		answerEntry("", "é \u2028 🎬 \\u0041"),
		callEntry("call_1", "read", `{"file_path":"f.txt"}`), answerEntry("", "read it"),
		callEntry("call_2", "read", `{"file_path":"missing <&>.txt"}`), answerEntry("why", "it failed"),
		callEntry("call_3", "todo_write", `{"todos":[{"content":"step <1>","status":"pending"},{"content":"two","status":"completed","priority":"high"}]}`), answerEntry("", "planned"),
		callEntry("call_4", "bash", `{"command":"printf 'x\\ny <&>'","description":"print"}`), answerEntry("", "ran"),
	}
	prompts := []string{"prompt " + odd, "é \u2029 🎬", "read f.txt", "read the missing one", "plan", "run"}
	dir := t.TempDir()
	store, err := jsonl.Open(dir, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := agent.Config{Store: store, Models: anyScript(script), Provider: "replay", Model: "replay", ContextWindow: 1 << 20, Mode: sandbox.DangerFullAccess, SpillDir: dir}
	srv, err := newServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	conn, cwd, sid := benchSession(t, srv, dir)
	ctx := context.Background()
	for _, p := range prompts {
		if _, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(p)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	var got [2][]string
	for k := range got {
		srv, err := newServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if k == 1 {
			acpserver.RetellDecoded(srv)
		}
		got[k] = loadFrames(t, srv, string(sid), cwd)
	}
	plain, decoded := got[0], got[1]
	for _, want := range []string{`"sessionUpdate":"agent_thought_chunk"`, `"sessionUpdate":"plan"`, `"status":"failed"`, `\u003cb\u003e`, `"sessionUpdate":"user_message_chunk"`} {
		if !strings.Contains(strings.Join(decoded, "\n"), want) {
			t.Errorf("the retold history holds no %s", want)
		}
	}
	if len(plain) != len(decoded) {
		t.Fatalf("%d frames retold from the log's bytes, %d decoded:\n%s\n---\n%s", len(plain), len(decoded), strings.Join(plain, "\n"), strings.Join(decoded, "\n"))
	}
	for i := range plain {
		if plain[i] != decoded[i] {
			t.Errorf("frame %d:\nfrom the log's bytes %s\n            decoded %s", i, plain[i], decoded[i])
		}
	}
}
