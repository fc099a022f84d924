package sessionlogtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// BenchOpener opens a store for a benchmark.
type BenchOpener func(b *testing.B, dir string) sessionlog.Store

// BenchmarkAppend appends b.N events to one session, one Append per event
// as the agent loop does, with a Sync every syncEvery events (0: only the
// final Sync). It reports events/s.
func BenchmarkAppend(b *testing.B, open BenchOpener, syncEvery int) {
	ctx := context.Background()
	events := Generate(b.N)
	st := open(b, b.TempDir())
	defer st.Close()
	w, err := st.Create(ctx, sessionlog.NewHeader("bench", 1, "/work"))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range events {
		if err := w.Append(ctx, events[i]); err != nil {
			b.Fatal(err)
		}
		if syncEvery > 0 && (i+1)%syncEvery == 0 {
			if err := w.Sync(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkLoad stores a session of n events (outside the timer), then
// loads it with Inspect once per iteration: decode, validate, repair. It
// reports events/s.
func BenchmarkLoad(b *testing.B, open BenchOpener, n int) {
	ctx := context.Background()
	st := open(b, b.TempDir())
	defer st.Close()
	w, err := st.Create(ctx, sessionlog.NewHeader("bench", 1, "/work"))
	if err != nil {
		b.Fatal(err)
	}
	events := Generate(n)
	for i := 0; i < n; i += 20 { // batches of a step, as the agent syncs
		if err := w.Append(ctx, events[i:min(i+20, n)]...); err != nil {
			b.Fatal(err)
		}
		if err := w.Sync(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	events = nil
	b.ResetTimer()
	for range b.N {
		l, err := st.Inspect(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if l.Log.Len() < n {
			b.Fatal(fmt.Errorf("loaded %d events, stored %d", l.Log.Len(), n))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
}
