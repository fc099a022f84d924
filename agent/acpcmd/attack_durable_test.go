package acpcmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/acpcmd"
	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
)

// TestAttackShownResultIsDurable is finding 8 of the hardening issue: what
// the client was shown as done must survive a crash. reel runs a tool call;
// the moment the client reads the call's final tool_call_update, reel is
// killed with SIGKILL (no chance to flush anything). Loading the log
// afterwards must find that call's tool/result, with the output the client
// saw, in every trial and in both backends. (Before the fix the update went
// out before the result was synced, and the result was lost in a third of
// the trials.)
func TestAttackShownResultIsDurable(t *testing.T) {
	t.Parallel()
	trials := 6
	if os.Getenv("REEL_SOAK") == "1" {
		trials = 50
	}
	for _, kind := range []string{"jsonl", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			for trial := range trials {
				dir := t.TempDir()
				ws := filepath.Join(dir, "ws")
				if err := os.Mkdir(ws, 0o755); err != nil {
					t.Fatal(err)
				}
				marker := fmt.Sprintf("durable-output-%d", trial)
				url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
					{ToolCalls: []standin.ToolCall{{ID: "call_d", Name: "bash", Arguments: `{"command":"echo ` + marker + `"}`}}},
					// The turn would go on; reel is dead before it asks.
					{Text: "never served", Hang: true},
				}})
				state := filepath.Join(dir, "state")
				p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-durable-test"),
					"acp", "--state-dir", state, "--store", kind, "--mode", "danger-full-access",
					"--session-id", "DUR", "--provider", "deepseek", "--base-url", url, "--model", "standin")
				p.initialize()
				sid := p.newSession(ws)
				p.request("session/prompt", promptParams(sid, "run it"))
				shown := ""
				for shown == "" {
					f := p.next()
					if r := toolResults([]frame{f}); r["call_d"] != "" {
						shown = r["call_d"]
					}
				}
				p.kill()
				if !strings.Contains(shown, marker) {
					t.Fatalf("trial %d: the client was shown %q", trial, shown)
				}

				store, err := acpcmd.OpenStore(state, kind, false, slog.New(slog.NewTextHandler(io.Discard, nil)))
				if err != nil {
					t.Fatal(err)
				}
				loaded, err := store.Inspect(context.Background(), sid)
				if err != nil {
					t.Fatalf("trial %d: loading the killed session: %v", trial, err)
				}
				if !hasResult(loaded.Log.Events(), "call_d", marker) {
					t.Errorf("trial %d: the client saw the result of call_d (%q) but the log lost it", trial, shown)
				}
				if c, ok := store.(io.Closer); ok {
					_ = c.Close()
				}
			}
		})
	}
}

// hasResult reports whether events hold a stored (not repair-made)
// tool/result for callID whose text contains want.
func hasResult(events []sessionlog.Event, callID, want string) bool {
	for _, e := range events {
		if e.Type != sessionlog.TypeToolResult {
			continue
		}
		var d struct {
			Message struct {
				Source struct {
					CallID string `json:"callId"`
				} `json:"source"`
			} `json:"message"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Message.Source.CallID == callID && strings.Contains(string(e.Data), want) {
			return true
		}
	}
	return false
}
