package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/llmtest"
	"github.com/reel-agent/reel/agent/llm/openai"
)

// sseHead is the envelope of every scripted chat.completion.chunk.
const sseHead = `{"id":"c1","object":"chat.completion.chunk","created":0,"model":"m","choices":`

// sseDeltas are the content events of the scripted response, in DeepSeek's
// form: reasoning_content, then content, then one tool call.
var sseDeltas = []string{
	sseHead + `[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
	sseHead + `[{"index":0,"delta":{"content":null,"reasoning_content":"The user wants "},"finish_reason":null}]}`,
	sseHead + `[{"index":0,"delta":{"content":null,"reasoning_content":"a listing."},"finish_reason":null}]}`,
	sseHead + `[{"index":0,"delta":{"content":"Listing "},"finish_reason":null}]}`,
	sseHead + `[{"index":0,"delta":{"content":"files."},"finish_reason":null}]}`,
	sseHead + `[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":""}}]},"finish_reason":null}]}`,
	sseHead + `[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":null}]}`,
}

// sseEnd finishes the scripted response: finish reason, usage, [DONE].
var sseEnd = []string{
	sseHead + `[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	sseHead + `[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_cache_hit_tokens":4,"prompt_cache_miss_tokens":6,"completion_tokens_details":{"reasoning_tokens":2}}}`,
	`[DONE]`,
}

// scripted serves the scripted SSE body under /ok, the content events and
// then a held-open connection under /hang, and the content events and then
// an error event under /fail.
func scripted(w http.ResponseWriter, r *http.Request) {
	mode, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(events []string) {
		for _, e := range events {
			fmt.Fprintf(w, "data: %s\n\n", e)
		}
		w.(http.Flusher).Flush()
	}
	send(sseDeltas)
	switch mode {
	case "ok":
		send(sseEnd)
	case "hang":
		<-r.Context().Done()
	case "fail":
		send([]string{`{"error":{"message":"upstream overloaded","type":"server_error"}}`})
	}
}

// TestConformance runs the stream suite on the provider talking to a real
// local HTTP server with scripted SSE bodies.
func TestConformance(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(scripted))
	t.Cleanup(ts.Close)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	open := func(mode string) llmtest.Opener {
		p, err := openai.New(openai.Config{Name: "test", BaseURL: ts.URL + "/" + mode, Model: "m",
			APIKey: testKey, MaxAttempts: 1, HTTPClient: client})
		if err != nil {
			t.Fatal(err)
		}
		return func(t testing.TB, ctx context.Context) llm.Stream {
			s, err := p.Stream(ctx, userRequest("hi"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	llmtest.TestStream(t, llmtest.Streams{
		Open:   open("ok"),
		Hang:   open("hang"),
		Fail:   open("fail"),
		Settle: client.CloseIdleConnections,
	})
}
