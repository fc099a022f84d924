package replay_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// TestCountCallsCorpus counts the model calls of every corpus log and
// every fixture log as Derive does, with CountCalls and, on the log
// loaded with its data known valid, CountLogCalls.
func TestCountCallsCorpus(t *testing.T) {
	files := corpustest.Files(t, filepath.Join("*", "session*.jsonl"))
	fixtures, err := filepath.Glob(filepath.Join("..", "..", "..", "fixtures", "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, file := range append(files, fixtures...) {
		d, err := jsonl.ReadFile(file)
		if err != nil {
			continue // not a log; other tests read these files
		}
		script, derr := replay.Derive(d.Events)
		got, err := replay.CountCalls(d.Events)
		if derr != nil {
			continue
		}
		if err != nil || got != len(script) {
			t.Errorf("%s: CountCalls = %d, %v; Derive made %d entries", file, got, err, len(script))
		}
		// The same log loaded as the store loads it: its chunks' data
		// known valid, read without a second check.
		loaded, lerr := sessionlog.LoadOwnedValid(file, d.Header, slices.Clone(d.Events))
		if lerr == nil {
			if got, err := replay.CountLogCalls(loaded.Log); err != nil || got != len(script) {
				t.Errorf("%s: CountLogCalls = %d, %v; Derive made %d entries", file, got, err, len(script))
			}
		}
		n++
	}
	if n == 0 {
		t.Fatal("no logs counted")
	}
	t.Logf("%d logs", n)
}
