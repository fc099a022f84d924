package agent_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// titleRecorder is an Updates that keeps the titles it is told.
type titleRecorder struct {
	recorder
	mu     sync.Mutex
	titles []string
}

func (r *titleRecorder) Title(_ context.Context, t agent.Title) {
	r.mu.Lock()
	defer r.mu.Unlock()
	late := ""
	if t.Late {
		late = " (late)"
	}
	r.titles = append(r.titles, t.Source+" "+t.Text+late)
}

var _ agent.Updates = (*titleRecorder)(nil)

// TestTitles: a session is titled once, by the first prompt with text:
// its first words at once, then the model's title after that turn (the
// model asked once, never for a later prompt); a prompt without text
// titles nothing; DisableTitleModel keeps the first words.
func TestTitles(t *testing.T) {
	for _, tt := range []struct {
		name      string
		noModel   bool
		wantLog   []string
		wantShown []string
		requests  int
	}{
		{"model", false, []string{"fallback Fix the flaky parser test,", "provider Parser test fix"},
			[]string{"fallback Fix the flaky parser test,", "provider Parser test fix (late)"}, 1},
		{"no title model", true, []string{"fallback Fix the flaky parser test,"}, []string{"fallback Fix the flaky parser test,"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := jsonl.Open(filepath.Join(dir, "state"), jsonl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			model := replay.New([]replay.Entry{textEntry("a"), textEntry("b"), textEntry("c")}, 0, dir).
				WithTitles([]replay.Entry{replay.TextEntry("Parser test fix")})
			e, err := agent.New(agent.Config{Store: store, Models: agent.SharedModels{Provider: model},
				Provider: "replay", Model: "replay", Invariant: true, SpillDir: filepath.Join(dir, "spill"),
				DisableTitleModel: tt.noModel})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = e.Close(); _ = store.Close() })
			s, err := e.NewSession(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			rec := &titleRecorder{}
			for _, p := range []string{" \n\t", "Fix the flaky parser test, please, it fails on CI", "Thanks"} {
				if _, err := s.Prompt(t.Context(), []agent.Content{{Text: p}}, agent.Client{Updates: rec}); err != nil {
					t.Fatal(err)
				}
			}
			d, err := jsonl.ReadFile(filepath.Join(dir, "state", s.ID()+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var logged []string
			requests := 0
			for i := range d.Events {
				switch d.Events[i].Type {
				case sessionlog.TypeSessionTitle:
					td, _ := sessionlog.DecodeData[sessionlog.SessionTitleData](&d.Events[i])
					logged = append(logged, td.Source.Kind+" "+td.Title)
				case sessionlog.TypeTitleLLMRequest:
					requests++
				}
			}
			if !slices.Equal(logged, tt.wantLog) || requests != tt.requests {
				t.Errorf("log titles %q and %d request(s), want %q and %d", logged, requests, tt.wantLog, tt.requests)
			}
			rec.mu.Lock()
			shown := slices.Clone(rec.titles)
			rec.mu.Unlock()
			if !slices.Equal(shown, tt.wantShown) {
				t.Errorf("titles shown %q, want %q", shown, tt.wantShown)
			}
			if got, ok := s.Title(); !ok || got.Source+" "+got.Text != tt.wantLog[len(tt.wantLog)-1] {
				t.Errorf("Session.Title = %+v, %v", got, ok)
			}
		})
	}
}
