package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/openai"
	"github.com/reel-agent/reel/agent/llm/standin"
)

// testKey is the API key the tests use; it must never show up in an error
// or a log line.
const testKey = "sk-reel-test-SECRET-0123456789"

// fixture is a stand-in server behind a recording front, and a provider
// pointed at it.
type fixture struct {
	srv  *standin.Server
	prov *openai.Provider
	logs *syncBuffer

	mu   sync.Mutex
	auth []string // Authorization headers received
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newFixture(t *testing.T, script standin.Script, tweak func(*openai.Config)) *fixture {
	t.Helper()
	if err := script.Validate(); err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: standin.New(&script, nil), logs: &syncBuffer{}}
	h := f.srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	cfg := openai.Config{
		Name: "test", BaseURL: ts.URL + "/v1", Model: "deepseek-chat", APIKey: testKey,
		BaseDelay: time.Millisecond, Logger: slog.New(slog.NewTextHandler(f.logs, nil)),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	p, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.prov = p
	t.Cleanup(func() { f.assertNoKey(t) })
	return f
}

// assertNoKey fails the test if the key appears in the logs.
func (f *fixture) assertNoKey(t *testing.T) {
	t.Helper()
	if strings.Contains(f.logs.String(), testKey) {
		t.Errorf("API key leaked into the log:\n%s", f.logs.String())
	}
}

func userRequest(text string) llm.Request {
	msg, _ := json.Marshal(map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}})
	return llm.Request{Provider: "test", Model: "deepseek-chat", Messages: []json.RawMessage{msg}}
}

