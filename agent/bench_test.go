package agent_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// BenchmarkPromptTurn measures one whole text turn in process (replay
// model, JSONL store with its fsyncs, SDK client over io.Pipe).
func BenchmarkPromptTurn(b *testing.B) {
	dir := b.TempDir()
	store, err := jsonl.Open(dir, jsonl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	m := soakScripts{scripts: [][]replay.Entry{textScript(0, 20000)}}
	srv, err := agent.New(agent.Config{Store: store, Models: m, Provider: "replay", Model: "replay", Mode: agent.ModeFullAccess, SpillDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	go srv.Serve(context.Background(), agentIn, agentOut)
	conn := acp.NewClientSideConnection(soakClient{}, clientOut, clientIn)
	ctx := context.Background()
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		b.Fatal(err)
	}
	cwd := filepath.Join(dir, "cwd")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		b.Fatal(err)
	}
	r, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: r.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}); err != nil {
			b.Fatal(err)
		}
	}
}
