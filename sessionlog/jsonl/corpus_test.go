package jsonl_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// corpusLogs finds every session*.jsonl of the conformance corpus. Under
// CI=true a missing corpus fails the test instead of skipping it.
func corpusLogs(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..", "..", "shared", "corpus")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*", "session*.jsonl"))
	if len(files) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("conformance corpus missing at %s (CI=true requires ../shared beside the repo)", root)
		}
		t.Skipf("CORPUS MISSING at %s: conformance tests not run", root)
	}
	return files
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
