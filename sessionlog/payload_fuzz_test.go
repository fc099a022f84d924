package sessionlog_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// FuzzPayloadRoundTrip checks decode → encode → decode for payloads: when
// data (compacted, as DecodeEvent stores it) decodes as the payload of typ,
// its encoding is compact valid JSON that decodes again and encodes to
// itself: the canonical form is a fixed point. Seeds live in
// testdata/fuzz/FuzzPayloadRoundTrip; every event of the conformance corpus
// is added when it is present.
func FuzzPayloadRoundTrip(f *testing.F) {
	if dir, ok := corpustest.Lookup(); ok {
		files, _ := filepath.Glob(filepath.Join(dir, "*", "session*.jsonl"))
		for _, p := range files {
			d, err := jsonl.ReadFile(p)
			if err != nil {
				continue
			}
			for _, e := range d.Events {
				f.Add(e.Type, []byte(e.Data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		var buf bytes.Buffer
		if json.Compact(&buf, data) != nil {
			return
		}
		e := sessionlog.Event{Type: typ, Data: buf.Bytes()}
		once, ok, err := sessionlog.ReencodePayload(&e)
		if !ok || err != nil {
			return
		}
		if !json.Valid(once) || !sessionlog.IsCompact(once) {
			t.Fatalf("%s %s encodes as invalid or spaced JSON: %s", typ, e.Data, once)
		}
		e2 := sessionlog.Event{Type: typ, Data: once}
		twice, _, err := sessionlog.ReencodePayload(&e2)
		if err != nil {
			t.Fatalf("%s %s encodes as %s, which does not decode: %v", typ, e.Data, once, err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("%s %s is not stable:\nonce  %s\ntwice %s", typ, e.Data, once, twice)
		}
	})
}
