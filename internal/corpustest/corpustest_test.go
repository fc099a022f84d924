package corpustest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a tb that records what the rule did instead of stopping.
type recorder struct{ skipped, failed []string }

func (*recorder) Helper()             {}
func (r *recorder) Skip(args ...any)  { r.skipped = append(r.skipped, fmt.Sprint(args...)) }
func (r *recorder) Fatal(args ...any) { r.failed = append(r.failed, fmt.Sprint(args...)) }

// module makes a module root, tmp/main with a go.mod and a package folder
// main/a/b, and returns tmp and the package folder. tmp/shared is absent.
func module(t *testing.T) (tmp, pkg string) {
	t.Helper()
	tmp = t.TempDir()
	pkg = filepath.Join(tmp, "main", "a", "b")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "main", "go.mod"), []byte("module m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tmp, pkg
}

const (
	wantPath = "../../../shared/corpus/dsh-acp-snapshots"
	wantLine = "corpus not found at " + wantPath + " (clone the shared corpus beside the repo)"
)

// TestMissing is the rule: an absent corpus skips with one line naming it,
// and under CI=true fails with the same line.
func TestMissing(t *testing.T) {
	_, pkg := module(t)
	for _, ci := range []bool{false, true} {
		t.Run(fmt.Sprintf("ci=%v", ci), func(t *testing.T) {
			var r recorder
			if got := dir(&r, pkg, ci); got != "" {
				t.Errorf("dir = %q for a missing corpus", got)
			}
			want, stop, other := wantLine+"; skipping", r.skipped, r.failed
			if ci {
				want, stop, other = wantLine+"; failing because CI=true", r.failed, r.skipped
			}
			if len(stop) != 1 || stop[0] != want || len(other) != 0 {
				t.Errorf("skipped %q, failed %q; want only %q", r.skipped, r.failed, want)
			}
			// Files stops the same way, before it globs anything.
			r = recorder{}
			if got := files(&r, pkg, ci, "*/session*.jsonl"); got != nil {
				t.Errorf("files = %q for a missing corpus", got)
			}
			if len(r.skipped)+len(r.failed) != 1 || !strings.HasPrefix(strings.Join(append(r.skipped, r.failed...), ""), wantLine) {
				t.Errorf("files: skipped %q, failed %q; want one %q", r.skipped, r.failed, wantLine)
			}
		})
	}
}

// TestPresent: a present corpus is returned relative to the package, and a
// corpus in which a pattern matches nothing fails even outside CI.
func TestPresent(t *testing.T) {
	tmp, pkg := module(t)
	corpus := filepath.Join(tmp, "shared", "corpus", "dsh-acp-snapshots")
	if err := os.MkdirAll(filepath.Join(corpus, "s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	var r recorder
	if got := dir(&r, pkg, false); got != wantPath || len(r.skipped)+len(r.failed) != 0 {
		t.Errorf("dir = %q (skipped %q, failed %q), want %q", got, r.skipped, r.failed, wantPath)
	}
	if got := files(&r, pkg, false, "*/session*.jsonl"); got != nil || len(r.failed) != 1 || len(r.skipped) != 0 ||
		!strings.Contains(r.failed[0], "holds no */session*.jsonl") {
		t.Errorf("files in an empty corpus = %q (skipped %q, failed %q), want one failure", got, r.skipped, r.failed)
	}
	log := filepath.Join(corpus, "s1", "session.jsonl")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r = recorder{}
	want := filepath.Join(wantPath, "s1", "session.jsonl")
	if got := files(&r, pkg, true, "*/session*.jsonl"); len(got) != 1 || got[0] != want || len(r.skipped)+len(r.failed) != 0 {
		t.Errorf("files = %q (skipped %q, failed %q), want [%s]", got, r.skipped, r.failed, want)
	}
}

// TestNoModule: outside a module the search fails, CI or not.
func TestNoModule(t *testing.T) {
	var r recorder
	dir(&r, t.TempDir(), false)
	if len(r.failed) != 1 || !strings.Contains(r.failed[0], "no go.mod") || len(r.skipped) != 0 {
		t.Errorf("skipped %q, failed %q; want one failure naming go.mod", r.skipped, r.failed)
	}
}

// childEnv names the test TestChild runs as when set.
const childEnv = "CORPUSTEST_CHILD"

// TestChild calls Dir for real; it runs only as a child of TestRule, in a
// module with no corpus.
func TestChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs only as a child of TestRule")
	}
	d := Dir(t)
	t.Errorf("Dir returned %q for a missing corpus", d)
}

// TestRule runs Dir in a real test, with the environment's CI variable:
// the child test skips, or fails under CI=true, with the line.
func TestRule(t *testing.T) {
	_, pkg := module(t)
	for _, ci := range []string{"", "false", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.v")
			cmd.Dir = pkg
			cmd.Env = append(os.Environ(), childEnv+"=1", "CI="+ci)
			out, err := cmd.CombinedOutput()
			verdict, line := "--- SKIP: TestChild", wantLine+"; skipping"
			if ci == "true" {
				verdict, line = "--- FAIL: TestChild", wantLine+"; failing because CI=true"
				if err == nil {
					t.Errorf("the child passed under CI=true:\n%s", out)
				}
			} else if err != nil {
				t.Errorf("the child failed (%v):\n%s", err, out)
			}
			if !strings.Contains(string(out), verdict) || !strings.Contains(string(out), line) ||
				strings.Contains(string(out), "Dir returned") {
				t.Errorf("child output lacks %q and %q:\n%s", verdict, line, out)
			}
		})
	}
}

// TestLookup: this repository's own corpus is found, or reported absent,
// without stopping the test.
func TestLookup(t *testing.T) {
	d, ok := Lookup()
	if d == "" || !strings.HasSuffix(d, filepath.Join("shared", "corpus", "dsh-acp-snapshots")) {
		t.Errorf("Lookup = %q, %v", d, ok)
	}
	if _, err := os.Stat(d); (err == nil) != ok {
		t.Errorf("Lookup = %q, %v, but stat says %v", d, ok, err)
	}
}
