package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// chunks decodes one chunk per non-empty line.
func chunks(t testing.TB, lines string) []Chunk {
	t.Helper()
	var out []Chunk
	for _, line := range strings.Split(lines, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var c Chunk
		if err := c.UnmarshalJSON([]byte(line)); err != nil {
			t.Fatalf("bad test chunk %s: %v", line, err)
		}
		out = append(out, c)
	}
	return out
}

func TestAssembler(t *testing.T) {
	stop := `{"type":"finish","reason":{"kind":"stop"}}`
	tests := []struct {
		name      string
		chunks    []Chunk // used when set, else in
		in        string
		content   string
		text      string
		toolCalls []ToolCall
		usage     string // "" for none
		finish    string
		err       error // from Finish; a *ProviderError compares Code and Message
		deltas    []Delta
	}{
		{
			name: "well-formed text and reasoning",
			in: `{"type":"block-start","index":0,"blockType":"reasoning"}
				{"type":"reasoning-delta","index":0,"text":"thin"}
				{"type":"reasoning-delta","index":0,"text":"k"}
				{"type":"block-start","index":1,"blockType":"text"}
				{"type":"text-delta","index":1,"text":"hel"}
				{"type":"text-delta","index":1,"text":"lo"}
				{"type":"block-end","index":0,"block":{"type":"reasoning","text":"think"}}
				{"type":"block-end","index":1,"block":{"type":"text","text":"hello"}}
				{"type":"usage","usage":{"inputTokens":1,"outputTokens":2,"cacheReadTokens":3,"reasoningTokens":4}}
				` + stop,
			content: `[{"type":"reasoning","text":"think"},{"type":"text","text":"hello"}]`,
			text:    "hello",
			usage:   `{"inputTokens":1,"outputTokens":2,"cacheReadTokens":3,"reasoningTokens":4}`,
			finish:  FinishStop,
			deltas: []Delta{{BlockReasoning, 0, "thin"}, {BlockReasoning, 0, "k"},
				{BlockText, 1, "hel"}, {BlockText, 1, "lo"}},
		},
		{
			name: "block-end replaces the deltas",
			in: `{"type":"block-start","index":0,"blockType":"text"}
				{"type":"text-delta","index":0,"text":"draft"}
				{"type":"block-end","index":0,"block":{"type":"text","text":"final"}}
				` + stop,
			content: `[{"type":"text","text":"final"}]`,
			text:    "final",
			finish:  FinishStop,
			deltas:  []Delta{{BlockText, 0, "draft"}},
		},
		{
			name: "missing block-start: deltas open blocks by their type",
			in: `{"type":"reasoning-delta","index":0,"text":"r"}
				{"type":"text-delta","index":1,"text":"t"}
				{"type":"tool-call-delta","index":2,"id":"c1","name":"bash","argumentsDelta":"{\"a\""}
				{"type":"tool-call-delta","index":2,"id":"","argumentsDelta":":1}"}
				{"type":"finish","reason":{"kind":"tool-calls"}}`,
			content:   `[{"type":"reasoning","text":"r"},{"type":"text","text":"t"},{"type":"tool-call","id":"c1","name":"bash","arguments":"{\"a\":1}"}]`,
			text:      "t",
			toolCalls: []ToolCall{{"c1", "bash", `{"a":1}`}},
			finish:    FinishToolCalls,
			deltas:    []Delta{{BlockReasoning, 0, "r"}, {BlockText, 1, "t"}},
		},
		{
			name: "out of order: blocks in opening order, ends in any order",
			in: `{"type":"block-start","index":1,"blockType":"text"}
				{"type":"block-start","index":0,"blockType":"reasoning"}
				{"type":"text-delta","index":1,"text":"b"}
				{"type":"reasoning-delta","index":0,"text":"a"}
				{"type":"block-end","index":1,"block":{"type":"text","text":"B"}}
				` + stop + `
				{"type":"block-end","index":0,"block":{"type":"reasoning","text":"A"}}`,
			content: `[{"type":"text","text":"B"},{"type":"reasoning","text":"A"}]`,
			text:    "B",
			finish:  FinishStop,
			deltas:  []Delta{{BlockText, 1, "b"}, {BlockReasoning, 0, "a"}},
		},
		{
			name:    "block-end only: no open block, ignored",
			in:      `{"type":"block-end","index":0,"block":{"type":"text","text":"lost"}}` + "\n" + stop,
			content: `[]`,
			finish:  FinishStop,
		},
		{
			name: "block-end without deltas",
			in: `{"type":"block-start","index":0,"blockType":"tool-call"}
				{"type":"block-end","index":0,"block":{"type":"tool-call","id":"c","name":"n","arguments":"{}"}}
				` + stop,
			content:   `[{"type":"tool-call","id":"c","name":"n","arguments":"{}"}]`,
			toolCalls: []ToolCall{{"c", "n", "{}"}},
			finish:    FinishStop,
		},
		{
			name: "unknown block type kept raw",
			in: `{"type":"block-start","index":0,"blockType":"image"}
				{"type":"block-end","index":0,"block":{"type":"image","data":"AA==", "n" : 1}}
				` + stop,
			content: `[{"type":"image","data":"AA==", "n" : 1}]`,
			finish:  FinishStop,
		},
		{
			name: "unknown block type without block-end is a text block",
			in: `{"type":"block-start","index":0,"blockType":"image"}
				{"type":"text-delta","index":0,"text":"x"}
				` + stop,
			content: `[{"type":"text","text":"x"}]`,
			text:    "x",
			finish:  FinishStop,
			deltas:  []Delta{{BlockText, 0, "x"}},
		},
		{
			name: "unknown block-end without raw falls back to the deltas",
			chunks: []Chunk{
				{Type: ChunkBlockStart, BlockType: BlockReasoning},
				{Type: ChunkReasoningDelta, Text: "r"},
				{Type: ChunkBlockEnd, Block: &Block{Type: "image"}},
				{Type: ChunkFinish, Reason: &FinishReason{Kind: FinishStop}},
			},
			content: `[{"type":"reasoning","text":"r"}]`,
			finish:  FinishStop,
			deltas:  []Delta{{BlockReasoning, 0, "r"}},
		},
		{
			name: "known block-end ignores a raw form",
			chunks: []Chunk{
				{Type: ChunkBlockStart, BlockType: BlockText},
				{Type: ChunkBlockEnd, Block: &Block{Type: BlockText, Text: "t", Raw: json.RawMessage(`{"x":1}`)}},
				{Type: ChunkFinish, Reason: &FinishReason{Kind: FinishStop}},
			},
			content: `[{"type":"text","text":"t"}]`,
			text:    "t",
			deltas:  []Delta{{Type: BlockText, Text: "t"}},
			finish:  FinishStop,
		},
		{
			name: "tool-call id and name: the last non-empty ones win",
			in: `{"type":"tool-call-delta","index":0,"id":"a","name":"x","argumentsDelta":"1"}
				{"type":"tool-call-delta","index":0,"id":"b","argumentsDelta":"2"}
				{"type":"tool-call-delta","index":0,"id":"","name":"y","argumentsDelta":"3"}
				` + stop,
			content:   `[{"type":"tool-call","id":"b","name":"y","arguments":"123"}]`,
			toolCalls: []ToolCall{{"b", "y", "123"}},
			finish:    FinishStop,
		},
		{
			name: "tool call is decided by the opening type",
			in: `{"type":"block-start","index":0,"blockType":"text"}
				{"type":"block-end","index":0,"block":{"type":"tool-call","id":"c","name":"n","arguments":"{}"}}
				{"type":"block-start","index":1,"blockType":"tool-call"}
				{"type":"tool-call-delta","index":1,"id":"d","name":"m","argumentsDelta":"[]"}
				{"type":"block-end","index":1,"block":{"type":"text","text":"t"}}
				` + stop,
			content:   `[{"type":"tool-call","id":"c","name":"n","arguments":"{}"},{"type":"text","text":"t"}]`,
			text:      "t",
			toolCalls: []ToolCall{{"d", "m", "[]"}},
			finish:    FinishStop,
		},
		{
			name: "mismatched deltas are kept where the rendering ignores them",
			in: `{"type":"block-start","index":0,"blockType":"tool-call"}
				{"type":"text-delta","index":0,"text":"shown, not kept"}
				{"type":"tool-call-delta","index":0,"id":"c","name":"n","argumentsDelta":"{}"}
				` + stop,
			content:   `[{"type":"tool-call","id":"c","name":"n","arguments":"{}"}]`,
			toolCalls: []ToolCall{{"c", "n", "{}"}},
			finish:    FinishStop,
			deltas:    []Delta{{BlockText, 0, "shown, not kept"}},
		},
		{
			name: "a second block-start at an index opens a second block",
			in: `{"type":"block-start","index":0,"blockType":"text"}
				{"type":"text-delta","index":0,"text":"a"}
				{"type":"block-start","index":0,"blockType":"text"}
				{"type":"text-delta","index":0,"text":"b"}
				` + stop,
			content: `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`,
			text:    "ab",
			finish:  FinishStop,
			deltas:  []Delta{{BlockText, 0, "a"}, {BlockText, 0, "b"}},
		},
		{
			name: "empty text deltas are reported",
			in: `{"type":"text-delta","index":0,"text":""}
				` + stop,
			content: `[{"type":"text","text":""}]`,
			finish:  FinishStop,
			deltas:  []Delta{{BlockText, 0, ""}},
		},
		{
			name: "the last usage and the last finish win",
			in: `{"type":"usage","usage":{"inputTokens":1,"outputTokens":1}}
				{"type":"finish","reason":{"kind":"max-tokens"}}
				{"type":"usage","usage":{"inputTokens":2,"outputTokens":3,"reasoningTokens":0}}
				` + stop,
			content: `[]`,
			usage:   `{"inputTokens":2,"outputTokens":3,"reasoningTokens":0}`,
			finish:  FinishStop,
		},
		{
			name: "error finish with failure",
			in: `{"type":"text-delta","index":0,"text":"part"}
				{"type":"finish","reason":{"kind":"error","failure":{"message":"boom","code":"SERVER"}}}
				{"type":"text-delta","index":0,"text":"ignored"}
				` + stop,
			content: `[{"type":"text","text":"part"}]`,
			text:    "part",
			finish:  FinishError,
			err:     &ProviderError{Code: CodeServer, Message: "boom"},
			deltas:  []Delta{{BlockText, 0, "part"}},
		},
		{
			name:    "error finish without failure is an ordinary end",
			in:      `{"type":"finish","reason":{"kind":"error"}}`,
			content: `[]`,
			finish:  FinishError,
		},
		{
			name:    "no finish",
			in:      `{"type":"text-delta","index":0,"text":"t"}`,
			content: `[{"type":"text","text":"t"}]`,
			text:    "t",
			err:     ErrNoFinish,
			deltas:  []Delta{{BlockText, 0, "t"}},
		},
		{
			name:    "a finish without kind is no finish",
			chunks:  []Chunk{{Type: ChunkFinish, Reason: &FinishReason{Kind: FinishStop}}, {Type: ChunkFinish, Reason: &FinishReason{}}},
			content: `[]`,
			err:     ErrNoFinish,
		},
		{
			name:    "chunks without payload and unknown chunks change nothing",
			chunks:  []Chunk{{Type: ChunkUsage}, {Type: ChunkFinish, Reason: &FinishReason{Kind: FinishStop}}, {Type: ChunkFinish}, {Type: "x-new", Raw: json.RawMessage(`{"type":"x-new"}`)}, {Type: ChunkBlockEnd}},
			content: `[]`,
			finish:  FinishStop,
		},
		{
			name:    "strings are written by sessionlog.AppendString",
			in:      `{"type":"text-delta","index":0,"text":"<a&b>\u2028\"\n\u0001é"}` + "\n" + stop,
			content: `[{"type":"text","text":"<a&b>` + "\u2028" + `\"\n\u0001é"}]`,
			text:    "<a&b>\u2028\"\n\x01é",
			finish:  FinishStop,
			deltas:  []Delta{{BlockText, 0, "<a&b>\u2028\"\n\x01é"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.chunks
			if in == nil {
				in = chunks(t, tt.in)
			}
			var a Assembler
			var deltas []Delta
			var addErr error
			for _, c := range in {
				d, err := a.Add(c)
				if err != nil {
					addErr = err
					break
				}
				if d.Type != "" {
					deltas = append(deltas, d)
				}
			}
			if got := string(a.Content()); got != tt.content {
				t.Errorf("Content\n got %s\nwant %s", got, tt.content)
			}
			if !json.Valid(a.Content()) {
				t.Errorf("Content is not valid JSON: %s", a.Content())
			}
			if got := a.Text(); got != tt.text {
				t.Errorf("Text = %q, want %q", got, tt.text)
			}
			if got := a.ToolCalls(); !reflect.DeepEqual(got, tt.toolCalls) {
				t.Errorf("ToolCalls = %+v, want %+v", got, tt.toolCalls)
			}
			var usage string
			if u := a.Usage(); u != nil {
				usage = string(u.AppendJSON(nil))
			}
			if usage != tt.usage {
				t.Errorf("Usage = %s, want %s", usage, tt.usage)
			}
			if !reflect.DeepEqual(deltas, tt.deltas) {
				t.Errorf("deltas = %+v, want %+v", deltas, tt.deltas)
			}
			r, err := a.Finish()
			if r.Kind != tt.finish {
				t.Errorf("Finish kind = %q, want %q", r.Kind, tt.finish)
			}
			var want *ProviderError
			switch {
			case errors.As(tt.err, &want):
				var pe *ProviderError
				if !errors.As(err, &pe) || pe.Code != want.Code || pe.Message != want.Message || pe.Status != 0 || !errors.Is(err, ErrStreamFailure) {
					t.Errorf("Finish error = %#v, want a ProviderError %s %q wrapping ErrStreamFailure", err, want.Code, want.Message)
				}
				if addErr != err {
					t.Errorf("Add returned %v, Finish %v; want the same error", addErr, err)
				}
				if _, again := a.Add(Chunk{Type: ChunkTextDelta, Text: "more"}); again != err {
					t.Errorf("Add after the failure = %v, want the same error", again)
				}
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Errorf("Finish error = %v, want %v", err, tt.err)
				}
			case err != nil || addErr != nil:
				t.Errorf("Finish error = %v, Add error = %v; want none", err, addErr)
			}
			parts := a.Parts()
			blocks := a.Blocks()
			if len(parts) != len(blocks) {
				t.Fatalf("%d parts for %d blocks", len(parts), len(blocks))
			}
			for i, b := range blocks {
				enc, err := b.appendJSON(nil)
				if err != nil || !bytes.Equal(enc, parts[i]) {
					t.Errorf("block %d %+v encodes as %s (%v), part is %s", i, b, enc, err, parts[i])
				}
			}
		})
	}
}

