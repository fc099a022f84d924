package openai

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// TestRequestBodyCorpus sends every step the dsh corpus records through
// the kept-encodings path, one Memo per log as a live session keeps it, and
// compares each body byte for byte with the whole-request encoding.
func TestRequestBodyCorpus(t *testing.T) {
	files := corpustest.Files(t, filepath.Join("*", "session*.jsonl"))
	steps := 0
	for _, file := range files {
		d, err := jsonl.ReadFile(file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		all, err := sessionlog.ReconstructAll(d.Header, d.Events)
		if err != nil {
			continue // not a log reel reconstructs; other tests cover it
		}
		for _, cfg := range []Config{{Model: "m"}, {Model: "m", MaxCompletionTokens: true}} {
			var memo llm.Memo
			owner := new(int)
			for _, s := range all {
				var h struct {
					System string          `json:"system"`
					Tools  json.RawMessage `json:"tools"`
				}
				_ = json.Unmarshal(s.Request.Header, &h)
				req := llm.Request{Model: "m", System: h.System, Tools: h.Tools, Messages: s.Request.Messages, MaxTokens: 1000, Memo: &memo}
				checkBody(t, file, cfg, owner, req)
				steps++
			}
		}
	}
	if steps == 0 {
		t.Fatal("no steps in the corpus")
	}
}

// TestRequestBodySame covers the shapes the corpus may lack: images sent
// and not, no system prompt, an empty history, a message that maps to
// nothing, a history replaced in the middle, a message that fails.
func TestRequestBodySame(t *testing.T) {
	var memo llm.Memo
	owner := new(int)
	hist := benchHistory(3)
	mixed := []json.RawMessage{
		json.RawMessage(`{"content":[{"type":"text","text":"Inspect "},{"type":"image","attachment":{"attachmentId":"sha256:b1","mediaType":"image/png","width":1,"height":1,"bytes":69}},{"type":"text","text":"then say DONE."}],"role":"user","id":"u2"}`),
		json.RawMessage(`{"role":"assistant","content":[{"type":"reasoning","text":"only thinking"}],"id":"a2"}`),
		json.RawMessage(`{"role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"line 1"},{"type":"text","text":"</script>"}],"isError":true},{"type":"tool-result","toolCallId":"c2","content":[],"isError":false},{"type":"text","text":"and continue"}]}`),
	}
	replaced := append(append([]json.RawMessage{}, hist[:2]...), json.RawMessage(`{"role":"user","content":[{"type":"text","text":"summary <&>"}]}`))
	steps := []struct {
		name string
		cfg  Config
		req  llm.Request
	}{
		{"history", Config{}, llm.Request{Model: "m", System: "s", Tools: json.RawMessage(benchTools), Messages: hist, Memo: &memo}},
		{"grown", Config{}, llm.Request{Model: "m", System: "s", Tools: json.RawMessage(benchTools), Messages: benchHistory(4), Memo: &memo}},
		{"replaced", Config{}, llm.Request{Model: "m", Messages: replaced, Memo: &memo}},
		{"empty", Config{}, llm.Request{Model: "m", Memo: &memo}},
		{"only nothing", Config{}, llm.Request{Model: "m", Messages: mixed[1:2], Memo: &memo}},
		{"images as text", Config{}, llm.Request{Model: "m", Messages: mixed, Memo: &memo}},
		{"images sent", Config{ImageInput: true, Images: fakeImages{}}, llm.Request{Model: "m", Messages: mixed, Memo: &memo}},
		{"no memo", Config{}, llm.Request{Model: "m", Messages: mixed}},
	}
	for _, s := range steps {
		// The owner is the provider, whose Config never changes.
		o := any(owner)
		if s.cfg.ImageInput {
			o = new(int)
		}
		t.Run(s.name, func(t *testing.T) { checkBody(t, s.name, s.cfg, o, s.req) })
	}
	bad := llm.Request{Model: "m", Messages: append(benchHistory(1), json.RawMessage(`{"content":[]}`)), Memo: &memo}
	if _, _, err := requestBody(Config{}, owner, bad); err == nil || !bytes.Contains([]byte(err.Error()), []byte("message 4")) {
		t.Errorf("bad message: error %v, want one naming message 4", err)
	}
}

// checkBody compares requestBody with the whole-request encoding.
func checkBody(t *testing.T, where string, cfg Config, owner any, req llm.Request) {
	t.Helper()
	want, wantModel, werr := wholeBody(cfg, req)
	got, model, err := requestBody(cfg, owner, req)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%s: error %v, whole-request path %v", where, err, werr)
	}
	if !bytes.Equal(got, want) || model != wantModel {
		t.Fatalf("%s: body differs from the whole-request encoding:\n got: %s\nwant: %s", where, got, want)
	}
}
