package llm

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestParseMessage(t *testing.T) {
	toolResult := `{"type":"tool-result","toolCallId":"call_1","content":[{"type":"text","text":"OK\n"}],"isError":true}`
	image := `{"type":"image","attachment":{"mediaType":"image/png"}}`
	tests := []struct {
		name string
		in   string
		want Message
	}{
		{"user text", `{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"x"}`,
			Message{Role: "user", Content: []Part{{Type: PartText, Text: "hi", Raw: json.RawMessage(`{"type":"text","text":"hi"}`)}}}},
		{"assistant parts", `{"role":"assistant","content":[{"type":"reasoning","text":"r"},{"type":"tool-call","id":"c","name":"bash","arguments":"{}"}]}`,
			Message{Role: "assistant", Content: []Part{
				{Type: PartReasoning, Text: "r", Raw: json.RawMessage(`{"type":"reasoning","text":"r"}`)},
				{Type: PartToolCall, ID: "c", Name: "bash", Arguments: "{}", Raw: json.RawMessage(`{"type":"tool-call","id":"c","name":"bash","arguments":"{}"}`)},
			}}},
		{"tool result", `{"source":{"kind":"tool"},"content":[` + toolResult + `],"role":"user"}`,
			Message{Role: "user", Content: []Part{{Type: PartToolResult, ToolCallID: "call_1", IsError: true, Raw: json.RawMessage(toolResult),
				Content: []Part{{Type: PartText, Text: "OK\n", Raw: json.RawMessage(`{"type":"text","text":"OK\n"}`)}}}}}},
		{"image kept raw", `{"role":"user","content":[` + image + `]}`,
			Message{Role: "user", Content: []Part{{Type: PartImage, Raw: json.RawMessage(image)}}}},
		{"no content", `{"role":"assistant"}`, Message{Role: "assistant", Content: []Part{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMessage(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseMessageErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not an object", `[]`, "llm: parse message"},
		{"no role", `{"content":[]}`, `missing member "role"`},
		{"part without type", `{"role":"user","content":[{"text":"x"}]}`, `part 0: missing member "type"`},
		{"nested part without type", `{"role":"user","content":[{"type":"tool-result","content":[{"text":"x"}]}]}`,
			`part 0 (tool-result): part 0: missing member "type"`},
		{"text not a string", `{"role":"user","content":[{"type":"text","text":1}]}`, "part 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseMessage(json.RawMessage(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestParseCorpusMessages parses every message the corpus records.
func TestParseCorpusMessages(t *testing.T) {
	n := 0
	for _, raw := range corpusMessages(t) {
		if _, err := ParseMessage(raw.msg); err != nil {
			t.Errorf("%s: %v", raw.where, err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no messages found in the corpus")
	}
}

func TestProviderError(t *testing.T) {
	tests := []struct {
		err       *ProviderError
		text      string
		retryable bool
	}{
		{&ProviderError{Status: 401, Code: CodeAuth, Message: "bad key"}, "llm: AUTH (HTTP 401): bad key", false},
		{&ProviderError{Status: 400, Code: CodeBadRequest, Message: "m"}, "llm: BAD_REQUEST (HTTP 400): m", false},
		{&ProviderError{Status: 429, Code: CodeRateLimit, Message: "m"}, "llm: RATE_LIMIT (HTTP 429): m", true},
		{&ProviderError{Status: 503, Code: CodeServer, Message: "m"}, "llm: SERVER (HTTP 503): m", true},
		{&ProviderError{Code: CodeTimeout, Message: "m"}, "llm: TIMEOUT: m", true},
		{&ProviderError{Code: CodeTransport, Message: "m"}, "llm: TRANSPORT: m", true},
		{&ProviderError{Code: CodeEmptyResponse, Message: "m"}, "llm: EMPTY_RESPONSE: m", true},
		{&ProviderError{Code: "SOMETHING", Message: "m"}, "llm: SOMETHING: m", false},
	}
	for _, tt := range tests {
		t.Run(tt.err.Code, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.text {
				t.Errorf("Error() = %q, want %q", got, tt.text)
			}
			if got := tt.err.Retryable(); got != tt.retryable {
				t.Errorf("Retryable() = %v, want %v", got, tt.retryable)
			}
		})
	}
	cause := errors.New("cause")
	if err := error(&ProviderError{Code: CodeTransport, Err: cause}); !errors.Is(err, cause) {
		t.Error("ProviderError does not unwrap to its cause")
	}
}

// sliceStream serves chunks, then ends with end.
type sliceStream struct {
	chunks []Chunk
	end    error
	closed int
}

func (s *sliceStream) Next() (Chunk, error) {
	if len(s.chunks) == 0 {
		return Chunk{}, s.end
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}

func (s *sliceStream) Close() error {
	s.closed++
	return nil
}

func TestCollect(t *testing.T) {
	a := Chunk{Type: ChunkBlockStart, BlockType: BlockText}
	b := Chunk{Type: ChunkFinish, Reason: &FinishReason{Kind: FinishStop}}
	boom := &ProviderError{Code: CodeTransport, Message: "cut"}
	tests := []struct {
		name    string
		end     error
		wantErr error
	}{
		{"clean end", io.EOF, nil},
		{"failure", boom, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &sliceStream{chunks: []Chunk{a, b}, end: tt.end}
			got, err := Collect(s)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, []Chunk{a, b}) {
				t.Fatalf("chunks = %+v", got)
			}
			if s.closed != 1 {
				t.Fatalf("closed %d times, want 1", s.closed)
			}
		})
	}
}
