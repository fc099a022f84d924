package acpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// FuzzACPInput feeds arbitrary bytes to the agent's connection as its stdin.
// The agent must never panic, must end when its input ends, and must write
// nothing but JSON-RPC frames (one JSON object per line) on its stdout.
func FuzzACPInput(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"fz","prompt":[{"type":"text","text":"hi"}]}}` + "\n",
		`{"jsonrpc":"2.0","id":2,"method":"session/set_mode","params":{"sessionId":"fz","modeId":"read-only"}}` + "\n",
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"fz"}}` + "\n",
		"{not json\n[1,2]\n\"x\"\n",
		`{"jsonrpc":"1.0","id":1,"method":"initialize"}` + "\n",
		`{"jsonrpc":"2.0","id":{"a":1},"method":"session/load","params":{"sessionId":"../etc","cwd":"/","mcpServers":[]}}` + "\n",
		// Queued prompts, steering and config options (queue.go,
		// steering.go, models.go).
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"fz","prompt":[{"type":"text","text":"a"}]}}` + "\n" +
			`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"fz","prompt":[{"type":"text","text":"b"}]}}` + "\n" +
			`{"jsonrpc":"2.0","id":5,"method":"_session/steering","params":{"sessionId":"fz","prompt":[{"type":"text","text":"c"}]}}` + "\n" +
			`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"fz"}}` + "\n",
		`{"jsonrpc":"2.0","id":7,"method":"_reel/queued_prompt","params":{"requestId":"7","request":{}}}` + "\n",
		`{"jsonrpc":"2.0","id":8,"method":"session/set_config_option","params":{"sessionId":"fz","configId":"reasoning_effort","value":"high"}}` + "\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		dir := t.TempDir()
		store, err := jsonl.Open(dir, jsonl.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		srv, err := newServer(agent.Config{
			Store:          store,
			Models:         agent.SharedModels{Provider: replay.New(nil, 0, dir)},
			Provider:       "replay",
			Model:          "replay",
			Mode:           sandbox.DangerFullAccess,
			SpillDir:       dir,
			FirstSessionID: "fz",
		})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Serve(ctx, bytes.NewReader(in), &out); err != nil {
			t.Fatalf("serve: %v", err)
		}
		if ctx.Err() != nil {
			t.Fatalf("the agent did not finish after its input ended")
		}
		r := bufio.NewReader(&out)
		for {
			line, err := r.ReadBytes('\n')
			if err == io.EOF {
				if len(line) != 0 {
					t.Fatalf("unterminated output: %q", line)
				}
				return
			}
			var frame map[string]json.RawMessage
			if err := json.Unmarshal(line, &frame); err != nil || string(frame["jsonrpc"]) != `"2.0"` {
				t.Fatalf("stdout line is not a JSON-RPC frame: %q", line)
			}
		}
	})
}
