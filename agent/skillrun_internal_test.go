package agent

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// TestCatalogDigestReadsEachEventOnce: the catalog check runs before every
// step; it must not read the whole log each time (it once did, and a long
// session's turns slowed down with every message). With nothing appended
// since the last call it allocates next to nothing, however long the log.
func TestCatalogDigestReadsEachEventOnce(t *testing.T) {
	dir := t.TempDir()
	store, err := jsonl.Open(filepath.Join(dir, "state"), jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e, err := New(Config{Store: store, Models: SharedModels{Provider: replay.New(nil, 0, dir)}, Provider: "replay", Model: "replay"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.emit(ctx, 1, sessionlog.TypeTurnStart, sessionlog.TurnData{Turn: 1}, nil, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		m := sessionlog.NewUserMessage("m", sessionlog.TextPart("message "+string(rune('a'+i%26))))
		if _, err := s.emit(ctx, 1, sessionlog.TypeUserMessage, m, sessionlog.AppendOp(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if d, ever := s.catalogDigest(); d != "" || ever {
		t.Fatalf("catalogDigest = %q, %v on a log without a catalog", d, ever)
	}
	if n := testing.AllocsPerRun(20, func() { s.catalogDigest() }); n > 5 {
		t.Errorf("catalogDigest allocates %.0f times with nothing new in a 2000-message log: it reads the log again", n)
	}
}
