package hooks_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/hooks"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// BenchmarkToolCall is the cost of one tool call (a bash `true`, in a
// one-step prompt answered from a replayed script) without hooks and with
// a no-op PreToolUse hook (`exit 0`): the hook's price per call, which is
// one more process start.
//
//	go test -run '^$' -bench BenchmarkToolCall -benchmem ./agent/hooks/
func BenchmarkToolCall(b *testing.B) {
	noop, _, err := hooks.Parse(hooks.ClaudeCode, []byte(`{"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"exit 0"}]}]}}`), hooks.Substitution{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		hooks []agent.Hook
	}{
		{"no-hooks", nil},
		{"noop-pretool-hook", []agent.Hook{hooks.New(noop, hooks.Options{})}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			store, err := jsonl.Open(filepath.Join(dir, "state"), jsonl.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			cwd := filepath.Join(dir, "work")
			if err := os.MkdirAll(cwd, 0o755); err != nil {
				b.Fatal(err)
			}
			var script []replay.Entry
			for range b.N {
				script = append(script, replay.ToolCallEntry("c1", "bash", `{"command":"true","description":"nothing"}`), replay.TextEntry("done"))
			}
			e, err := agent.New(agent.Config{
				Store: store, Models: agent.SharedModels{Provider: replay.New(script, 0, dir)},
				Provider: "replay", Model: "replay", Mode: sandbox.DangerFullAccess, Hooks: c.hooks,
				SpillDir: filepath.Join(dir, "spill"), Instructions: agent.InstructionConfig{Disabled: true},
			})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			s, err := e.NewSession(context.Background(), cwd)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if stop, err := s.Prompt(context.Background(), []agent.Content{{Text: "go"}}, agent.Client{}); err != nil || stop != agent.StopEndTurn {
					b.Fatalf("prompt: %v %v", stop, err)
				}
			}
		})
	}
}