// encodeAll renders chunks as their JSON lines.
func encodeAll(t *testing.T, chunks []llm.Chunk) []string {
	t.Helper()
	out := make([]string, len(chunks))
	for i, c := range chunks {
		b, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

func diffLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("chunks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestStreamMapping(t *testing.T) {
	tests := []struct {
		name     string
		resp     standin.Response
		want     []string
		wantCode string // a ProviderError code ending the stream, "" for io.EOF
	}{
		{
			name: "text only",
			resp: standin.Response{Text: "Hello, world", ChunkSize: 5, Usage: &standin.Usage{PromptTokens: 12, CompletionTokens: 3}},
			want: []string{
				`{"type":"block-start","index":0,"blockType":"text"}`,
				`{"type":"text-delta","index":0,"text":"Hello"}`,
				`{"type":"text-delta","index":0,"text":", wor"}`,
				`{"type":"text-delta","index":0,"text":"ld"}`,
				`{"type":"block-end","index":0,"block":{"type":"text","text":"Hello, world"}}`,
				`{"type":"usage","usage":{"inputTokens":12,"outputTokens":3,"cacheReadTokens":0,"reasoningTokens":0}}`,
				`{"type":"finish","reason":{"kind":"stop"}}`,
			},
		},
		{
			name: "reasoning then text, usage with cache hits",
			resp: standin.Response{Reasoning: "Think <ok>", Text: "PONG", ChunkSize: 6,
				Usage: &standin.Usage{PromptTokens: 2986, CompletionTokens: 28, CacheHitTokens: 2816, ReasoningTokens: 25}},
			want: []string{
				`{"type":"block-start","index":0,"blockType":"reasoning"}`,
				`{"type":"reasoning-delta","index":0,"text":"Think "}`,
				`{"type":"reasoning-delta","index":0,"text":"<ok>"}`,
				`{"type":"block-start","index":1,"blockType":"text"}`,
				`{"type":"text-delta","index":1,"text":"PONG"}`,
				`{"type":"block-end","index":0,"block":{"type":"reasoning","text":"Think <ok>"}}`,
				`{"type":"block-end","index":1,"block":{"type":"text","text":"PONG"}}`,
				`{"type":"usage","usage":{"inputTokens":170,"outputTokens":28,"cacheReadTokens":2816,"reasoningTokens":25}}`,
				`{"type":"finish","reason":{"kind":"stop"}}`,
			},
		},
		{
			name: "one tool call",
			resp: standin.Response{Reasoning: "run it", ChunkSize: 10,
				ToolCalls: []standin.ToolCall{{ID: "call_1", Name: "bash", Arguments: `{"command":"echo HI"}`}}},
			want: []string{
				`{"type":"block-start","index":0,"blockType":"reasoning"}`,
				`{"type":"reasoning-delta","index":0,"text":"run it"}`,
				`{"type":"block-start","index":1,"blockType":"tool-call"}`,
				`{"type":"tool-call-delta","index":1,"id":"call_1","name":"bash","argumentsDelta":""}`,
				`{"type":"tool-call-delta","index":1,"id":"call_1","name":"bash","argumentsDelta":"{\"command\""}`,
				`{"type":"tool-call-delta","index":1,"id":"call_1","name":"bash","argumentsDelta":":\"echo HI\""}`,
				`{"type":"tool-call-delta","index":1,"id":"call_1","name":"bash","argumentsDelta":"}"}`,
				`{"type":"block-end","index":0,"block":{"type":"reasoning","text":"run it"}}`,
				`{"type":"block-end","index":1,"block":{"type":"tool-call","id":"call_1","name":"bash","arguments":"{\"command\":\"echo HI\"}"}}`,
				`{"type":"usage","usage":{"inputTokens":0,"outputTokens":0,"cacheReadTokens":0,"reasoningTokens":0}}`,
				`{"type":"finish","reason":{"kind":"tool-calls"}}`,
			},
		},
		{
			name: "two parallel tool calls",
			resp: standin.Response{Text: "Both:", ChunkSize: 64, ToolCalls: []standin.ToolCall{
				{ID: "call_a", Name: "read", Arguments: `{"file_path":"a.txt"}`},
				{ID: "call_b", Name: "glob", Arguments: `{"pattern":"*.go"}`},
			}},
			want: []string{
				`{"type":"block-start","index":0,"blockType":"text"}`,
				`{"type":"text-delta","index":0,"text":"Both:"}`,
				`{"type":"block-start","index":1,"blockType":"tool-call"}`,
				`{"type":"tool-call-delta","index":1,"id":"call_a","name":"read","argumentsDelta":""}`,
				`{"type":"tool-call-delta","index":1,"id":"call_a","name":"read","argumentsDelta":"{\"file_path\":\"a.txt\"}"}`,
				`{"type":"block-start","index":2,"blockType":"tool-call"}`,
				`{"type":"tool-call-delta","index":2,"id":"call_b","name":"glob","argumentsDelta":""}`,
				`{"type":"tool-call-delta","index":2,"id":"call_b","name":"glob","argumentsDelta":"{\"pattern\":\"*.go\"}"}`,
				`{"type":"block-end","index":0,"block":{"type":"text","text":"Both:"}}`,
				`{"type":"block-end","index":1,"block":{"type":"tool-call","id":"call_a","name":"read","arguments":"{\"file_path\":\"a.txt\"}"}}`,
				`{"type":"block-end","index":2,"block":{"type":"tool-call","id":"call_b","name":"glob","arguments":"{\"pattern\":\"*.go\"}"}}`,
				`{"type":"usage","usage":{"inputTokens":0,"outputTokens":0,"cacheReadTokens":0,"reasoningTokens":0}}`,
				`{"type":"finish","reason":{"kind":"tool-calls"}}`,
			},
		},
		{
			name: "length",
			resp: standin.Response{Text: "cut", Finish: "length"},
			want: []string{
				`{"type":"block-start","index":0,"blockType":"text"}`,
				`{"type":"text-delta","index":0,"text":"cut"}`,
				`{"type":"block-end","index":0,"block":{"type":"text","text":"cut"}}`,
				`{"type":"usage","usage":{"inputTokens":0,"outputTokens":0,"cacheReadTokens":0,"reasoningTokens":0}}`,
				`{"type":"finish","reason":{"kind":"max-tokens"}}`,
			},
		},
		{
			name: "content filter",
			resp: standin.Response{Text: "no", Finish: "content_filter"},
			want: []string{
				`{"type":"block-start","index":0,"blockType":"text"}`,
				`{"type":"text-delta","index":0,"text":"no"}`,
				`{"type":"block-end","index":0,"block":{"type":"text","text":"no"}}`,
				`{"type":"usage","usage":{"inputTokens":0,"outputTokens":0,"cacheReadTokens":0,"reasoningTokens":0}}`,
				`{"type":"finish","reason":{"kind":"error","failure":{"message":"model stopped: content_filter","code":"CONTENT_FILTER"}}}`,
			},
		},
		{
			name: "empty response",
			resp: standin.Response{Usage: &standin.Usage{PromptTokens: 5}},
			want: []string{
				`{"type":"usage","usage":{"inputTokens":5,"outputTokens":0,"cacheReadTokens":0,"reasoningTokens":0}}`,
			},
			wantCode: llm.CodeEmptyResponse,
		},
		{
			name: "error event mid-stream",
			resp: standin.Response{Text: "partial", StreamError: "upstream overloaded"},
			want: []string{
				`{"type":"block-start","index":0,"blockType":"text"}`,
				`{"type":"text-delta","index":0,"text":"partial"}`,
			},
			wantCode: llm.CodeServer,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, standin.Script{Responses: []standin.Response{tt.resp}}, nil)
			s, err := f.prov.Stream(context.Background(), userRequest("hi"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var chunks []llm.Chunk
			for err == nil {
				var c llm.Chunk
				if c, err = s.Next(); err == nil {
					chunks = append(chunks, c)
				}
			}
			if errors.Is(err, io.EOF) {
				err = nil
			}
			diffLines(t, encodeAll(t, chunks), tt.want)
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("stream ended with %v, want io.EOF", err)
				}
				return
			}
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || pe.Code != tt.wantCode {
				t.Fatalf("stream ended with %v, want a %s ProviderError", err, tt.wantCode)
			}
			if !pe.Retryable() {
				t.Fatalf("%s is not retryable", pe.Code)
			}
			// The error is sticky, until Close.
			if _, again := s.Next(); again != err {
				t.Fatalf("Next after the error = %v, want the same error", again)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, again := s.Next(); !errors.Is(again, llm.ErrClosed) {
				t.Fatalf("Next after the error and Close = %v, want llm.ErrClosed", again)
			}
		})
	}
}

func TestStreamErrors(t *testing.T) {
	errReply := func(status int, msg string) standin.Response {
		return standin.Response{Error: &standin.ErrorReply{Status: status, Message: msg}}
	}
	ok := standin.Response{Text: "ok"}
	tests := []struct {
		name      string
		responses []standin.Response
		wantCode  string // "" for success
		wantMsg   string
		requests  int // requests the server must have received
		retries   int // retry log lines
	}{
		{"401 is AUTH, not retried", []standin.Response{errReply(401, "Incorrect API key provided: "+testKey), ok},
			llm.CodeAuth, "Incorrect API key provided: [redacted]", 1, 0},
		{"403 is AUTH", []standin.Response{errReply(403, "forbidden"), ok}, llm.CodeAuth, "forbidden", 1, 0},
		{"400 is BAD_REQUEST, not retried", []standin.Response{errReply(400, "bad tools"), ok}, llm.CodeBadRequest, "bad tools", 1, 0},
		{"500 then success: one retry", []standin.Response{errReply(500, "boom for "+testKey), ok}, "", "", 2, 1},
		{"429 then success: one retry", []standin.Response{errReply(429, "slow down"), ok}, "", "", 2, 1},
		{"503 three times: gives up after 3 attempts", []standin.Response{errReply(503, "a"), errReply(502, "b"), errReply(500, "c"), ok},
			llm.CodeServer, "c", 3, 2},
		{"408 is TIMEOUT", []standin.Response{errReply(408, "t"), errReply(408, "t"), errReply(408, "t")}, llm.CodeTimeout, "t", 3, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, standin.Script{Responses: tt.responses}, nil)
			s, err := f.prov.Stream(context.Background(), userRequest("hi"))
			if tt.wantCode == "" {
				if err != nil {
					t.Fatal(err)
				}
				chunks, err := llm.Collect(s)
				if err != nil || len(chunks) == 0 {
					t.Fatalf("after retry: %d chunks, %v", len(chunks), err)
				}
			} else {
				var pe *llm.ProviderError
				if !errors.As(err, &pe) || pe.Code != tt.wantCode || pe.Message != tt.wantMsg {
					t.Fatalf("err = %#v, want code %s message %q", err, tt.wantCode, tt.wantMsg)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Fatalf("API key in error: %v", err)
				}
			}
			if n := len(f.srv.Requests()); n != tt.requests {
				t.Errorf("server received %d requests, want %d", n, tt.requests)
			}
			logs := f.logs.String()
			if n := strings.Count(logs, "model call failed; retrying"); n != tt.retries {
				t.Errorf("%d retry log lines, want %d:\n%s", n, tt.retries, logs)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, a := range f.auth {
				if a != "Bearer "+testKey {
					t.Errorf("Authorization header %q, want the key as bearer token", a)
				}
			}
		})
	}
}

