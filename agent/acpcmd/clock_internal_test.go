package acpcmd

import (
	"sync"
	"testing"
	"time"
)

// TestSteppingClock: each reading is 1 ms after the one before, from the
// start, however many goroutines read it (no reading repeats or is lost).
func TestSteppingClock(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := steppingClock(start)
	if got := now(); !got.Equal(start) {
		t.Fatalf("first reading %v, want %v", got, start)
	}
	if got := now(); !got.Equal(start.Add(time.Millisecond)) {
		t.Fatalf("second reading %v, want %v", got, start.Add(time.Millisecond))
	}
	const readers, each = 8, 250
	seen := make(chan time.Time, readers*each)
	var wg sync.WaitGroup
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				seen <- now()
			}
		}()
	}
	wg.Wait()
	close(seen)
	got := map[time.Time]bool{}
	for r := range seen {
		if got[r] {
			t.Fatalf("reading %v given twice", r)
		}
		got[r] = true
	}
	for i := 2; i < 2+readers*each; i++ {
		if want := start.Add(time.Duration(i) * time.Millisecond); !got[want] {
			t.Fatalf("no reading gave %v", want)
		}
	}
}
