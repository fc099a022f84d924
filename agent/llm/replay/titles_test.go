package replay_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// text opens a stream of p and reads its text.
func text(t *testing.T, p *replay.Provider, req llm.Request) (string, error) {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		return "", err
	}
	chunks, err := llm.Collect(s)
	var asm llm.Assembler
	for _, c := range chunks {
		if _, aerr := asm.Add(c); aerr != nil {
			t.Fatal(aerr)
		}
	}
	return asm.Text(), err
}

// TestTitleScript: title calls are served from the recorded titles (a
// request the recording never answered fails), or from a title override,
// without consuming the conversation's calls.
func TestTitleScript(t *testing.T) {
	dir := filepath.Join(corpustest.Dir(t), "session-title-after-turn")
	d, err := jsonl.ReadFile(filepath.Join(dir, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	main, err := replay.Load(d.Events, "")
	if err != nil {
		t.Fatal(err)
	}
	title := llm.Request{Purpose: llm.PurposeTitle}
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		events   []sessionlog.Event
		override string
		want     string
		fails    bool
	}{
		{"recorded", d.Events, "", "Late durable session title", false},
		{"override", d.Events, filepath.Join(dir, "replay.override.json"), "Late durable session title", false},
		{"unanswered", d.Events[:len(d.Events)-1], "", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			titles, err := replay.LoadTitles(c.events, c.override)
			if err != nil {
				t.Fatal(err)
			}
			p := replay.New(main, 0, t.TempDir()).WithTitles(titles)
			got, err := text(t, p, title)
			if c.fails != (err != nil) || got != c.want {
				t.Fatalf("title call: %q, %v", got, err)
			}
			if _, err := p.Stream(ctx, title); !errors.Is(err, replay.ErrExhausted) {
				t.Errorf("a second title call: %v, want ErrExhausted", err)
			}
			if got, err := text(t, p, llm.Request{}); err != nil || got != "TITLE_DONE" || p.Served() != 1 {
				t.Errorf("the conversation's call after the title: %q, %v (served %d)", got, err, p.Served())
			}
		})
	}
	if _, err := replay.LoadTitles(d.Events, filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing title override: %v", err)
	}
}
