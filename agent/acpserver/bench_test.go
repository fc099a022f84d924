package acpserver_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/acpserver"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// BenchmarkPromptTurn measures one whole text turn in process (replay
// model, JSONL store with its fsyncs, SDK client over io.Pipe).
func BenchmarkPromptTurn(b *testing.B) { benchTurns(b, textScript(0, 20000)) }

// BenchmarkToolTurn is a turn with one tool step (a read of a small file)
// and a closing text step: it carries the cost of the durability point
// between a tool's result and the client's completed update.
func BenchmarkToolTurn(b *testing.B) { benchTurns(b, toolScript(20000)) }

// benchTurns runs one prompt per iteration against script in a session
// whose cwd holds f.txt.
func benchTurns(b *testing.B, script []replay.Entry) {
	dir := b.TempDir()
	store, err := jsonl.Open(dir, jsonl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	m := soakScripts{scripts: [][]replay.Entry{script}}
	srv, err := newServer(agent.Config{Store: store, Models: m, Provider: "replay", Model: "replay", Mode: sandbox.DangerFullAccess, SpillDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	conn, _, sid := benchSession(b, srv, dir)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
		if err != nil {
			b.Fatal(err)
		}
		if res.StopReason != acp.StopReasonEndTurn {
			b.Fatalf("stop reason %s", res.StopReason)
		}
	}
}

// benchSession connects an SDK client to srv over io.Pipe, initializes
// and opens a session whose cwd (dir/cwd) holds f.txt.
func benchSession(b testing.TB, srv *acpserver.Server, dir string) (conn *acp.ClientSideConnection, cwd string, sid acp.SessionId) {
	b.Helper()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	go srv.Serve(context.Background(), agentIn, agentOut)
	conn = acp.NewClientSideConnection(soakClient{}, clientOut, clientIn)
	ctx := context.Background()
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		b.Fatal(err)
	}
	cwd = filepath.Join(dir, "cwd")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	r, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		b.Fatal(err)
	}
	return conn, cwd, r.SessionId
}

// toolScript is turns × (a read call of "f.txt", then a text reply).
func toolScript(turns int) []replay.Entry {
	var s []replay.Entry
	for t := 1; t <= turns; t++ {
		id := fmt.Sprintf("call_%d", t)
		args := `{"file_path":"f.txt"}`
		s = append(s, replay.Entry{Kind: replay.KindChunks, Chunks: []llm.Chunk{
			{Type: llm.ChunkBlockStart, Index: 0, BlockType: llm.BlockToolCall},
			{Type: llm.ChunkToolCallDelta, Index: 0, ID: id, Name: "read", ArgumentsDelta: args},
			{Type: llm.ChunkBlockEnd, Index: 0, Block: &llm.Block{Type: llm.BlockToolCall, ID: id, Name: "read", Arguments: args}},
			{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishToolCalls}},
		}})
		s = append(s, textScript(0, 1)...)
	}
	return s
}
