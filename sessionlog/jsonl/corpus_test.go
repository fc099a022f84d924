package jsonl_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// corpusLogs finds every session*.jsonl of the conformance corpus; see
// corpustest for what a missing corpus does.
func corpusLogs(t *testing.T) []string {
	t.Helper()
	return corpustest.Files(t, filepath.Join("*", "session*.jsonl"))
}

func TestCorpusRoundTrip(t *testing.T) {
	for _, f := range corpusLogs(t) {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d, err := jsonl.Decode(bytes.NewReader(raw), f)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if d.Torn != nil {
				t.Fatalf("unexpected torn tail: %+v", d.Torn)
			}
			if _, err := sessionlog.Seed(d.Header, d.Events); err != nil {
				t.Fatalf("validate: line %d: %v", lineOf(d, err), err)
			}
			var out bytes.Buffer
			if err := jsonl.Encode(&out, d.Header, d.Events); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), raw) {
				a, b := firstDiffLine(raw, out.Bytes())
				t.Fatalf("re-encode differs:\nwant %s\ngot  %s", a, b)
			}
		})
	}
}

func lineOf(d *jsonl.Decoded, err error) int {
	var ee *sessionlog.EventError
	if errorsAs(err, &ee) {
		return d.LineOf(ee.Seq)
	}
	return 0
}

func firstDiffLine(a, b []byte) ([]byte, []byte) {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range la {
		if i >= len(lb) || !bytes.Equal(la[i], lb[i]) {
			if i >= len(lb) {
				return la[i], nil
			}
			return la[i], lb[i]
		}
	}
	return nil, nil
}
