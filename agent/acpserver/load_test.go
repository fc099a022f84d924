package acpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/sandbox"
)

// TestLoadRetellsHistoryBeforeAnswer loads a session whose retold history
// spans several write batches (frames are written in batches on a load):
// by the answer to session/load, the client has every turn's prompt, tool
// call, final tool status and answer, in the order the turns showed them.
func TestLoadRetellsHistoryBeforeAnswer(t *testing.T) {
	const turns = 150 // ~600 frames: more than one 64 KiB batch, fewer than the SDK client's 1,024-notification queue
	r := start(t, agent.Config{Models: anyScript(toolScript(turns)), Provider: "replay", Model: "replay", ContextWindow: 1 << 30, Mode: sandbox.DangerFullAccess})
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := r.newSession(t, cwd)
	ctx := context.Background()
	for range turns {
		if _, err := r.conn.Prompt(ctx, acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	before := len(r.client.updatesOf(sid))
	if _, err := r.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	var shape []string
	for _, u := range r.client.updatesOf(sid)[before:] {
		switch {
		case u.UserMessageChunk != nil:
			shape = append(shape, "user")
		case u.ToolCall != nil:
			shape = append(shape, "call "+string(u.ToolCall.ToolCallId))
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
			shape = append(shape, fmt.Sprintf("%s %s", *u.ToolCallUpdate.Status, u.ToolCallUpdate.ToolCallId))
		case u.AgentMessageChunk != nil:
			shape = append(shape, "text")
		}
	}
	var want []string
	for n := 1; n <= turns; n++ {
		want = append(want, "user", fmt.Sprintf("call call_%d", n), fmt.Sprintf("completed call_%d", n), "text")
	}
	if got, w := strings.Join(shape, "\n"), strings.Join(want, "\n"); got != w {
		t.Fatalf("retold history (%d updates) differs from the %d turns' (%d):\n%.600s", len(shape), turns, len(want), got)
	}
}