func TestRetryLogLine(t *testing.T) {
	f := newFixture(t, standin.Script{Responses: []standin.Response{
		{Error: &standin.ErrorReply{Status: 500, Message: "boom for " + testKey}}, {Text: "ok"},
	}}, nil)
	s, err := f.prov.Stream(context.Background(), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Collect(s); err != nil {
		t.Fatal(err)
	}
	logs := f.logs.String()
	for _, want := range []string{"level=WARN", "provider=test", "model=deepseek-chat", "attempt=1", "maxAttempts=3",
		"delay=1ms", "code=SERVER", "status=500", `error="boom for [redacted]"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("retry log lacks %s:\n%s", want, logs)
		}
	}
}

func TestTransportErrorRetried(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close() // nothing listens there any more
	var logs syncBuffer
	p, err := openai.New(openai.Config{Name: "t", BaseURL: url, Model: "m", APIKey: testKey,
		BaseDelay: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), userRequest("hi"))
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Code != llm.CodeTransport || !pe.Retryable() {
		t.Fatalf("err = %v, want a retryable TRANSPORT error", err)
	}
	if n := strings.Count(logs.String(), "retrying"); n != 2 {
		t.Fatalf("%d retries logged, want 2:\n%s", n, logs.String())
	}
	if strings.Contains(err.Error()+logs.String(), testKey) {
		t.Fatal("API key leaked")
	}
}

func TestCancel(t *testing.T) {
	hang := standin.Script{Responses: []standin.Response{{Text: "abc", ChunkSize: 1, Hang: true}}}
	firstChunks := []string{
		`{"type":"block-start","index":0,"blockType":"text"}`,
		`{"type":"text-delta","index":0,"text":"a"}`,
		`{"type":"text-delta","index":0,"text":"b"}`,
		`{"type":"text-delta","index":0,"text":"c"}`,
	}
	readFirst := func(t *testing.T, s llm.Stream) {
		t.Helper()
		var got []llm.Chunk
		for range firstChunks {
			c, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, c)
		}
		diffLines(t, encodeAll(t, got), firstChunks)
	}

	t.Run("context cancelled mid-stream", func(t *testing.T) {
		f := newFixture(t, hang, nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := f.prov.Stream(ctx, userRequest("hi"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		readFirst(t, s)
		next := make(chan error, 1)
		go func() { _, err := s.Next(); next <- err }() // blocks: the server hangs
		cancel()
		if err := <-next; !errors.Is(err, context.Canceled) {
			t.Fatalf("Next after cancel = %v, want context.Canceled", err)
		}
	})

	t.Run("Close while Next is blocked", func(t *testing.T) {
		f := newFixture(t, hang, nil)
		s, err := f.prov.Stream(context.Background(), userRequest("hi"))
		if err != nil {
			t.Fatal(err)
		}
		readFirst(t, s)
		next := make(chan error, 1)
		go func() { _, err := s.Next(); next <- err }()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-next; !errors.Is(err, llm.ErrClosed) {
			t.Fatalf("Next after Close = %v, want llm.ErrClosed", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})

	t.Run("cancelled while waiting to retry", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		script := standin.Script{Responses: []standin.Response{{Error: &standin.ErrorReply{Status: 500, Message: "x"}}, {Text: "ok"}}}
		f := newFixture(t, script, func(c *openai.Config) {
			c.BaseDelay = time.Hour // only cancellation can end the wait
			c.Logger = slog.New(cancelOnLog{cancel})
		})
		_, err := f.prov.Stream(ctx, userRequest("hi"))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if n := len(f.srv.Requests()); n != 1 {
			t.Fatalf("%d requests, want 1", n)
		}
	})

	t.Run("cancelled before the call", func(t *testing.T) {
		f := newFixture(t, standin.Script{Responses: []standin.Response{{Text: "ok"}}}, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := f.prov.Stream(ctx, userRequest("hi")); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

// cancelOnLog is a slog handler that cancels a context when a record is
// logged: it lets a test act exactly when the provider starts to wait.
type cancelOnLog struct{ cancel context.CancelFunc }

func (h cancelOnLog) Enabled(context.Context, slog.Level) bool { return true }
func (h cancelOnLog) Handle(context.Context, slog.Record) error {
	h.cancel()
	return nil
}
func (h cancelOnLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h cancelOnLog) WithGroup(string) slog.Handler      { return h }

func TestNewConfig(t *testing.T) {
	env := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	tests := []struct {
		name    string
		cfg     openai.Config
		wantErr string
	}{
		{"deepseek key from env", withEnv(openai.DeepSeek(), env(map[string]string{"DEEPSEEK_API_KEY": testKey})), ""},
		{"deepseek key missing", withEnv(openai.DeepSeek(), env(nil)), "no API key: set DEEPSEEK_API_KEY"},
		{"openai key empty", withEnv(openai.OpenAI(), env(map[string]string{"OPENAI_API_KEY": ""})), "no API key: set OPENAI_API_KEY"},
		{"explicit key wins", withEnv(openai.Config{BaseURL: "http://x", APIKey: testKey, KeyEnv: "NOPE"}, env(nil)), ""},
		{"no key configured", openai.Config{BaseURL: "http://x"}, ""},
		{"no base URL", openai.Config{APIKey: testKey}, "no base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openai.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	if d := openai.DeepSeek(); d.BaseURL != "https://api.deepseek.com" || d.Model != "deepseek-chat" || d.KeyEnv != "DEEPSEEK_API_KEY" {
		t.Errorf("DeepSeek defaults = %+v", d)
	}
	if o := openai.OpenAI(); o.BaseURL != "https://api.openai.com/v1" || o.KeyEnv != "OPENAI_API_KEY" {
		t.Errorf("OpenAI defaults = %+v", o)
	}
}

func withEnv(c openai.Config, lookup func(string) (string, bool)) openai.Config {
	c.LookupEnv = lookup
	return c
}

func TestNoKeySendsNoAuthorization(t *testing.T) {
	f := newFixture(t, standin.Script{Responses: []standin.Response{{Text: "ok"}}}, func(c *openai.Config) { c.APIKey = "" })
	s, err := f.prov.Stream(context.Background(), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Collect(s); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.auth) != 1 || f.auth[0] != "" {
		t.Fatalf("Authorization headers %q, want one empty", f.auth)
	}
}

// TestAmbientOpenAIEnvIgnored checks that the SDK's ambient OPENAI_*
// variables do not leak into a provider's configuration.
func TestAmbientOpenAIEnvIgnored(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/nowhere")
	t.Setenv("OPENAI_API_KEY", "sk-ambient")
	t.Setenv("OPENAI_ORG_ID", "org-ambient")
	f := newFixture(t, standin.Script{Responses: []standin.Response{{Text: "ok"}}}, nil)
	s, err := f.prov.Stream(context.Background(), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Collect(s); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.auth) != 1 || f.auth[0] != "Bearer "+testKey {
		t.Fatalf("Authorization headers %q, want the configured key", f.auth)
	}
}

// TestFillBlocks checks llm.BlockFiller: a consumer that fills the blocks
// with the concatenation of the deltas it received gets the same chunks as
// one that lets the stream accumulate them, and a block-end's text or
// arguments are what fill returns.
func TestFillBlocks(t *testing.T) {
	tests := []struct {
		name string
		resp standin.Response
	}{
		{"text", standin.Response{Text: "Hello, \"world\" é\n", ChunkSize: 5}},
		{"reasoning then text", standin.Response{Reasoning: "Think <ok>", Text: "PONG", ChunkSize: 3}},
		{"tool calls", standin.Response{Text: "Both:", ChunkSize: 4, ToolCalls: []standin.ToolCall{
			{ID: "call_1", Name: "bash", Arguments: `{"command":"echo HI"}`},
			{ID: "call_2", Name: "read", Arguments: `{"path":"a.txt"}`}}}},
	}
	collect := func(t *testing.T, resp standin.Response, fill func(seen map[int]string) func(int) string) []string {
		t.Helper()
		f := newFixture(t, standin.Script{Responses: []standin.Response{resp}}, nil)
		s, err := f.prov.Stream(context.Background(), userRequest("hi"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		seen := map[int]string{}
		if fill != nil {
			bf, ok := s.(llm.BlockFiller)
			if !ok {
				t.Fatal("the openai stream is not an llm.BlockFiller")
			}
			bf.FillBlocks(fill(seen))
		}
		var chunks []llm.Chunk
		for {
			c, err := s.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			seen[c.Index] += c.Text + c.ArgumentsDelta
			chunks = append(chunks, c)
		}
		return encodeAll(t, chunks)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := collect(t, tt.resp, nil)
			got := collect(t, tt.resp, func(seen map[int]string) func(int) string {
				return func(i int) string { return seen[i] }
			})
			diffLines(t, got, want)
			marked := collect(t, tt.resp, func(map[int]string) func(int) string {
				return func(i int) string { return fmt.Sprintf("filled %d", i) }
			})
			ends := 0
			for _, line := range marked {
				if strings.Contains(line, `"type":"block-end"`) {
					ends++
					if !strings.Contains(line, `"filled `) {
						t.Errorf("block-end not filled by fill: %s", line)
					}
				}
			}
			if ends == 0 {
				t.Fatal("no block-end")
			}
		})
	}
}
