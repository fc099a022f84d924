package harness

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunDirKeepsRecordedLength: a run dir under any scratch root has the
// path length a recording under /tmp had (paths reach the model, and what
// fits beside a spill notice depends on their length).
func TestRunDirKeepsRecordedLength(t *testing.T) {
	want := len(filepath.Join(recordedTempDir, "reel-snap-bash-spill-")) + runDirSuffix
	// Roots relative to a fresh cwd, so their lengths are the test's.
	t.Chdir(t.TempDir())
	for _, dir := range []string{"ab", "abcdefg", "abcdefghijkl"} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, root string }{
		{"the recorded root", recordedTempDir},
		{"a shorter root", "ab"},
		{"a longer root (odd digit count)", "abcdefg"},
		{"a longer root, trailing slash", "abcdefghijkl/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := runDir(tc.root, "bash-spill")
			if err != nil {
				t.Fatal(err)
			}
			defer os.Remove(dir)
			if len(dir) != want {
				t.Errorf("runDir(%q) = %q: %d bytes, want %d (as under %s)", tc.root, dir, len(dir), want, recordedTempDir)
			}
		})
	}
}
