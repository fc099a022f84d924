package jsonl_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
)

// TestSyncViews: after a checkpoint that wrote 256 KiB or more of them,
// the data of every event of 16 KiB or more that a plain log's writer
// wrote is read from a view of the file,
// equal to what was appended (a large delta is a line of its own, not
// packed); small events and a compressed log's events stay in memory; a
// reload reads the same events.
func TestSyncViews(t *testing.T) {
	for _, compress := range []bool{false, true} {
		dir := t.TempDir()
		st, err := jsonl.Open(dir, jsonl.Options{Compress: compress})
		if err != nil {
			t.Fatal(err)
		}
		h := sessionlog.NewHeader("views", 1, "/w")
		w, err := st.Create(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		b := sessionlogtest.NewBuilder(0)
		b.TurnStart(1)
		b.StepStart(1)
		for _, text := range []string{"a", "b", "c", "d", strings.Repeat("\"big\" 日本\n", 2000), strings.Repeat("x", 20<<10), strings.Repeat("y", 300<<10), "e", "f", "g"} {
			b.Chunk(0, text)
		}
		b.Assistant(strings.Repeat("word ", 8000))
		b.StepEnd()
		b.TurnEnd(sessionlog.EndCompleted)
		events := b.Take()
		want := map[int]bool{}
		var wantBytes int64
		for _, e := range events {
			if len(e.Data) >= 16<<10 && !compress {
				want[e.Seq] = true
				wantBytes += int64(len(e.Data))
			}
		}
		if len(want) == 0 && !compress {
			t.Fatal("no event of 16 KiB")
		}
		l := sessionlog.New(h)
		s := sessionlog.NewSession(l, w)
		if err := s.Append(t.Context(), events...); err != nil {
			t.Fatal(err)
		}
		// What the log held before the checkpoint, to compare with.
		orig := make([][]byte, len(events))
		for i, e := range l.Events() {
			orig[i] = bytes.Clone(e.Data)
		}
		if err := s.Checkpoint(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := l.StoredBytes(); got != wantBytes {
			t.Errorf("compress=%v: the log reads %d bytes from views, want %d", compress, got, wantBytes)
		}
		path := filepath.Join(dir, "views"+jsonl.ExtRaw)
		if compress {
			path = filepath.Join(dir, "views"+jsonl.ExtZstd)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range l.Events() {
			if !bytes.Equal(e.Data, orig[i]) {
				t.Fatalf("compress=%v: seq %d reads %d bytes %.40q, appended %d bytes %.40q", compress, i, len(e.Data), e.Data, len(orig[i]), orig[i])
			}
			if want[i] && !bytes.Contains(raw, orig[i]) {
				t.Errorf("seq %d's data is not in the file verbatim", i)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		d, err := jsonl.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range d.Events {
			if !bytes.Equal(e.Data, orig[i]) {
				t.Fatalf("compress=%v: reloaded seq %d differs", compress, i)
			}
		}
		_ = st.Close()
	}
}

// TestSyncViewsSmallBatch: a Sync that wrote less than 256 KiB of large
// events (a tool result or two) makes no mapping: the log keeps the data.
func TestSyncViewsSmallBatch(t *testing.T) {
	st, err := jsonl.Open(t.TempDir(), jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := sessionlog.NewHeader("small", 1, "/w")
	w, err := st.Create(t.Context(), h)
	if err != nil {
		t.Fatal(err)
	}
	b := sessionlogtest.NewBuilder(0)
	b.TurnStart(1)
	b.StepStart(1)
	b.Chunk(0, strings.Repeat("x", 200<<10))
	l := sessionlog.New(h)
	s := sessionlog.NewSession(l, w)
	if err := s.Append(t.Context(), b.Take()...); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := l.StoredBytes(); got != 0 {
		t.Errorf("a 200 KiB batch: the log reads %d bytes from views, want 0", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
