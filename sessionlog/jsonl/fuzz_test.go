package jsonl_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// FuzzDecode checks the round trip decode → encode → decode: whenever a
// first decode succeeds without a torn tail, the canonical encoding must
// decode to the same header and events, and encode to itself again.
// Seeds live in testdata/fuzz/FuzzDecode; the conformance corpus is added
// when it is present.
func FuzzDecode(f *testing.F) {
	var files []string
	if dir, ok := corpustest.Lookup(); ok {
		files, _ = filepath.Glob(filepath.Join(dir, "*", "session*.jsonl"))
	}
	for _, p := range files {
		if raw, err := os.ReadFile(p); err == nil {
			f.Add(raw)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := jsonl.Decode(bytes.NewReader(data), "fuzz")
		if err != nil || d.Torn != nil {
			return
		}
		var enc bytes.Buffer
		if err := jsonl.Encode(&enc, d.Header, d.Events); err != nil {
			t.Fatal(err)
		}
		d2, err := jsonl.Decode(bytes.NewReader(enc.Bytes()), "re-encoded")
		if err != nil {
			t.Fatalf("re-encoded log does not decode: %v\n%s", err, enc.Bytes())
		}
		if d2.Torn != nil {
			t.Fatalf("re-encoded log has a torn tail: %+v\n%s", d2.Torn, enc.Bytes())
		}
		if !bytes.Equal(d.Header.Raw, d2.Header.Raw) || d.Header.ID != d2.Header.ID || d.Header.CreatedAt != d2.Header.CreatedAt {
			t.Fatalf("header changed: %s → %s", d.Header.Raw, d2.Header.Raw)
		}
		if len(d.Events) != len(d2.Events) {
			t.Fatalf("%d events became %d", len(d.Events), len(d2.Events))
		}
		for i := range d.Events {
			a, b := d.Events[i].AppendJSON(nil), d2.Events[i].AppendJSON(nil)
			if !bytes.Equal(a, b) {
				t.Fatalf("event %d changed:\n%s\n%s", i, a, b)
			}
		}
		var again bytes.Buffer
		if err := jsonl.Encode(&again, d2.Header, d2.Events); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), enc.Bytes()) {
			t.Fatalf("canonical encoding is not stable:\n%s\n%s", enc.Bytes(), again.Bytes())
		}
	})
}
