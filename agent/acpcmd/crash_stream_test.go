package acpcmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/sessionlog"
)

// TestStreamedAnswerCrashRepair: a long answer is made durable as it
// streams (every MiB, so that the log can read it back from the file
// instead of holding it). reel killed with SIGKILL in the middle of an
// endless answer leaves a log that the next reel repairs on session/load:
// what streamed up to the last checkpoint is in it, the turn is closed as
// interrupted, the log verifies, and a next prompt's request, rebuilt from
// the log under --debug-invariant, goes out and ends its turn.
func TestStreamedAnswerCrashRepair(t *testing.T) {
	t.Parallel()
	srv := &sseServer{endless: true, onlyFirst: true}
	url := serveSSE(t, srv)
	dir, ws, state := workspace(t)
	args := []string{"acp", "--base-url", url, "--model", "m", "--state-dir", state,
		"--no-title-model", "--mode", "read-only", "--debug-invariant", "--max-response-bytes", "1000000000"}
	p := startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	sid := p.newSession(ws)
	p.request("session/prompt", promptParams(sid, "Tell me a long story."))
	path := filepath.Join(state, sid+".jsonl")
	const durable = 4 << 20
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if st, err := os.Stat(path); err == nil && st.Size() >= durable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log of a streaming answer did not reach %d bytes: the stream is not made durable as it goes", durable)
		}
	}
	p.kill()

	q := startProc(t, dir, baseEnv(t), args...)
	q.initialize()
	q.call("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
	events := logEvents(t, state, sid)
	streamed := 0
	for i := range events {
		if events[i].Type == sessionlog.TypeAssistantChunk {
			d, err := sessionlog.DecodeData[sessionlog.ChunkData](&events[i])
			if err != nil {
				t.Fatal(err)
			}
			streamed += strings.Count(string(d.Chunk), "All work and no play")
		}
	}
	if streamed*len(delta64) < durable/2 {
		t.Errorf("the repaired log holds %d bytes of the answer, want at least %d (what streamed before the kill)", streamed*len(delta64), durable/2)
	}
	last := events[len(events)-1]
	d, err := sessionlog.DecodeData[sessionlog.TurnEndData](&last)
	if last.Type != sessionlog.TypeTurnEnd || err != nil || d.Reason.Kind != sessionlog.EndInterrupted {
		t.Fatalf("the repaired log ends in %s %.200s, want turn/end interrupted", last.Type, last.Data)
	}
	if stop, _ := q.prompt(sid, "Go on."); stop != "end_turn" {
		t.Errorf("the prompt after the repair: stop reason %q, want end_turn", stop)
	}
	if code := q.finish(); code != 0 {
		t.Errorf("reel exited %d", code)
	}
	if out, err := exec.Command(reelExe, "log", "verify", path).CombinedOutput(); err != nil {
		t.Errorf("reel log verify: %v\n%s", err, out)
	}
}
