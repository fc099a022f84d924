package acpserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm/openai"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// chatModel is a local chat-completions endpoint that answers odd calls
// with a read call of f.txt and even calls with a line of text; it reads
// each request body to the end.
func chatModel() *httptest.Server {
	var calls atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n := calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		if n%2 == 1 {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_%d\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"file_path\\\":\\\"f.txt\\\"}\"}}]},\"finish_reason\":null}]}\n\n", n)
			fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n")
		} else {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Read it, line %d.\"},\"finish_reason\":null}]}\n\n", n)
			fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
}

// BenchmarkStepAtTurn is prompt → turn end (a read call, then a line of
// text: two model calls through the OpenAI provider over loopback HTTP)
// in a session already holding N such turns: issue 31's step measurement.
func BenchmarkStepAtTurn(b *testing.B) {
	for _, turns := range []int{10, 5000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			model := chatModel()
			defer model.Close()
			prov, err := openai.New(openai.Config{Name: "bench", BaseURL: model.URL, Model: "m", MaxAttempts: 1})
			if err != nil {
				b.Fatal(err)
			}
			dir := b.TempDir()
			store, err := jsonl.Open(dir, jsonl.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			srv, err := newServer(agent.Config{Store: store, Models: agent.SharedModels{Provider: prov}, Provider: "bench", Model: "m",
				ContextWindow: 1 << 30, Mode: sandbox.DangerFullAccess, SpillDir: dir})
			if err != nil {
				b.Fatal(err)
			}
			conn, _, sid := benchSession(b, srv, dir)
			ctx := context.Background()
			prompt := func() {
				res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock("read f.txt")}})
				if err != nil {
					b.Fatal(err)
				}
				if res.StopReason != acp.StopReasonEndTurn {
					b.Fatalf("stop reason %s", res.StopReason)
				}
			}
			for range turns {
				prompt()
			}
			// CPU time of the whole process (agent, client and model) per
			// turn: on a shared machine the wall clock mostly measures the
			// others.
			b.ResetTimer()
			before := processCPU(b)
			for b.Loop() {
				prompt()
			}
			b.ReportMetric(float64((processCPU(b)-before).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
