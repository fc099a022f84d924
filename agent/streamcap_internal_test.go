package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// TestResponseBudget: every kind of content counts against the cap once (a
// block-end repeating its deltas adds nothing; one that arrives whole
// counts whole), and the first chunk past the cap is refused.
func TestResponseBudget(t *testing.T) {
	text := func(s string) llm.Chunk { return llm.Chunk{Type: llm.ChunkTextDelta, Text: s} }
	cases := []struct {
		name   string
		limit  int
		chunks []llm.Chunk
		admits int // how many chunks fit
	}{
		{"text within", 10, []llm.Chunk{text("12345"), text("12345")}, 2},
		{"text past", 10, []llm.Chunk{text("12345"), text("123456")}, 1},
		{"reasoning counts", 4, []llm.Chunk{{Type: llm.ChunkReasoningDelta, Text: "12345"}}, 0},
		{"tool-call id, name and arguments count", 10, []llm.Chunk{
			{Type: llm.ChunkToolCallDelta, ID: "ab", Name: "cd", ArgumentsDelta: "123456"},
			{Type: llm.ChunkToolCallDelta, ID: "ab", ArgumentsDelta: "1"},
		}, 1},
		{"block-end repeating its deltas adds nothing", 10, []llm.Chunk{
			text("1234567890"),
			{Type: llm.ChunkBlockEnd, Block: &llm.Block{Type: llm.BlockText, Text: "1234567890"}},
		}, 2},
		{"block-end arriving whole counts whole", 10, []llm.Chunk{
			{Type: llm.ChunkBlockEnd, Index: 1, Block: &llm.Block{Type: llm.BlockText, Text: strings.Repeat("x", 11)}},
		}, 0},
		{"raw chunk counts whole", 10, []llm.Chunk{{Raw: json.RawMessage(`{"type":"future","x":"123456"}`)}}, 0},
		{"finish and usage count nothing", 0, []llm.Chunk{
			{Type: llm.ChunkUsage, Usage: &llm.Usage{}},
			{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}},
		}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newResponseBudget(tc.limit)
			n := 0
			for _, c := range tc.chunks {
				if !b.admit(c) {
					break
				}
				n++
			}
			if n != tc.admits {
				t.Errorf("%d chunks admitted, want %d", n, tc.admits)
			}
			if b.used > tc.limit {
				t.Errorf("used %d of %d", b.used, tc.limit)
			}
		})
	}
}

// TestDeltaMergerIdempotent: a long block's late deltas are merged, the
// text is kept byte for byte, ordinary answers keep their chunks, and
// merging the merged stream again (what a replay of the log does) changes
// nothing.
func TestDeltaMergerIdempotent(t *testing.T) {
	delta := func(typ string, i int, s string) llm.Chunk {
		if typ == llm.ChunkToolCallDelta {
			return llm.Chunk{Type: typ, Index: i, ID: "c1", Name: "bash", ArgumentsDelta: s}
		}
		return llm.Chunk{Type: typ, Index: i, Text: s}
	}
	long := func(typ string, i, n int) []llm.Chunk {
		var cs []llm.Chunk
		for k := 0; k < n; k++ {
			cs = append(cs, delta(typ, i, strings.Repeat(string(rune('a'+k%26)), 64)))
		}
		return cs
	}
	finish := llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}}
	cases := []struct {
		name   string
		stream []llm.Chunk
		merged bool
	}{
		{"short answer keeps its chunks", append(long(llm.ChunkTextDelta, 0, 100), finish), false},
		{"long text", append(long(llm.ChunkTextDelta, 0, 5000), finish), true},
		{"long reasoning then text", append(append(long(llm.ChunkReasoningDelta, 0, 3000), long(llm.ChunkTextDelta, 1, 3000)...), finish), true},
		{"long tool-call arguments", append(long(llm.ChunkToolCallDelta, 0, 4000), finish), true},
	}
	run := func(in []llm.Chunk) []llm.Chunk {
		m := newDeltaMerger()
		var out []llm.Chunk
		for _, c := range in {
			out = append(out, m.add(c)...)
		}
		return append(out, m.flush()...)
	}
	text := func(cs []llm.Chunk) string {
		var b strings.Builder
		for _, c := range cs {
			b.WriteString(c.Type + ":" + c.Text + c.ArgumentsDelta + "|")
		}
		return b.String()
	}
	join := func(cs []llm.Chunk) string {
		var b strings.Builder
		for _, c := range cs {
			b.WriteString(c.Text + c.ArgumentsDelta)
		}
		return b.String()
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			once := run(tc.stream)
			if join(once) != join(tc.stream) {
				t.Fatal("merging changed the streamed text")
			}
			if merged := len(once) < len(tc.stream); merged != tc.merged {
				t.Errorf("%d chunks from %d: merged %v, want %v", len(once), len(tc.stream), merged, tc.merged)
			}
			twice := run(once)
			if len(twice) != len(once) || text(twice) != text(once) {
				t.Errorf("merging the merged stream again gives %d chunks, not the same %d", len(twice), len(once))
			}
		})
	}
}

