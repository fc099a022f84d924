package jsonl

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
)

// TestSpillerWritesAppendRecords checks that encoding a batch through a
// spiller, at any limit, writes exactly the bytes AppendRecords returns:
// every corpus log, and a batch with an event whose data is written
// straight from the event (with and without surface members).
func TestSpillerWritesAppendRecords(t *testing.T) {
	big := `{"turn":1,"step":1,"chunk":{"type":"block-end","index":0,"block":{"type":"text","text":"` + strings.Repeat("x", 5000) + `"}}}`
	msg := `{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("y", 3000) + `"}]}}`
	synthetic := []sessionlog.Event{
		{Type: sessionlog.TypeAssistantChunk, Seq: 0, Time: 5, Data: []byte(big)},
		{Type: sessionlog.TypeAssistantMessage, Seq: 1, Time: 6, Data: []byte(msg), SourceEventSeqs: []int{0}, SurfaceOp: sessionlog.AppendOp()},
		{Type: "x/unknown", Seq: 2, Time: 7},
	}
	batches := map[string][]sessionlog.Event{"synthetic": synthetic}
	for _, f := range corpustest.Files(t, filepath.Join("*", "session*.jsonl")) {
		d, err := ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		batches[f] = d.Events
	}
	for name, evs := range batches {
		want := AppendRecords([]byte("prefix\n"), evs)
		for _, limit := range []int{1, 7, 64, 1000, 4096, 1 << 20} {
			var out bytes.Buffer
			sp := &spiller{w: &out, limit: limit}
			rest := appendRecords([]byte("prefix\n"), evs, sp)
			out.Write(rest)
			if sp.err != nil {
				t.Fatal(sp.err)
			}
			if sp.written+int64(len(rest)) != int64(out.Len()) {
				t.Errorf("%s, limit %d: written %d + rest %d, file %d", name, limit, sp.written, len(rest), out.Len())
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("%s, limit %d: spilled output differs from AppendRecords (%d vs %d bytes)", name, limit, out.Len(), len(want))
			}
		}
	}
}