// TestAssemblerCopies checks that the assembler keeps copies: changing a
// chunk after Add, or a result after it was returned, changes nothing.
func TestAssemblerCopies(t *testing.T) {
	var a Assembler
	end := &Block{Type: "image", Raw: json.RawMessage(`{"type":"image"}`)}
	n := int64(7)
	u := &Usage{InputTokens: 1, CacheReadTokens: &n}
	for _, c := range []Chunk{
		{Type: ChunkBlockStart, BlockType: "image"},
		{Type: ChunkBlockEnd, Block: end},
		{Type: ChunkUsage, Usage: u},
	} {
		if _, err := a.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	end.Raw[2] = 'X'
	end.Type = BlockText
	n = 8
	u.InputTokens = 9
	got := a.Usage()
	*got.CacheReadTokens = 10
	a.Blocks()[0].Raw[3] = 'Y'
	if c := string(a.Content()); c != `[{"type":"image"}]` {
		t.Errorf("Content = %s after changing the chunk", c)
	}
	if u := string(a.Usage().AppendJSON(nil)); u != `{"inputTokens":1,"outputTokens":0,"cacheReadTokens":7}` {
		t.Errorf("Usage = %s after changing the chunk", u)
	}
}

// refBlock, refResult and refAssemble are the assembly code the agent loop
// had before the Assembler (agent/loop.go callModel, blockPart, toolCallOf),
// transcribed literally, so that the fuzz target can check the Assembler
// against it.
type refBlock struct {
	typ      string
	text     []byte
	id, name string
	args     []byte
	end      *Block
}

type refResult struct {
	blocks []*refBlock
	usage  json.RawMessage
	finish string
	deltas []Delta
	err    error
}

func refAssemble(chunks []Chunk) refResult {
	var res refResult
	byIndex := map[int]*refBlock{}
	for _, c := range chunks {
		switch c.Type {
		case ChunkBlockStart:
			b := &refBlock{typ: c.BlockType}
			byIndex[c.Index] = b
			res.blocks = append(res.blocks, b)
		case ChunkTextDelta, ChunkReasoningDelta:
			b := byIndex[c.Index]
			if b == nil {
				b = &refBlock{typ: BlockText}
				if c.Type == ChunkReasoningDelta {
					b.typ = BlockReasoning
				}
				byIndex[c.Index] = b
				res.blocks = append(res.blocks, b)
			}
			b.text = append(b.text, c.Text...)
			d := Delta{Type: BlockText, Index: c.Index, Text: c.Text}
			if c.Type == ChunkReasoningDelta {
				d.Type = BlockReasoning
			}
			res.deltas = append(res.deltas, d)
		case ChunkToolCallDelta:
			b := byIndex[c.Index]
			if b == nil {
				b = &refBlock{typ: BlockToolCall}
				byIndex[c.Index] = b
				res.blocks = append(res.blocks, b)
			}
			if c.ID != "" {
				b.id = c.ID
			}
			if c.Name != "" {
				b.name = c.Name
			}
			b.args = append(b.args, c.ArgumentsDelta...)
		case ChunkBlockEnd:
			if b := byIndex[c.Index]; b != nil && c.Block != nil {
				// A text block that arrived whole shows as it ends.
				if len(b.text) == 0 && b.end == nil && c.Block.Text != "" && c.Block.Type == b.typ && (b.typ == BlockText || b.typ == BlockReasoning) {
					res.deltas = append(res.deltas, Delta{Type: c.Block.Type, Index: c.Index, Text: c.Block.Text})
				}
				b.end = c.Block
			}
		case ChunkUsage:
			if c.Usage != nil {
				raw, _ := c.AppendJSON(nil)
				var u struct {
					Usage json.RawMessage `json:"usage"`
				}
				_ = json.Unmarshal(raw, &u)
				res.usage = u.Usage
			}
		case ChunkFinish:
			if c.Reason != nil {
				res.finish = c.Reason.Kind
				if c.Reason.Kind == FinishError && c.Reason.Failure != nil {
					res.err = &ProviderError{Code: c.Reason.Failure.Code, Message: c.Reason.Failure.Message}
					return res
				}
			}
		}
	}
	if res.finish == "" {
		res.err = errors.New("the model stream ended without a finish chunk")
	}
	return res
}

// refObject is the agent's jsonObject for string values.
func refObject(kv ...string) []byte {
	b := []byte{'{'}
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = sessionlog.AppendString(b, kv[i])
		b = append(b, ':')
		b = sessionlog.AppendString(b, kv[i+1])
	}
	return append(b, '}')
}

