package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
		{"mark in tools", Config{}, llm.Request{Model: "m", Tools: json.RawMessage(`[{"name":"x","parameters":{"enum":["reel:history-messages"]}}]`), Messages: hist, Memo: &memo}},
		{"back to the history", Config{}, llm.Request{Model: "m", System: "s", Tools: json.RawMessage(benchTools), Messages: benchHistory(4), Memo: &memo}},
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

// checkBody compares requestBody, spliced as it is sent, with the
// whole-request encoding.
func checkBody(t *testing.T, where string, cfg Config, owner any, req llm.Request) {
	t.Helper()
	want, werr := wholeBody(cfg, req)
	got, err := sentBody(cfg, owner, req)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%s: error %v, whole-request path %v", where, err, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: body differs from the whole-request encoding:\n got: %s\nwant: %s", where, got, want)
	}
}

// wholeBody is the encoding of the whole request (the path before kept
// encodings).
func wholeBody(cfg Config, req llm.Request) ([]byte, error) {
	params, err := buildParams(cfg, req)
	if err != nil {
		return nil, err
	}
	return params.MarshalJSON()
}

// sentBody is the body requestBody makes, spliced.
func sentBody(cfg Config, owner any, req llm.Request) ([]byte, error) {
	params, history, err := requestBody(cfg, owner, req)
	if err != nil {
		return nil, err
	}
	enc, err := params.MarshalJSON()
	if err != nil || history == nil {
		return enc, err
	}
	bufs, n, err := spliceHistory(enc, history)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if _, err := bufs.WriteTo(&out); err != nil {
		return nil, err
	}
	if int64(out.Len()) != n {
		return nil, fmt.Errorf("spliced %d bytes, announced %d", out.Len(), n)
	}
	return out.Bytes(), nil
}

// TestRequestBodyOnTheWire sends each step of a growing conversation
// through a real local HTTP server twice, as the SDK encodes the whole
// request and as Stream splices the kept encodings, and compares the bytes
// the server read.
func TestRequestBodyOnTheWire(t *testing.T) {
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if int64(len(b)) != r.ContentLength {
			t.Errorf("read %d bytes, Content-Length %d", len(b), r.ContentLength)
		}
		bodies = append(bodies, b)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p, err := New(Config{Name: "t", BaseURL: srv.URL, Model: "m", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	var memo llm.Memo
	for _, turns := range []int{1, 2, 5} {
		req := llm.Request{Model: "m", System: "You are <reel>.", Tools: json.RawMessage(benchTools), Messages: benchHistory(turns), Memo: &memo}
		whole, err := buildParams(p.cfg, req)
		if err != nil {
			t.Fatal(err)
		}
		bodies = nil
		s, perr, _ := p.open(context.Background(), whole, nil)
		if perr != nil {
			t.Fatal(perr)
		}
		if _, err := llm.Collect(s); err != nil {
			t.Fatal(err)
		}
		st, err := p.Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := llm.Collect(st); err != nil {
			t.Fatal(err)
		}
		if len(bodies) != 2 || !bytes.Equal(bodies[0], bodies[1]) {
			t.Fatalf("%d turns: the spliced body differs from the SDK's:\n%s\n%s", turns, bodies[0], bodies[len(bodies)-1])
		}
	}
}
