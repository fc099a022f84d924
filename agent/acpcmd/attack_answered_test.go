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

// TestAttackAnsweredTurnIsDurable: a turn whose last step makes no tool
// call leaves its results, its turn/end and the title call's request to
// one sync. The moment the client reads the prompt's answer, reel is
// killed with SIGKILL. Loading the log afterwards must find the answer's
// text, the turn's completed end and the title request, stored (not made
// by crash repair), in every trial and in both backends.
func TestAttackAnsweredTurnIsDurable(t *testing.T) {
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
				marker := fmt.Sprintf("durable-answer-%d", trial)
				url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
					{Text: marker},
					// The title call; reel is dead before it is answered.
					{Text: "never served", Hang: true},
				}})
				state := filepath.Join(dir, "state")
				p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-durable-test"),
					"acp", "--state-dir", state, "--store", kind,
					"--session-id", "ANS", "--provider", "deepseek", "--base-url", url, "--model", "standin")
				p.initialize()
				sid := p.newSession(ws)
				id := p.request("session/prompt", promptParams(sid, "answer it"))
				for {
					f := p.next()
					if f.isResponse() && sameID(f.ID, id) {
						if !strings.Contains(string(f.Result), "end_turn") {
							t.Fatalf("trial %d: the prompt answered %s", trial, f.raw)
						}
						break
					}
				}
				p.kill()

				store, err := acpcmd.OpenStore(state, kind, false, slog.New(slog.NewTextHandler(io.Discard, nil)))
				if err != nil {
					t.Fatal(err)
				}
				loaded, err := store.Inspect(context.Background(), sid)
				if err != nil {
					t.Fatalf("trial %d: loading the killed session: %v", trial, err)
				}
				var answer, ended, titleAsked bool
				for _, e := range loaded.Log.Events() {
					switch e.Type {
					case sessionlog.TypeAssistantMessage:
						answer = answer || strings.Contains(string(e.Data), marker)
					case sessionlog.TypeTurnEnd:
						var d sessionlog.TurnEndData
						ended = ended || (json.Unmarshal(e.Data, &d) == nil && d.Reason.Kind == sessionlog.EndCompleted)
					case sessionlog.TypeTitleLLMRequest:
						titleAsked = true
					}
				}
				if !answer || !ended || !titleAsked {
					t.Errorf("trial %d: the client was answered, but the log holds the answer %v, the completed turn end %v, the title request %v", trial, answer, ended, titleAsked)
				}
				if c, ok := store.(io.Closer); ok {
					_ = c.Close()
				}
			}
		})
	}
}