// TestBlockMember checks that the block member found in a logged
// block-end's data is its block's encoding, shared with the data, and that
// no other chunk has one.
func TestBlockMember(t *testing.T) {
	tests := []struct {
		name string
		c    llm.Chunk
		want string // "" for none
	}{
		{"text", llm.Chunk{Type: llm.ChunkBlockEnd, Index: 3, Block: &llm.Block{Type: llm.BlockText, Text: `say "block":{}}`}},
			`{"type":"text","text":"say \"block\":{}}"}`},
		{"tool call", llm.Chunk{Type: llm.ChunkBlockEnd, Block: &llm.Block{Type: llm.BlockToolCall, ID: "c", Name: "n", Arguments: "{}"}},
			`{"type":"tool-call","id":"c","name":"n","arguments":"{}"}`},
		{"delta", llm.Chunk{Type: llm.ChunkTextDelta, Text: `,"block":{}}`}, ""},
		{"raw chunk", llm.Chunk{Type: llm.ChunkBlockEnd, Raw: []byte(`{"type":"block-end","index":0,"block":{"type":"x"},"more":1}`), Block: &llm.Block{Type: "x"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := chunkData(2, 5, tt.c)
			if err != nil {
				t.Fatal(err)
			}
			got := blockMember(tt.c, data)
			if string(got) != tt.want {
				t.Fatalf("block member of %s: got %s, want %q", data, got, tt.want)
			}
			if got != nil && &got[0] != &data[len(data)-2-len(got)] {
				t.Errorf("the block member is a copy, not the data's bytes")
			}
		})
	}
}

// TestEscapedText checks that the escaped text copied from a logged delta
// is what escaping its decoded text gives, and that data of any other form
// is left to decoding.
func TestEscapedText(t *testing.T) {
	heads := [][]byte{[]byte(`{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"`)}
	tests := []struct {
		name string
		c    llm.Chunk
		ok   bool
	}{
		{"plain", llm.Chunk{Type: llm.ChunkTextDelta, Text: "hello"}, true},
		{"escapes", llm.Chunk{Type: llm.ChunkTextDelta, Text: "a\"b\\\n\x01\u2028é\xff"}, true},
		{"ends in a backslash", llm.Chunk{Type: llm.ChunkTextDelta, Text: `x\`}, true},
		{"empty", llm.Chunk{Type: llm.ChunkTextDelta}, true},
		{"other index", llm.Chunk{Type: llm.ChunkTextDelta, Index: 1, Text: "x"}, false},
		{"reasoning", llm.Chunk{Type: llm.ChunkReasoningDelta, Text: "x"}, false},
		{"raw with more members", llm.Chunk{Type: llm.ChunkTextDelta, Raw: []byte(`{"type":"text-delta","index":0,"text":"a","x":"b"}`)}, false},
		{"raw with an escaped closing quote", llm.Chunk{Type: llm.ChunkTextDelta, Raw: []byte(`{"type":"text-delta","index":0,"text":"a\"}`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := chunkData(1, 2, tt.c)
			if err != nil {
				t.Fatal(err)
			}
			body, ok := escapedText(data, heads)
			if ok != tt.ok {
				t.Fatalf("escapedText(%s): ok %v, want %v", data, ok, tt.ok)
			}
			if !ok {
				return
			}
			var d struct {
				Chunk llm.Chunk `json:"chunk"`
			}
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatal(err)
			}
			want := sessionlog.AppendString(nil, d.Chunk.Text)
			if got := `"` + string(body) + `"`; got != string(want) {
				t.Errorf("escaped text %s, want %s", got, want)
			}
		})
	}
}
