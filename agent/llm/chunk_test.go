package llm

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func i64(v int64) *int64 { return &v }

func TestChunkEncode(t *testing.T) {
	tests := []struct {
		name  string
		chunk Chunk
		want  string
	}{
		{"block-start index 0", Chunk{Type: ChunkBlockStart, BlockType: BlockReasoning},
			`{"type":"block-start","index":0,"blockType":"reasoning"}`},
		{"text delta", Chunk{Type: ChunkTextDelta, Index: 1, Text: "hi"},
			`{"type":"text-delta","index":1,"text":"hi"}`},
		{"empty text delta keeps text", Chunk{Type: ChunkReasoningDelta},
			`{"type":"reasoning-delta","index":0,"text":""}`},
		{"tool-call delta with name", Chunk{Type: ChunkToolCallDelta, Index: 2, ID: "call_1", Name: "bash", ArgumentsDelta: `{"a"`},
			`{"type":"tool-call-delta","index":2,"id":"call_1","name":"bash","argumentsDelta":"{\"a\""}`},
		{"tool-call delta without name", Chunk{Type: ChunkToolCallDelta, Index: 2, ID: "call_1", ArgumentsDelta: ""},
			`{"type":"tool-call-delta","index":2,"id":"call_1","argumentsDelta":""}`},
		{"block-end text", Chunk{Type: ChunkBlockEnd, Index: 1, Block: &Block{Type: BlockText, Text: "x"}},
			`{"type":"block-end","index":1,"block":{"type":"text","text":"x"}}`},
		{"block-end tool call", Chunk{Type: ChunkBlockEnd, Block: &Block{Type: BlockToolCall, ID: "c", Name: "n", Arguments: "{}"}},
			`{"type":"block-end","index":0,"block":{"type":"tool-call","id":"c","name":"n","arguments":"{}"}}`},
		{"block-end unknown block raw", Chunk{Type: ChunkBlockEnd, Index: 3, Block: &Block{Raw: json.RawMessage(`{"type":"image","x":1}`)}},
			`{"type":"block-end","index":3,"block":{"type":"image","x":1}}`},
		{"usage short", Chunk{Type: ChunkUsage, Usage: &Usage{InputTokens: 0, OutputTokens: 0}},
			`{"type":"usage","usage":{"inputTokens":0,"outputTokens":0}}`},
		{"usage full", Chunk{Type: ChunkUsage, Usage: &Usage{InputTokens: 170, OutputTokens: 28, CacheReadTokens: i64(2816), ReasoningTokens: i64(0)}},
			`{"type":"usage","usage":{"inputTokens":170,"outputTokens":28,"cacheReadTokens":2816,"reasoningTokens":0}}`},
		{"finish", Chunk{Type: ChunkFinish, Reason: &FinishReason{Kind: FinishToolCalls}},
			`{"type":"finish","reason":{"kind":"tool-calls"}}`},
		{"finish error", (&ProviderError{Code: CodeAuth, Message: "simulated provider error (HTTP 401)"}).FinishChunk(),
			`{"type":"finish","reason":{"kind":"error","failure":{"message":"simulated provider error (HTTP 401)","code":"AUTH"}}}`},
		{"raw variant verbatim", Chunk{Type: "future", Raw: json.RawMessage(`{"type":"future", "x" : [1]}`)},
			`{"type":"future", "x" : [1]}`},
		{"JSON.stringify escaping", Chunk{Type: ChunkTextDelta, Text: "<a&b>\u2028\u2029\"\\\b\f\n\r\t\x00\x1f\x7fé😀"},
			`{"type":"text-delta","index":0,"text":"<a&b>` + "\u2028\u2029" + `\"\\\b\f\n\r\t\u0000\u001f` + "\x7fé😀" + `"}`},
		{"invalid UTF-8 becomes U+FFFD", Chunk{Type: ChunkTextDelta, Text: "a\xffb"},
			`{"type":"text-delta","index":0,"text":"a` + "\ufffd" + `b"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.chunk.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON: %s", got)
			}
		})
	}
}

func TestChunkEncodeErrors(t *testing.T) {
	tests := []struct {
		name  string
		chunk Chunk
		want  string
	}{
		{"unknown type without raw", Chunk{Type: "nope"}, `unknown type "nope"`},
		{"block-end without block", Chunk{Type: ChunkBlockEnd, Index: 2}, "no block"},
		{"usage without usage", Chunk{Type: ChunkUsage}, "no usage"},
		{"finish without reason", Chunk{Type: ChunkFinish}, "no reason"},
		{"negative index", Chunk{Type: ChunkTextDelta, Index: -1}, "negative index"},
		{"unknown block type", Chunk{Type: ChunkBlockEnd, Block: &Block{Type: "image"}}, `unknown block type "image"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.chunk.MarshalJSON()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestChunkDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Chunk
	}{
		{"block-start", `{"type":"block-start","index":0,"blockType":"text"}`, Chunk{Type: ChunkBlockStart, BlockType: BlockText}},
		{"key order free", `{"index":4,"text":"t","type":"text-delta"}`, Chunk{Type: ChunkTextDelta, Index: 4, Text: "t"}},
		{"tool-call delta", `{"type":"tool-call-delta","index":1,"id":"c","argumentsDelta":"{"}`, Chunk{Type: ChunkToolCallDelta, Index: 1, ID: "c", ArgumentsDelta: "{"}},
		{"usage optional", `{"type":"usage","usage":{"inputTokens":1,"outputTokens":2,"reasoningTokens":3}}`,
			Chunk{Type: ChunkUsage, Usage: &Usage{InputTokens: 1, OutputTokens: 2, ReasoningTokens: i64(3)}}},
		{"finish failure", `{"type":"finish","reason":{"kind":"error","failure":{"message":"m","code":"AUTH"}}}`,
			Chunk{Type: ChunkFinish, Reason: &FinishReason{Kind: FinishError, Failure: &Failure{Message: "m", Code: CodeAuth}}}},
		{"unknown type kept raw", ` {"type":"x-new","payload":{"a":[1,2]}} `, Chunk{Type: "x-new", Raw: json.RawMessage(`{"type":"x-new","payload":{"a":[1,2]}}`)}},
		{"unknown block kept raw", `{"type":"block-end","index":0,"block":{"type":"image","data":"AA=="}}`,
			Chunk{Type: ChunkBlockEnd, Block: &Block{Type: "image", Raw: json.RawMessage(`{"type":"image","data":"AA=="}`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Chunk
			if err := got.UnmarshalJSON([]byte(tt.in)); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestChunkDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not an object", `[1]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"no type", `{"index":0}`, `missing member "type"`},
		{"type not a string", `{"type":3}`, `member "type": want a string`},
		{"unknown member", `{"type":"text-delta","index":0,"text":"","extra":1}`, `text-delta chunk: unknown member "extra"`},
		{"missing index", `{"type":"block-start","blockType":"text"}`, `missing member "index"`},
		{"fractional index", `{"type":"text-delta","index":1.5,"text":""}`, `member "index": want an integer`},
		{"negative index", `{"type":"text-delta","index":-1,"text":""}`, `member "index": out of range`},
		{"missing text", `{"type":"reasoning-delta","index":0}`, `missing member "text"`},
		{"text null", `{"type":"text-delta","index":0,"text":null}`, `member "text": want a string`},
		{"missing block", `{"type":"block-end","index":0}`, `missing member "block"`},
		{"tool-call block without name", `{"type":"block-end","index":0,"block":{"type":"tool-call","id":"c","arguments":""}}`, `tool-call block: missing member "name"`},
		{"usage extra", `{"type":"usage","usage":{"inputTokens":1,"outputTokens":2,"cacheWriteTokens":3}}`, `usage: unknown member "cacheWriteTokens"`},
		{"usage string count", `{"type":"usage","usage":{"inputTokens":"1","outputTokens":2}}`, `member "inputTokens": want an integer`},
		{"finish without kind", `{"type":"finish","reason":{}}`, `missing member "kind"`},
		{"failure extra", `{"type":"finish","reason":{"kind":"error","failure":{"message":"m","code":"c","status":1}}}`, `failure: unknown member "status"`},
		{"broken JSON", `{"type":"text-delta",`, "unexpected end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Chunk
			err := json.Unmarshal([]byte(tt.in), &c)
			if tt.name == "broken JSON" || tt.name == "null" {
				err = c.UnmarshalJSON([]byte(tt.in)) // json.Unmarshal rejects or skips these before calling us
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestChunkEncoderFriendly checks that a chunk embedded in a larger value
// keeps its exact bytes when encoded by a json.Encoder with HTML escaping off.
func TestChunkEncoderFriendly(t *testing.T) {
	c := Chunk{Type: ChunkTextDelta, Index: 0, Text: "<b>\u2028"}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]Chunk{"chunk": c}); err != nil {
		t.Fatal(err)
	}
	want := `{"chunk":{"type":"text-delta","index":0,"text":"<b>` + "\u2028" + `"}}` + "\n"
	if buf.String() != want {
		t.Fatalf("got  %q\nwant %q", buf.String(), want)
	}
}

func TestAppendJSON(t *testing.T) {
	dst := []byte("prefix:")
	got, err := Chunk{Type: ChunkFinish, Reason: &FinishReason{Kind: FinishStop}}.AppendJSON(dst)
	if err != nil {
		t.Fatal(err)
	}
	if want := `prefix:{"type":"finish","reason":{"kind":"stop"}}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	// A failed encode returns dst unchanged.
	got, err = Chunk{Type: ChunkUsage}.AppendJSON(dst)
	if err == nil || string(got) != "prefix:" {
		t.Fatalf("got %q, %v; want dst unchanged and an error", got, err)
	}
}