func refPart(b *refBlock) []byte {
	if b.end != nil {
		switch b.end.Type {
		case BlockText, BlockReasoning:
			return refObject("type", b.end.Type, "text", b.end.Text)
		case BlockToolCall:
			return refObject("type", "tool-call", "id", b.end.ID, "name", b.end.Name, "arguments", b.end.Arguments)
		}
		if b.end.Raw != nil {
			return b.end.Raw
		}
	}
	switch b.typ {
	case BlockToolCall:
		return refObject("type", "tool-call", "id", b.id, "name", b.name, "arguments", string(b.args))
	case BlockReasoning:
		return refObject("type", "reasoning", "text", string(b.text))
	}
	return refObject("type", "text", "text", string(b.text))
}

func refToolCall(b *refBlock) ToolCall {
	if b.end != nil && b.end.Type == BlockToolCall {
		return ToolCall{b.end.ID, b.end.Name, b.end.Arguments}
	}
	return ToolCall{b.id, b.name, string(b.args)}
}

func (r refResult) content() string {
	parts := make([]string, len(r.blocks))
	for i, b := range r.blocks {
		parts[i] = string(refPart(b))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (r refResult) toolCalls() []ToolCall {
	var out []ToolCall
	for _, b := range r.blocks {
		if b.typ == BlockToolCall {
			out = append(out, refToolCall(b))
		}
	}
	return out
}

// compareWithRef assembles chunks with an Assembler the way the agent loop
// does (stopping at the first error) and reports every disagreement with
// the loop's former code.
func compareWithRef(t *testing.T, chunks []Chunk) {
	t.Helper()
	ref := refAssemble(chunks)
	var a Assembler
	var deltas []Delta
	var addErr error
	for _, c := range chunks {
		d, err := a.Add(c)
		if err != nil {
			addErr = err
			break
		}
		if d.Type != "" {
			deltas = append(deltas, d)
		}
	}
	if got, want := string(a.Content()), ref.content(); got != want {
		t.Errorf("content\n got %s\nwant %s", got, want)
	}
	if got, want := a.ToolCalls(), ref.toolCalls(); !reflect.DeepEqual(got, want) {
		t.Errorf("tool calls\n got %+v\nwant %+v", got, want)
	}
	var usage json.RawMessage
	if u := a.Usage(); u != nil {
		usage = u.AppendJSON(nil)
	}
	if !bytes.Equal(usage, ref.usage) {
		t.Errorf("usage %s, want %s", usage, ref.usage)
	}
	if !reflect.DeepEqual(deltas, ref.deltas) {
		t.Errorf("deltas\n got %+v\nwant %+v", deltas, ref.deltas)
	}
	r, err := a.Finish()
	var refPE, pe *ProviderError
	switch {
	case errors.As(ref.err, &refPE):
		if addErr == nil || !errors.As(err, &pe) || pe.Code != refPE.Code || pe.Message != refPE.Message {
			t.Errorf("Add error %v, Finish error %v; want %v", addErr, err, ref.err)
		}
	case ref.err != nil:
		if !errors.Is(err, ErrNoFinish) || addErr != nil {
			t.Errorf("Add error %v, Finish error %v; want ErrNoFinish", addErr, err)
		}
	default:
		if err != nil || addErr != nil || r.Kind != ref.finish {
			t.Errorf("Finish = %q, %v (Add error %v); want %q", r.Kind, err, addErr, ref.finish)
		}
	}
	if !json.Valid(a.Content()) {
		t.Errorf("content is not valid JSON: %s", a.Content())
	}
	compareSkipping(t, chunks, &a, deltas)
}

// compareSkipping checks an Assembler that skips the deltas' text against
// full, which kept it, on the same chunks: the same deltas from Add, and,
// when it reports itself whole, the same content, text and tool calls.
func compareSkipping(t *testing.T, chunks []Chunk, full *Assembler, fullDeltas []Delta) {
	t.Helper()
	var s Assembler
	s.SkipDeltaText()
	var deltas []Delta
	for _, c := range chunks {
		d, err := s.Add(c)
		if err != nil {
			break
		}
		if d.Type != "" {
			deltas = append(deltas, d)
		}
	}
	if !reflect.DeepEqual(deltas, fullDeltas) {
		t.Errorf("skipping delta text: deltas\n got %+v\nwant %+v", deltas, fullDeltas)
	}
	if !s.Whole() {
		return
	}
	if got, want := string(s.Content()), string(full.Content()); got != want {
		t.Errorf("skipping delta text (whole): content\n got %s\nwant %s", got, want)
	}
	if got, want := s.Text(), full.Text(); got != want {
		t.Errorf("skipping delta text (whole): text %q, want %q", got, want)
	}
	if got, want := s.ToolCalls(), full.ToolCalls(); !reflect.DeepEqual(got, want) {
		t.Errorf("skipping delta text (whole): tool calls\n got %+v\nwant %+v", got, want)
	}
}

// FuzzAssembler checks the Assembler against the agent loop's former
// assembly code on arbitrary chunk sequences: one chunk per input line,
// lines that do not decode as a chunk skipped. Seeds live in
// testdata/fuzz/FuzzAssembler.
func FuzzAssembler(f *testing.F) {
	f.Add([]byte(`{"type":"block-start","index":0,"blockType":"text"}
{"type":"text-delta","index":0,"text":"hi"}
{"type":"block-end","index":0,"block":{"type":"text","text":"hi"}}
{"type":"finish","reason":{"kind":"stop"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var in []Chunk
		for _, line := range bytes.Split(data, []byte("\n")) {
			var c Chunk
			if c.UnmarshalJSON(line) == nil {
				in = append(in, c)
			}
		}
		compareWithRef(t, in)
	})
}

// TestAssemblerAddEnd checks that an Assembler given each block-end's
// encoding (AddEnd) assembles what Add does — the same parts byte for byte,
// the same text and tool calls — and keeps the encoding, not the text, of
// the text and reasoning blocks.
func TestAssemblerAddEnd(t *testing.T) {
	tests := []struct {
		name  string
		lines string
		kept  int // blocks kept as their encoding
	}{
		{"text", `
			{"type":"text-delta","index":0,"text":"Hel"}
			{"type":"text-delta","index":0,"text":"lo \"you\"\n\u00e9"}
			{"type":"block-end","index":0,"block":{"type":"text","text":"Hello \"you\"\n\u00e9"}}
			{"type":"finish","reason":{"kind":"stop"}}`, 1},
		{"reasoning, text and a tool call", `
			{"type":"reasoning-delta","index":0,"text":"hmm"}
			{"type":"text-delta","index":1,"text":"ok"}
			{"type":"tool-call-delta","index":2,"id":"c1","name":"bash","argumentsDelta":"{}"}
			{"type":"block-end","index":0,"block":{"type":"reasoning","text":"hmm"}}
			{"type":"block-end","index":1,"block":{"type":"text","text":"ok"}}
			{"type":"block-end","index":2,"block":{"type":"tool-call","id":"c1","name":"bash","arguments":"{}"}}
			{"type":"finish","reason":{"kind":"tool-calls"}}`, 2},
		{"a later block-end wins", `
			{"type":"text-delta","index":0,"text":"a"}
			{"type":"block-end","index":0,"block":{"type":"text","text":"a"}}
			{"type":"block-end","index":0,"block":{"type":"tool-call","id":"c","name":"n","arguments":"x"}}
			{"type":"finish","reason":{"kind":"stop"}}`, 0},
		{"an unknown block type", `
			{"type":"block-end","index":0,"block":{"type":"image","url":"u"}}
			{"type":"finish","reason":{"kind":"stop"}}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var plain, shared Assembler
			for _, c := range chunks(t, tt.lines) {
				pd, perr := plain.Add(c)
				var enc json.RawMessage
				if c.Type == ChunkBlockEnd {
					whole, err := c.AppendJSON(nil)
					if err != nil {
						t.Fatal(err)
					}
					i := bytes.Index(whole, []byte(`,"block":`))
					enc = whole[i+len(`,"block":`) : len(whole)-1]
				}
				sd, serr := shared.AddEnd(c, enc)
				if pd != sd || (perr == nil) != (serr == nil) {
					t.Fatalf("chunk %s: Add gave %+v, %v; AddEnd %+v, %v", c.Type, pd, perr, sd, serr)
				}
			}
			if got, want := shared.Content(), plain.Content(); !bytes.Equal(got, want) {
				t.Errorf("content:\n got %s\nwant %s", got, want)
			}
			if got, want := shared.Text(), plain.Text(); got != want {
				t.Errorf("text: got %q, want %q", got, want)
			}
			if got, want := shared.ToolCalls(), plain.ToolCalls(); !reflect.DeepEqual(got, want) {
				t.Errorf("tool calls: got %+v, want %+v", got, want)
			}
			kept := 0
			for i, b := range shared.Blocks() {
				if b.Raw != nil && (b.Type == BlockText || b.Type == BlockReasoning) {
					kept++
					if b.Text != "" || shared.blocks[i].end.Text != "" {
						t.Errorf("block %d keeps its text besides its encoding", i)
					}
				}
			}
			if kept != tt.kept {
				t.Errorf("%d blocks kept as their encoding, want %d", kept, tt.kept)
			}
		})
	}
}
