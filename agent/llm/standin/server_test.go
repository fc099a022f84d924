package standin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// start serves script on a real local port for the duration of the test.
func start(t *testing.T, script string) (*Server, string) {
	t.Helper()
	s, err := ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	srv := New(s, nil)
	addr, err := srv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv, "http://" + addr
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

const streamReq = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hello there"}]}`

func TestStreamBody(t *testing.T) {
	_, base := start(t, `{"responses":[{"reasoning":"ab","text":"hey","chunkSize":2,
		"toolCalls":[{"id":"c1","name":"bash","arguments":"{}"}],
		"usage":{"promptTokens":10,"completionTokens":3,"cacheHitTokens":4,"reasoningTokens":1}}]}`)
	status, body := post(t, base+"/v1/chat/completions", streamReq)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	head := `{"id":"standin-1","object":"chat.completion.chunk","created":0,"model":"m","choices":`
	want := strings.Join([]string{
		head + `[{"index":0,"delta":{"content":"","role":"assistant"},"finish_reason":null}]}`,
		head + `[{"index":0,"delta":{"content":null,"reasoning_content":"ab"},"finish_reason":null}]}`,
		head + `[{"index":0,"delta":{"content":"he"},"finish_reason":null}]}`,
		head + `[{"index":0,"delta":{"content":"y"},"finish_reason":null}]}`,
		head + `[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"","name":"bash"},"id":"c1","index":0,"type":"function"}]},"finish_reason":null}]}`,
		head + `[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"{}"},"index":0}]},"finish_reason":null}]}`,
		head + `[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		head + `[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13,"prompt_cache_hit_tokens":4,"prompt_cache_miss_tokens":6,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":1}}}`,
		`[DONE]`,
	}, "\n\ndata: ")
	want = "data: " + want + "\n\n"
	if body != want {
		t.Fatalf("body:\n%s\nwant:\n%s", body, want)
	}
}

func TestStreamWithoutUsageRequest(t *testing.T) {
	_, base := start(t, `{"responses":[{"text":"hi"}]}`)
	_, body := post(t, base+"/chat/completions", `{"model":"m","stream":true,"messages":[]}`)
	if strings.Contains(body, `"usage"`) {
		t.Fatalf("usage sent although not requested:\n%s", body)
	}
	if !strings.Contains(body, `"finish_reason":"stop"`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("body lacks finish or [DONE]:\n%s", body)
	}
}

func TestErrorReplies(t *testing.T) {
	_, base := start(t, `{"responses":[
		{"error":{"status":401,"message":"invalid key"}},
		{"text":"a","expect":{"lastUserContains":"goodbye"}},
		{"text":"b","expect":{"lastMessageContains":"RESULT","model":"m"}},
		{"text":"c","expect":{"model":"other"}},
		{"text":"d"}]}`)
	tests := []struct {
		name, path, method, body string
		status                   int
		msg                      string
	}{
		{"scripted error", "/v1/chat/completions", "POST", streamReq, 401, "invalid key"},
		{"expect last user", "/v1/chat/completions", "POST", streamReq, 400,
			`standin: request 2: expected the last user message to contain "goodbye"; it is "hello there"`},
		{"expect last message", "/v1/chat/completions", "POST",
			`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"RES"}]}]}`,
			400, `standin: request 3: expected the last message to contain "RESULT"; it is "RES"`},
		{"expect model", "/v1/chat/completions", "POST", streamReq, 400, `standin: request 4: expected model "other", got "m"`},
		{"not streaming", "/v1/chat/completions", "POST", `{"model":"m","messages":[]}`, 400, "standin: request 5: only streaming requests"},
		{"exhausted", "/chat/completions", "POST", streamReq, 500, "standin: request 6: script exhausted (it has 5 responses)"},
		{"bad body", "/chat/completions", "POST", `{`, 400, "standin: request 7: body is not a chat-completions request"},
		{"wrong method", "/v1/chat/completions", "GET", "", 405, "only POST"},
		{"wrong path", "/v1/completions", "POST", streamReq, 404, "no route for POST /v1/completions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status || body.Error.Message != tt.msg && !strings.Contains(body.Error.Message, tt.msg) {
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, body.Error.Message, tt.status, tt.msg)
			}
		})
	}
}

func TestStreamErrorAndHang(t *testing.T) {
	srv, base := start(t, `{"responses":[{"text":"abc","streamError":"overloaded"},{"text":"xyz","hang":true}]}`)
	_, body := post(t, base+"/v1/chat/completions", streamReq)
	if !strings.HasSuffix(body, `data: {"error":{"message":"overloaded","type":"standin_error"}}`+"\n\n") || strings.Contains(body, "[DONE]") {
		t.Fatalf("stream error body:\n%s", body)
	}

	// The hanging response sends its content, then holds the stream open
	// until the client goes away.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/chat/completions", strings.NewReader(streamReq))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var got []string
	for sc.Scan() && len(got) < 2 {
		if line := sc.Text(); line != "" {
			got = append(got, line)
		}
	}
	if len(got) != 2 || !strings.Contains(got[1], `"content":"xyz"`) {
		t.Fatalf("hanging stream started with %q", got)
	}
	cancel()
	if sc.Scan() {
		t.Fatalf("stream continued after cancel: %q", sc.Text())
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("recorded %d requests, want 2", n)
	}
}

func TestListenAndServe(t *testing.T) {
	s, err := ParseScript([]byte(`{"responses":[{"text":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	srv := New(s, slog.New(slog.NewTextHandler(&logs, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx, "127.0.0.1:0", func(a string) { addrs <- a }) }()
	addr := <-addrs
	status, body := post(t, "http://"+addr+"/v1/chat/completions", streamReq)
	if status != http.StatusOK || !strings.Contains(body, `"content":"hi"`) {
		t.Fatalf("got %d %s", status, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(streamReq)); err == nil {
		t.Fatal("server still answering after ListenAndServe returned")
	}
	if !strings.Contains(logs.String(), "standin request") || !strings.Contains(logs.String(), "status=200") {
		t.Fatalf("log lacks the request line: %s", logs.String())
	}
	if _, err := srv.Start(context.Background(), "127.0.0.1:0"); err == nil {
		t.Fatal("second Start succeeded")
	}
}

func TestStartBadAddress(t *testing.T) {
	srv := New(&Script{Responses: []Response{{Text: "x"}}}, nil)
	if _, err := srv.Start(context.Background(), "256.0.0.1:bad"); err == nil || !strings.Contains(err.Error(), "256.0.0.1:bad") {
		t.Fatalf("err = %v, want the address named", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("Close of an unstarted server: %v", err)
	}
}

func TestDelayedStream(t *testing.T) {
	_, base := start(t, `{"responses":[{"text":"abcd","chunkSize":2,"delayMs":1}]}`)
	status, body := post(t, base+"/v1/chat/completions", streamReq)
	if status != http.StatusOK || strings.Count(body, `"content":"ab"`)+strings.Count(body, `"content":"cd"`) != 2 ||
		!strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("delayed stream: %d\n%s", status, body)
	}
}
