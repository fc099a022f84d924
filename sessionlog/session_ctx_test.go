package sessionlog_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
)

// TestSessionAppendCancelled: an Append with a cancelled context appends
// nothing, in memory or on the writer, so the next Append (the turn end a
// cancelled turn still writes) continues the sequence instead of failing
// "append out of order" for the rest of the session.
func TestSessionAppendCancelled(t *testing.T) {
	st, err := jsonl.Open(t.TempDir(), jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := sessionlog.NewHeader("c1", 1, "/w")
	w, err := st.Create(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := sessionlog.Seed(h, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sessionlog.NewSession(lg, w)
	b := sessionlogtest.NewBuilder(0)
	b.TurnStart(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Append(ctx, b.Take()...); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context: %v", err)
	}
	if n := s.Log().Len(); n != 0 {
		t.Fatalf("the cancelled Append left %d events in memory", n)
	}
	b = sessionlogtest.NewBuilder(0)
	b.TurnStart(1)
	if err := s.Append(context.Background(), b.Take()...); err != nil {
		t.Fatalf("Append after a cancelled one: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
