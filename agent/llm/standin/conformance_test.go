package standin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/llmtest"
	"github.com/reel-agent/reel/agent/llm/openai"
	"github.com/reel-agent/reel/agent/llm/standin"
)

// TestConformance runs the stream suite on the stand-in server, listening
// on a real local port, through its client: the openai provider.
func TestConformance(t *testing.T) {
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	// open serves resp to every request (far more than the suite makes).
	open := func(resp standin.Response) llmtest.Opener {
		script := &standin.Script{Responses: slices.Repeat([]standin.Response{resp}, 1000)}
		if err := script.Validate(); err != nil {
			t.Fatal(err)
		}
		srv := standin.New(script, nil)
		addr, err := srv.Start(context.Background(), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := srv.Close(); err != nil {
				t.Error(err)
			}
		})
		p, err := openai.New(openai.Config{Name: "standin", BaseURL: "http://" + addr + "/v1", Model: "m",
			MaxAttempts: 1, HTTPClient: client})
		if err != nil {
			t.Fatal(err)
		}
		return func(t testing.TB, ctx context.Context) llm.Stream {
			msg := json.RawMessage(`{"role":"user","content":[{"type":"text","text":"list the files"}]}`)
			s, err := p.Stream(ctx, llm.Request{Model: "m", Messages: []json.RawMessage{msg}})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	content := standin.Response{
		Reasoning: "The user wants a listing.", Text: "Listing files.", ChunkSize: 5,
		ToolCalls: []standin.ToolCall{{ID: "call_1", Name: "bash", Arguments: `{"command":"ls"}`}},
		Usage:     &standin.Usage{PromptTokens: 10, CompletionTokens: 5, CacheHitTokens: 4, ReasoningTokens: 2},
	}
	hang, fail := content, content
	hang.Hang = true
	fail.StreamError = "upstream overloaded"
	llmtest.TestStream(t, llmtest.Streams{
		Open:   open(content),
		Hang:   open(hang),
		Fail:   open(fail),
		Settle: client.CloseIdleConnections,
	})
}
