package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm/openai"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// longAnswer is a local OpenAI-compatible endpoint that streams one text
// answer of size bytes in 64-byte deltas to its first request and "OK" to
// every later one (a title's, the next turn's); after is the size of the
// largest body of a request after the first.
type longAnswer struct {
	size  int
	calls atomic.Int32
	after atomic.Int64
}

func (a *longAnswer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n, _ := io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriterSize(w, 64<<10)
	head := `data: {"id":"c1","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":`
	if a.calls.Add(1) > 1 {
		if n > a.after.Load() {
			a.after.Store(n)
		}
		_, _ = bw.WriteString(head + `{"content":"OK"}}]}` + "\n\n")
		_, _ = bw.WriteString(head + `{},"finish_reason":"stop"}]}` + "\n\n")
		_, _ = bw.WriteString("data: [DONE]\n\n")
		_ = bw.Flush()
		return
	}
	// Quotes, backslashes, a control character and multi-byte text: the
	// block-end and the message escape what the deltas carried.
	const text = "A \"long\" answer \\ with\ttabs, é and 日本 — and more text…\n"
	event := []byte(head + `{"content":` + strconv.Quote(text) + `}}]}` + "\n\n")
	for sent := 0; sent < a.size; sent += len(text) {
		if _, err := bw.Write(event); err != nil {
			return
		}
	}
	_, _ = bw.WriteString(head + `{},"finish_reason":"stop"}]}` + "\n\n")
	_, _ = bw.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","created":0,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}}` + "\n\n")
	_, _ = bw.WriteString("data: [DONE]\n\n")
	_ = bw.Flush()
}

// TestStreamedAnswerReadBack: a 16 MiB answer streamed into a live
// session is held by the log as views of the stored file (its deltas, its
// block-end and its message: not in memory), and every event reads back
// the bytes the file holds through every way the session's log is read:
// the log itself, the session query tools' window, a fork's seed and the
// forked log written from it, the replay script derived from it, an
// export (the log encoded again) and a validation from scratch.
func TestStreamedAnswerReadBack(t *testing.T) {
	const size = 16 << 20
	answer := &longAnswer{size: size}
	srv := httptest.NewServer(answer)
	defer srv.Close()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	store, err := jsonl.Open(state, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	prov, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "m", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := agent.New(agent.Config{
		Store: store, Models: agent.SharedModels{Provider: prov}, Provider: "openai", Model: "m",
		Mode: sandbox.ReadOnly, Invariant: true, MaxResponseBytes: 2 * size,
		SpillDir: filepath.Join(dir, "spill"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	// The second turn's request holds the answer, rebuilt from the log
	// and checked against it byte for byte (Invariant).
	for _, text := range []string{"Tell me a long story.", "Thanks."} {
		stop, err := s.Prompt(t.Context(), []agent.Content{{Text: text}}, agent.Client{Updates: &discard{}})
		if err != nil || stop != agent.StopEndTurn {
			t.Fatalf("Prompt(%q) = %q, %v", text, stop, err)
		}
	}
	if answer.after.Load() < size {
		t.Errorf("the second request does not carry the %d-byte answer", size)
	}
	file := func(id string) *jsonl.Decoded {
		t.Helper()
		d, err := jsonl.ReadFile(filepath.Join(state, id+jsonl.ExtRaw))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	stored := file(s.ID()).Events
	lg := agent.LogOf(s)
	// Three copies of the answer (deltas, block-end, message): all but a
	// few of their bytes are read from the file.
	if got := lg.StoredBytes(); got < 3*size-size/8 {
		t.Errorf("the log reads %d bytes of event data from the store, want about %d (three copies of a %d-byte answer)", got, 3*size, size)
	}
	same := func(path string, got []sessionlog.Event, want []sessionlog.Event) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d events, the file has %d", path, len(got), len(want))
		}
		for i := range got {
			g, w := &got[i], &want[i]
			if g.Type != w.Type || g.Seq != w.Seq || g.Time != w.Time || !bytes.Equal(g.Data, w.Data) ||
				!reflect.DeepEqual(g.SourceEventSeqs, w.SourceEventSeqs) || !reflect.DeepEqual(g.SurfaceOp, w.SurfaceOp) {
				t.Fatalf("%s: seq %d (%s) differs from the file: %d data bytes %.60q…%.60q, the file %d bytes %.60q…%.60q", path, w.Seq, w.Type,
					len(g.Data), g.Data, tail(g.Data), len(w.Data), w.Data, tail(w.Data))
			}
		}
	}
	same("the in-memory log", lg.Events(), stored)
	for seq := range stored {
		same("Log.Event", []sessionlog.Event{*lg.Event(seq)}, stored[seq:seq+1])
	}
	window, n := agent.HistoryOf(s).Window(0, len(stored))
	if n != len(stored) {
		t.Fatalf("the history has %d events, the file %d", n, len(stored))
	}
	same("the session query window", window, stored)
	end := len(stored) - 1 // where a fork seeds from: the last turn/end
	for stored[end].Type != sessionlog.TypeTurnEnd {
		end--
	}
	seed := sessionlog.ForkSeed(lg.Events(), end)
	same("a fork's seed", seed[:end+1], stored[:end+1])

	want, err := replay.Derive(stored)
	if err != nil {
		t.Fatal(err)
	}
	got, err := replay.Derive(lg.Events())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the replay script derived from the log differs from the file's")
	}

	var buf bytes.Buffer
	if err := jsonl.Encode(&buf, lg.Header(), lg.Events()); err != nil {
		t.Fatal(err)
	}
	exported := filepath.Join(dir, "export.jsonl")
	if err := os.WriteFile(exported, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := jsonl.ReadFile(exported)
	if err != nil {
		t.Fatal(err)
	}
	same("the log exported", d.Events, stored)
	if _, err := sessionlog.Seed(lg.Header(), lg.Events()); err != nil {
		t.Errorf("the log read back is not valid: %v", err)
	}

	child, err := e.ForkSession(t.Context(), s.ID(), dir, -1)
	if err != nil {
		t.Fatal(err)
	}
	same("the forked log's seed", file(child.ID()).Events[:end+1], stored[:end+1])
	same("the forked session's log", agent.LogOf(child).Events()[:end+1], stored[:end+1])
}

// discard is a recorder that does not write down the streamed text.
type discard struct{ recorder }

func (*discard) Text(context.Context, string)    {}
func (*discard) Thought(context.Context, string) {}

// tail is the last 60 bytes of b.
func tail(b []byte) []byte { return b[max(0, len(b)-60):] }
