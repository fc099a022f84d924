package openai_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/openai"
)

// sse renders events as a text/event-stream body.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		if strings.HasPrefix(e, ":") {
			b.WriteString(e + "\n\n") // a comment line, as DeepSeek's keep-alives
			continue
		}
		b.WriteString("data: " + e + "\n\n")
	}
	return b.String()
}

// rawServer answers every request with status and body.
func rawServer(t *testing.T, status int, contentType, body string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func rawProvider(t *testing.T, url string) *openai.Provider {
	t.Helper()
	p, err := openai.New(openai.Config{Name: "raw", BaseURL: url, Model: "deepseek-chat", APIKey: testKey, BaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const dsHead = `{"id":"c0ffee","object":"chat.completion.chunk","created":1760000000,"model":"deepseek-reasoner","system_fingerprint":"fp_x","choices":`

// TestDeepSeekWire pins the mapping of raw DeepSeek (and OpenAI) SSE as it
// arrives on the wire, independent of the stand-in.
func TestDeepSeekWire(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{
			name: "deepseek reasoning, content, tool call, cache hits",
			body: sse(
				": keep-alive",
				dsHead+`[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}],"usage":null}`,
				dsHead+`[{"index":0,"delta":{"content":null,"reasoning_content":"The user"},"logprobs":null,"finish_reason":null}],"usage":null}`,
				dsHead+`[{"index":0,"delta":{"content":null,"reasoning_content":" wants \u2028 <b>"},"logprobs":null,"finish_reason":null}],"usage":null}`,
				dsHead+`[{"index":0,"delta":{"content":"Run","reasoning_content":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
				dsHead+`[{"index":0,"delta":{"content":"ning.","reasoning_content":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
				dsHead+`[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_00_fkb","type":"function","function":{"name":"bash","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
				dsHead+`[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\""}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
				dsHead+`[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":": \"echo HI\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
				dsHead+`[{"index":0,"delta":{"content":"","reasoning_content":null},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":2986,"completion_tokens":89,"total_tokens":3075,"prompt_cache_hit_tokens":2816,"prompt_cache_miss_tokens":170,"completion_tokens_details":{"reasoning_tokens":17}}}`,
				`[DONE]`,
			),
			want: []string{
				`{"type":"block-start","index":0,"blockType":"reasoning"}`,
				`{"type":"reasoning-delta","index":0,"text":"The user"}`,
				`{"type":"reasoning-delta","index":0,"text":" wants ` + "\u2028" + ` <b>"}`,
				`{"type":"block-start","index":1,"blockType":"text"}`,
				`{"type":"text-delta","index":1,"text":"Run"}`,
				`{"type":"text-delta","index":1,"text":"ning."}`,
				`{"type":"block-start","index":2,"blockType":"tool-call"}`,
				`{"type":"tool-call-delta","index":2,"id":"call_00_fkb","name":"bash","argumentsDelta":""}`,
				`{"type":"tool-call-delta","index":2,"id":"call_00_fkb","name":"bash","argumentsDelta":"{\"command\""}`,
				`{"type":"tool-call-delta","index":2,"id":"call_00_fkb","name":"bash","argumentsDelta":": \"echo HI\"}"}`,
				`{"type":"block-end","index":0,"block":{"type":"reasoning","text":"The user wants ` + "\u2028" + ` <b>"}}`,
				`{"type":"block-end","index":1,"block":{"type":"text","text":"Running."}}`,
				`{"type":"block-end","index":2,"block":{"type":"tool-call","id":"call_00_fkb","name":"bash","arguments":"{\"command\": \"echo HI\"}"}}`,
				`{"type":"usage","usage":{"inputTokens":170,"outputTokens":89,"cacheReadTokens":2816,"reasoningTokens":17}}`,
				`{"type":"finish","reason":{"kind":"tool-calls"}}`,
			},
		},
		{
			name: "openai cached tokens, usage in a trailing chunk",
			body: sse(
				`{"id":"x","object":"chat.completion.chunk","created":1,"model":"gpt","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}]}`,
				`{"id":"x","object":"chat.completion.chunk","created":1,"model":"gpt","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`,
				`{"id":"x","object":"chat.completion.chunk","created":1,"model":"gpt","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				`{"id":"x","object":"chat.completion.chunk","created":1,"model":"gpt","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":5,"total_tokens":1205,"prompt_tokens_details":{"cached_tokens":1024},"completion_tokens_details":{"reasoning_tokens":0}}}`,
				`[DONE]`,
			),
			want: []string{
				`{"type":"block-start","index":0,"blockType":"text"}`,
				`{"type":"text-delta","index":0,"text":"Hi"}`,
				`{"type":"block-end","index":0,"block":{"type":"text","text":"Hi"}}`,
				`{"type":"usage","usage":{"inputTokens":176,"outputTokens":5,"cacheReadTokens":1024,"reasoningTokens":0}}`,
				`{"type":"finish","reason":{"kind":"stop"}}`,
			},
		},
		{
			name: "no usage reported, unknown finish reason",
			body: sse(
				`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`,
				`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"insufficient_system_resource"}]}`,
				`[DONE]`,
			),
			want: []string{
				`{"type":"block-start","index":0,"blockType":"text"}`,
				`{"type":"text-delta","index":0,"text":"x"}`,
				`{"type":"block-end","index":0,"block":{"type":"text","text":"x"}}`,
				`{"type":"finish","reason":{"kind":"error","failure":{"message":"model stopped: insufficient_system_resource","code":"INSUFFICIENT_SYSTEM_RESOURCE"}}}`,
			},
		},
		{
			name: "refusal becomes text",
			body: sse(
				`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"refusal":"I can't"},"finish_reason":null}]}`,
				`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				`[DONE]`,
			),
			want: []string{
				`{"type":"block-start","index":0,"blockType":"text"}`,
				`{"type":"text-delta","index":0,"text":"I can't"}`,
				`{"type":"block-end","index":0,"block":{"type":"text","text":"I can't"}}`,
				`{"type":"finish","reason":{"kind":"stop"}}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := rawServer(t, http.StatusOK, "text/event-stream", tt.body)
			s, err := rawProvider(t, url).Stream(context.Background(), userRequest("hi"))
			if err != nil {
				t.Fatal(err)
			}
			chunks, err := llm.Collect(s)
			if err != nil {
				t.Fatal(err)
			}
			diffLines(t, encodeAll(t, chunks), tt.want)
		})
	}
}

func TestWireFailures(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		openCode    string // failure when opening
		streamCode  string // failure while streaming
		wantMsg     string
	}{
		{"plain-text 502 from a proxy", 502, "text/html", "<html>Bad Gateway</html>", llm.CodeServer, "", "Bad Gateway"},
		{"JSON 401 without message", 401, "application/json", `{"error":{}}`, llm.CodeAuth, "", "{}"},
		{"stream cut before finish", 200, "text/event-stream",
			sse(`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`),
			"", llm.CodeTransport, "stream ended before the model finished"},
		{"error event as a string", 200, "text/event-stream", sse(`{"error":"rate limited upstream"}`),
			"", llm.CodeServer, "error event in stream: rate limited upstream"},
		{"broken JSON event", 200, "text/event-stream", sse(`{"id":`), "", llm.CodeTransport, "reading the stream: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := rawServer(t, tt.status, tt.contentType, tt.body)
			s, err := rawProvider(t, url).Stream(context.Background(), userRequest("hi"))
			if tt.openCode == "" {
				if err != nil {
					t.Fatal(err)
				}
				_, err = llm.Collect(s)
			}
			want := tt.openCode + tt.streamCode
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || pe.Code != want || !strings.Contains(pe.Message, tt.wantMsg) {
				t.Fatalf("err = %v, want %s containing %q", err, want, tt.wantMsg)
			}
			if tt.openCode != "" && pe.Status != tt.status {
				t.Fatalf("status %d, want %d", pe.Status, tt.status)
			}
		})
	}
}

// TestRetryAfterHint checks that a Retry-After header lengthens the backoff
// up to MaxDelay, reading the delay from the retry log line.
func TestRetryAfterHint(t *testing.T) {
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "30")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"message":"slow down"}}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(sse(
			`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`,
			`[DONE]`)))
	}))
	defer ts.Close()
	var logs syncBuffer
	p, err := openai.New(openai.Config{Name: "raw", BaseURL: ts.URL, Model: "m", APIKey: testKey,
		BaseDelay: time.Millisecond, MaxDelay: 7 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(context.Background(), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Collect(s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "delay=7ms") || !strings.Contains(logs.String(), "code=RATE_LIMIT") {
		t.Fatalf("want one RATE_LIMIT retry after the capped hint (7ms):\n%s", logs.String())
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d calls, want 2", n)
	}
}
