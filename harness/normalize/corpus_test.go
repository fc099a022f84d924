package normalize

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
)

// corpusDir is the conformance corpus, ../shared/corpus/dsh-acp-snapshots
// beside the repository root; see corpustest for what a missing one does.
func corpusDir(t *testing.T) string {
	t.Helper()
	return corpustest.Dir(t)
}

// TestCorpus normalizes every recorded transcript and session log of the
// corpus, one Normalizer per scenario as in a run, and checks the result.
func TestCorpus(t *testing.T) {
	root := corpusDir(t)
	dirs, err := filepath.Glob(filepath.Join(root, "*", "input.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatalf("no scenarios under %s", root)
	}
	for _, in := range dirs {
		dir := filepath.Dir(in)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
			n := New(Options{Cwd: "/tmp/unused-cwd"})
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				out, err := n.Transcript(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				checkNormalized(t, filepath.Base(f), data, out)
				again, err := New(Options{Cwd: "/tmp/unused-cwd"}).Transcript(bytes.NewReader(out))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(again, out) {
					t.Errorf("%s: normalizing twice changes the output", filepath.Base(f))
				}
			}
		})
	}
}

func checkNormalized(t *testing.T, name string, in, out []byte) {
	t.Helper()
	inLines := bytes.SplitAfter(in, []byte("\n"))
	outLines := bytes.SplitAfter(out, []byte("\n"))
	if len(inLines) != len(outLines) {
		t.Fatalf("%s: %d lines became %d", name, len(inLines), len(outLines))
	}
	for i := range inLines {
		if len(bytes.TrimSpace(inLines[i])) == 0 {
			continue
		}
		var before, after any
		if json.Unmarshal(inLines[i], &before) != nil {
			continue
		}
		if err := json.Unmarshal(outLines[i], &after); err != nil {
			t.Fatalf("%s:%d: output is not JSON: %v\n%s", name, i+1, err, outLines[i])
		}
		if !bytes.HasSuffix(outLines[i], []byte("\n")) && bytes.HasSuffix(inLines[i], []byte("\n")) {
			t.Errorf("%s:%d: newline lost", name, i+1)
		}
		if compact := compactJSON(t, outLines[i]); !bytes.Equal(compact, bytes.TrimSuffix(outLines[i], []byte("\n"))) {
			t.Errorf("%s:%d: output is not compact", name, i+1)
		}
		checkValue(t, name, i+1, "", before, after)
	}
}

func compactJSON(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkValue walks the decoded line before and after normalization.
func checkValue(t *testing.T, name string, line int, key string, before, after any) {
	t.Helper()
	switch b := before.(type) {
	case map[string]any:
		a := after.(map[string]any)
		for k, v := range b {
			checkValue(t, name, line, k, v, a[k])
		}
	case []any:
		a := after.([]any)
		for i := range b {
			checkValue(t, name, line, key, b[i], a[i])
		}
	case string:
		a, _ := after.(string)
		if isUUID(a) && (key == "id" || key == "sessionId" || key == "parentSession" || key == "senderSessionId") {
			t.Errorf("%s:%d: %s still holds UUID %s", name, line, key, a)
		}
	case float64:
		switch key {
		case "seq", "seq0", "turn", "step", "index", "version":
			if after != b {
				t.Errorf("%s:%d: %s changed from %v to %v", name, line, key, b, after)
			}
		case "time", "time0", "createdAt", "dt":
			if after != 0.0 {
				t.Errorf("%s:%d: %s is %v, want 0", name, line, key, after)
			}
		}
	}
}
