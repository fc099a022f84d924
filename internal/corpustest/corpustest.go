// Package corpustest locates the dsh conformance corpus for tests.
//
// The corpus is not part of the repository: it is a separate checkout,
// shared/corpus beside the module root (../shared/corpus from the directory
// holding go.mod). Every test that reads it follows one rule:
//
//   - when the corpus is absent, the test is skipped with one line naming the
//     missing path, such as
//     "corpus not found at ../../shared/corpus/dsh-acp-snapshots (clone the
//     shared corpus beside the repo); skipping";
//   - under CI=true, where the corpus must be present, the test fails with
//     that same line, ending "; failing because CI=true" instead.
//
// A corpus that is present but holds nothing a test asks for is a broken
// checkout, and fails the test everywhere.
//
// The package imports only the standard library, so a test anywhere in the
// module may use it.
package corpustest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// name is the corpus folder the tests read, under shared/corpus.
const name = "dsh-acp-snapshots"

// hint is what the missing-corpus line tells the reader to do.
const hint = "clone the shared corpus beside the repo"

// Dir returns the corpus folder (shared/corpus/dsh-acp-snapshots beside the
// module root) as a path relative to the working directory. When it is
// absent, Dir skips the test, or fails it under CI=true, with one line naming
// the missing path; see the package documentation.
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("corpustest: %v", err)
		return ""
	}
	return dir(t, wd, onCI())
}

// Files returns the corpus files matching pattern, a filepath.Match pattern
// relative to Dir (for example "*/session*.jsonl"), in lexical order. A
// missing corpus skips or fails the test as Dir does; a present corpus in
// which nothing matches fails it.
func Files(t testing.TB, pattern string) []string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("corpustest: %v", err)
		return nil
	}
	return files(t, wd, onCI(), pattern)
}

// Lookup returns the corpus folder as Dir does, and false instead of
// stopping the test when it is absent: for tests to which the corpus is an
// extra, such as a fuzz target's seeds.
func Lookup() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	rel, present, err := locate(wd)
	return rel, present && err == nil
}

// tb is the part of testing.TB the rule uses, so that its own test can
// watch it.
type tb interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
}

// onCI reports whether the tests run under CI=true.
func onCI() bool { return os.Getenv("CI") == "true" }

// locate finds the corpus for a test running in wd: the nearest ancestor of
// wd holding go.mod is the module root, and the corpus is
// ../shared/corpus/name from it. The path is returned relative to wd, with
// whether it is there; an error means the search itself failed.
func locate(wd string) (rel string, present bool, err error) {
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", false, fmt.Errorf("corpustest: no go.mod in %s or above it", wd)
		}
		root = parent
	}
	abs := filepath.Join(filepath.Dir(root), "shared", "corpus", name)
	rel, err = filepath.Rel(wd, abs)
	if err != nil {
		rel = abs
	}
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return rel, false, nil
	case err != nil:
		return rel, false, fmt.Errorf("corpustest: %w", err)
	case !info.IsDir():
		return rel, false, fmt.Errorf("corpustest: the corpus %s is not a directory", rel)
	}
	return rel, true, nil
}

// missing is the line that names a corpus absent from rel, without the
// verdict ("; skipping" or "; failing because CI=true") the rule appends.
func missing(rel string) string {
	return fmt.Sprintf("corpus not found at %s (%s)", rel, hint)
}

// dir applies the rule for a test running in wd, on CI or not.
func dir(t tb, wd string, ci bool) string {
	t.Helper()
	rel, present, err := locate(wd)
	switch {
	case err != nil:
		t.Fatal(err.Error())
	case present:
		return rel
	case ci:
		t.Fatal(missing(rel) + "; failing because CI=true")
	default:
		t.Skip(missing(rel) + "; skipping")
	}
	return ""
}

// files is Files for a test running in wd, on CI or not.
func files(t tb, wd string, ci bool, pattern string) []string {
	t.Helper()
	d := dir(t, wd, ci)
	if d == "" {
		return nil
	}
	m, err := filepath.Glob(filepath.Join(wd, d, pattern))
	if err != nil {
		t.Fatal(fmt.Sprintf("corpustest: pattern %q: %v", pattern, err))
		return nil
	}
	if len(m) == 0 {
		t.Fatal(fmt.Sprintf("the corpus at %s holds no %s (an incomplete checkout?)", d, pattern))
		return nil
	}
	for i, p := range m {
		if rel, err := filepath.Rel(wd, p); err == nil {
			m[i] = rel
		}
	}
	return m
}
