package jsonl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
)

func benchOpener(compress bool) sessionlogtest.BenchOpener {
	return func(b *testing.B, dir string) sessionlog.Store {
		st, err := jsonl.Open(dir, jsonl.Options{Compress: compress})
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
}

var forms = []struct {
	name     string
	compress bool
}{{"raw", false}, {"zstd", true}}

// BenchmarkAppend: events/s appended, without per-event fsync (one Sync at
// the end) and with a Sync per step of 20 events.
func BenchmarkAppend(b *testing.B) {
	for _, f := range forms {
		b.Run(f.name+"/sync=end", func(b *testing.B) { sessionlogtest.BenchmarkAppend(b, benchOpener(f.compress), 0) })
		b.Run(f.name+"/sync=step20", func(b *testing.B) { sessionlogtest.BenchmarkAppend(b, benchOpener(f.compress), 20) })
	}
}

// BenchmarkLoad: events/s loaded (decode, validate, repair) from a session
// of 10k or 1M events.
func BenchmarkLoad(b *testing.B) {
	for _, f := range forms {
		for _, n := range []int{10_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/events=%d", f.name, n), func(b *testing.B) {
				sessionlogtest.BenchmarkLoad(b, benchOpener(f.compress), n)
			})
		}
	}
}

// BenchmarkFileSize reports the bytes per 1k events of a 20k-event log:
// raw, zstd with one frame for the whole body (WriteFile), and zstd with
// one frame per 20-event Sync (a live store).
func BenchmarkFileSize(b *testing.B) {
	const n = 20_000
	events := sessionlogtest.Generate(n)
	h := sessionlog.NewHeader("size", 1, "/work")
	dir := b.TempDir()
	size := func(p string) float64 {
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		return float64(fi.Size()) / (n / 1000)
	}
	var raw, whole, perStep float64
	for range b.N {
		for _, name := range []string{"a" + jsonl.ExtRaw, "a" + jsonl.ExtZstd} {
			if err := jsonl.WriteFile(filepath.Join(dir, name), h, events); err != nil {
				b.Fatal(err)
			}
		}
		raw, whole = size(filepath.Join(dir, "a"+jsonl.ExtRaw)), size(filepath.Join(dir, "a"+jsonl.ExtZstd))
		st, err := jsonl.Open(filepath.Join(dir, "store"), jsonl.Options{Compress: true})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		_ = os.Remove(filepath.Join(dir, "store", "size"+jsonl.ExtZstd))
		w, err := st.Create(ctx, h)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i += 20 {
			if err := w.Append(ctx, events[i:i+20]...); err != nil {
				b.Fatal(err)
			}
			if err := w.Sync(ctx); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		perStep = size(filepath.Join(dir, "store", "size"+jsonl.ExtZstd))
		_ = st.Close()
	}
	b.ReportMetric(raw, "raw-B/1k-events")
	b.ReportMetric(whole, "zstd-whole-B/1k-events")
	b.ReportMetric(perStep, "zstd-step20-B/1k-events")
}
