package acpserver_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// soakClient is a minimal ACP client: it ignores updates and refuses
// permission and file requests.
type soakClient struct{}

func (soakClient) SessionUpdate(context.Context, acp.SessionNotification) error { return nil }
func (soakClient) RequestPermission(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
}
func (soakClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, fmt.Errorf("not offered")
}
func (soakClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, fmt.Errorf("not offered")
}
func (soakClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, fmt.Errorf("not offered")
}
func (soakClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, fmt.Errorf("not offered")
}
func (soakClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, fmt.Errorf("not offered")
}
func (soakClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, fmt.Errorf("not offered")
}
func (soakClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, fmt.Errorf("not offered")
}

// soakScripts serves each session its own replay script.
type soakScripts struct{ scripts [][]replay.Entry }

func (p soakScripts) ForSession(i int, cwd string, done int) (llm.Provider, error) {
	if i >= len(p.scripts) {
		return nil, fmt.Errorf("no script for session %d", i)
	}
	return replay.New(p.scripts[i], done, cwd), nil
}

func textScript(session, turns int) []replay.Entry {
	var s []replay.Entry
	for t := 1; t <= turns; t++ {
		text := fmt.Sprintf("session %d reply %d", session, t)
		s = append(s, replay.Entry{Kind: replay.KindChunks, Chunks: []llm.Chunk{
			{Type: llm.ChunkBlockStart, Index: 0, BlockType: llm.BlockText},
			{Type: llm.ChunkTextDelta, Index: 0, Text: text},
			{Type: llm.ChunkBlockEnd, Index: 0, Block: &llm.Block{Type: llm.BlockText, Text: text}},
			{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}},
		}})
	}
	return s
}

// TestRaceSoak runs many sessions concurrently in one agent process with
// the replay provider (run it under -race): every turn ends normally and
// every log holds only its own session's conversation. REEL_SOAK=1 runs
// 8 sessions × 50 turns; the default is 3 × 4.
func TestRaceSoak(t *testing.T) {
	sessions, turns := 3, 4
	if os.Getenv("REEL_SOAK") == "1" {
		sessions, turns = 8, 50
	}
	dir := t.TempDir()
	store, err := jsonl.Open(dir, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	models := soakScripts{}
	for i := 0; i < sessions; i++ {
		models.scripts = append(models.scripts, textScript(i, turns))
	}
	srv, err := newServer(agent.Config{Store: store, Models: models, Provider: "replay", Model: "replay", Mode: sandbox.DangerFullAccess, SpillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), agentIn, agentOut) }()
	conn := acp.NewClientSideConnection(soakClient{}, clientOut, clientIn)
	ctx := context.Background()
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	// Create the sessions one by one so session i gets script i.
	ids := make([]acp.SessionId, sessions)
	for i := range ids {
		cwd := filepath.Join(dir, fmt.Sprintf("cwd%d", i))
		if err := os.MkdirAll(cwd, 0o755); err != nil {
			t.Fatal(err)
		}
		r, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = r.SessionId
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for turn := 1; turn <= turns; turn++ {
				r, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(fmt.Sprintf("session %d turn %d", i, turn))}})
				if err != nil || r.StopReason != acp.StopReasonEndTurn {
					errs <- fmt.Errorf("session %d turn %d: %v %v", i, turn, r.StopReason, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_ = clientOut.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		d, err := jsonl.ReadFile(filepath.Join(dir, string(id)+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		l, err := sessionlog.Seed(d.Header, d.Events)
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		ends := 0
		for _, e := range l.Events() {
			if e.Type == sessionlog.TypeTurnEnd {
				ends++
			}
			if e.Type == sessionlog.TypeUserMessage && !strings.Contains(string(e.Data), fmt.Sprintf("session %d turn", i)) {
				t.Fatalf("session %d's log holds another session's message: %s", i, e.Data)
			}
		}
		if ends != turns {
			t.Fatalf("session %d: %d turns logged, want %d", i, ends, turns)
		}
	}
	t.Logf("%d sessions × %d turns in one process", sessions, turns)
}
