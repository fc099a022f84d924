package replay_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// corpusDirs lists the corpus scenarios that hold a session log; see
// corpustest for what a missing corpus does.
func corpusDirs(t *testing.T) []string {
	t.Helper()
	dirs := corpustest.Files(t, filepath.Join("*", "session.jsonl"))
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	return dirs
}

// Every corpus scenario yields a script: derived from its log, or from its
// override when the log holds a thrown or hung stream.
func TestCorpusScripts(t *testing.T) {
	for _, dir := range corpusDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			d, err := jsonl.ReadFile(filepath.Join(dir, "session.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			override := filepath.Join(dir, "replay.override.json")
			if _, err := os.Stat(override); err != nil {
				override = ""
			}
			script, err := replay.Load(d.Events, override)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range script {
				if e.Kind == replay.KindChunks && e.Chunks[len(e.Chunks)-1].Type != llm.ChunkFinish {
					t.Fatalf("entry %d does not end with finish", i)
				}
				if e.Kind == replay.KindIncomplete && override == "" {
					t.Logf("entry %d is incomplete (no override): serving it fails loudly", i)
				}
			}
		})
	}
}

func TestProviderServesInOrderAndFailsWhenExhausted(t *testing.T) {
	fin := llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}}
	script := []replay.Entry{
		{Kind: replay.KindChunks, Chunks: []llm.Chunk{{Type: llm.ChunkTextDelta, Text: "a"}, fin}},
		{Kind: replay.KindThrow, Message: "boom", Code: llm.CodeAuth},
	}
	p := replay.New(script, 0, t.TempDir())
	ctx := context.Background()
	s, err := p.Stream(ctx, llm.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stream(ctx, llm.Request{}); !errors.Is(err, replay.ErrBusy) {
		t.Fatalf("second stream in flight: got %v", err)
	}
	got, err := llm.Collect(s)
	if err != nil || len(got) != 2 || got[0].Text != "a" {
		t.Fatalf("first call: %v %+v", err, got)
	}
	s, _ = p.Stream(ctx, llm.Request{})
	_, err = llm.Collect(s)
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Code != llm.CodeAuth {
		t.Fatalf("throw: got %v", err)
	}
	if _, err := p.Stream(ctx, llm.Request{}); !errors.Is(err, replay.ErrExhausted) {
		t.Fatalf("exhausted: got %v", err)
	}
}

func TestHangWritesReadyFileAndEndsOnCancel(t *testing.T) {
	dir := t.TempDir()
	partial := llm.Chunk{Type: llm.ChunkTextDelta, Text: "partial"}
	p := replay.New([]replay.Entry{{Kind: replay.KindHang, Chunks: []llm.Chunk{partial}, ReadyFile: "ready"}}, 0, dir)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := p.Stream(ctx, llm.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.Next(); err != nil || c.Text != "partial" {
		t.Fatalf("first chunk: %+v %v", c, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
		t.Fatal("ready file written before the stream hangs")
	}
	errc := make(chan error, 1)
	go func() { _, err := s.Next(); errc <- err }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ready file never written")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		t.Fatalf("hang after cancel: %v", err)
	}
}

func TestIncompleteCallFailsLoudly(t *testing.T) {
	p := replay.New([]replay.Entry{{Kind: replay.KindIncomplete, Where: "turn 1 step 1"}}, 0, t.TempDir())
	_, err := p.Stream(context.Background(), llm.Request{})
	if err == nil || !strings.Contains(err.Error(), "model call 1 (turn 1 step 1)") {
		t.Fatalf("got %v", err)
	}
}

func TestOverrideForms(t *testing.T) {
	fin := llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}}
	derived := []replay.Entry{{Kind: replay.KindIncomplete}, {Kind: replay.KindChunks, Chunks: []llm.Chunk{fin}}}
	cases := []struct {
		name, doc string
		kinds     []string
		err       string
	}{
		{"whole script", `[{"kind":"throw","message":"x","code":"AUTH"}]`, []string{"throw"}, ""},
		{"patch", `{"patches":[{"at":0,"entry":{"kind":"hang","readyFile":"r"}}]}`, []string{"hang", "chunks"}, ""},
		{"append", `{"patches":[{"at":2,"entry":{"kind":"chunks","chunks":[{"type":"finish","reason":{"kind":"stop"}}]}}]}`, []string{"incomplete", "chunks", "chunks"}, ""},
		{"out of range", `{"patches":[{"at":3,"entry":{"kind":"hang"}}]}`, nil, "at must be 0…2"},
		{"duplicate", `{"patches":[{"at":0,"entry":{"kind":"hang"}},{"at":0,"entry":{"kind":"hang"}}]}`, nil, "duplicate index 0"},
		{"unknown kind", `[{"kind":"explode"}]`, nil, `unknown kind "explode"`},
		{"chunks without finish", `[{"kind":"chunks","chunks":[{"type":"text-delta","index":0,"text":"a"}]}]`, nil, "must end with a finish chunk"},
		{"unknown field", `[{"kind":"hang","wait":1}]`, nil, `unknown field "wait"`},
		{"not a document", `7`, nil, "must be an array of entries"},
	}
	for _, c := range cases {
		got, err := replay.ApplyOverride(derived, []byte(c.doc), "o.json")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: got %v, want error containing %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var kinds []string
		for _, e := range got {
			kinds = append(kinds, e.Kind)
		}
		if strings.Join(kinds, ",") != strings.Join(c.kinds, ",") {
			t.Errorf("%s: kinds %v, want %v", c.name, kinds, c.kinds)
		}
	}
}
