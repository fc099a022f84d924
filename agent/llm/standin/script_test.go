package standin

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseScript(t *testing.T) {
	in := `{"responses":[
		{"reasoning":"r","text":"t","toolCalls":[{"id":"call_1","name":"bash","arguments":"{}"}],
		 "usage":{"promptTokens":10,"completionTokens":2,"cacheHitTokens":4,"reasoningTokens":1},
		 "finish":"tool_calls","chunkSize":3,"delayMs":0,"expect":{"lastUserContains":"hi","model":"m"}},
		{"error":{"status":401,"message":"bad key"}},
		{"text":"x","streamError":"overloaded"},
		{"text":"y","hang":true}]}`
	got, err := ParseScript([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &Script{Responses: []Response{
		{Reasoning: "r", Text: "t", ToolCalls: []ToolCall{{ID: "call_1", Name: "bash", Arguments: "{}"}},
			Usage:  &Usage{PromptTokens: 10, CompletionTokens: 2, CacheHitTokens: 4, ReasoningTokens: 1},
			Finish: "tool_calls", ChunkSize: 3, Expect: &Expect{LastUserContains: "hi", Model: "m"}},
		{Error: &ErrorReply{Status: 401, Message: "bad key"}},
		{Text: "x", StreamError: "overloaded"},
		{Text: "y", Hang: true},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"unknown top-level member", `{"responses":[{"text":"a"}],"extra":1}`, `unknown field "extra"`},
		{"unknown response member", `{"responses":[{"txt":"a"}]}`, `unknown field "txt"`},
		{"unknown tool-call member", `{"responses":[{"toolCalls":[{"id":"a","name":"b","args":"{}"}]}]}`, `unknown field "args"`},
		{"unknown usage member", `{"responses":[{"usage":{"inputTokens":1}}]}`, `unknown field "inputTokens"`},
		{"unknown expect member", `{"responses":[{"expect":{"lastUser":"x"}}]}`, `unknown field "lastUser"`},
		{"trailing data", `{"responses":[{"text":"a"}]} {}`, "trailing data"},
		{"not JSON", `responses: []`, "parse"},
		{"no responses", `{"responses":[]}`, "no responses"},
		{"bad finish", `{"responses":[{"text":"a"},{"finish":"done"}]}`, `response 2: finish "done"`},
		{"negative chunk size", `{"responses":[{"chunkSize":-1}]}`, "response 1: chunkSize -1"},
		{"negative delay", `{"responses":[{"delayMs":-5}]}`, "delayMs -5"},
		{"error status not an error", `{"responses":[{"error":{"status":200,"message":"m"}}]}`, "error status 200"},
		{"error with content", `{"responses":[{"text":"a","error":{"status":500,"message":"m"}}]}`, "carries no stream"},
		{"tool call without id", `{"responses":[{"toolCalls":[{"name":"bash","arguments":"{}"}]}]}`, "toolCalls[0]: id and name"},
		{"cache hits above prompt", `{"responses":[{"usage":{"promptTokens":1,"cacheHitTokens":2}}]}`, "cacheHitTokens <= promptTokens"},
		{"hang and stream error", `{"responses":[{"hang":true,"streamError":"x"}]}`, "exclude each other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"responses":[{"text":"hi"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadScript(good)
	if err != nil || len(s.Responses) != 1 || s.Responses[0].Text != "hi" {
		t.Fatalf("LoadScript = %+v, %v", s, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"responses":[{"bogus":1}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadScript(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `"bogus"`) {
		t.Fatalf("err = %v, want the path and the field named", err)
	}
	if _, err := LoadScript(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("missing file: no error")
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		s    string
		size int
		want []string
	}{
		{"", 3, nil},
		{"abcdefg", 3, []string{"abc", "def", "g"}},
		{"héllo wörld", 4, []string{"héll", "o wö", "rld"}},
		{"😀😀😀", 2, []string{"😀😀", "😀"}},
	}
	for _, tt := range tests {
		if got := split(tt.s, tt.size); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("split(%q, %d) = %q, want %q", tt.s, tt.size, got, tt.want)
		}
	}
}
