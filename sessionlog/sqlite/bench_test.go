package sqlite_test

import (
	"fmt"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

func benchOpen(b *testing.B, dir string) sessionlog.Store {
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkAppend: events/s appended, one commit at the end or one per
// step of 20 events.
func BenchmarkAppend(b *testing.B) {
	b.Run("sync=end", func(b *testing.B) { sessionlogtest.BenchmarkAppend(b, benchOpen, 0) })
	b.Run("sync=step20", func(b *testing.B) { sessionlogtest.BenchmarkAppend(b, benchOpen, 20) })
}

// BenchmarkLoad: events/s loaded (decode, validate, repair).
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) { sessionlogtest.BenchmarkLoad(b, benchOpen, n) })
	}
}
