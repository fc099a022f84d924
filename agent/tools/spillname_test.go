package tools

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSpillNames: in a session's spill dir the files are numbered from 1
// (so a replay names them as the recording did); a name that exists —
// even as a link planted to a file elsewhere — is skipped, never opened.
func TestSpillNames(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := &Env{Cwd: t.TempDir(), SpillDir: dir}
	p1, err := env.spill("bash", "one\n")
	if err != nil || p1 != filepath.Join(dir, "bash-1.txt") {
		t.Fatalf("first spill %q, %v; want %s", p1, err, filepath.Join(dir, "bash-1.txt"))
	}
	if err := os.Symlink(outside, filepath.Join(dir, "bash-2.txt")); err != nil {
		t.Fatal(err)
	}
	p3, err := env.spill("bash", "three\n")
	if err != nil || p3 != filepath.Join(dir, "bash-3.txt") {
		t.Fatalf("spill past a planted link %q, %v; want bash-3.txt", p3, err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
		t.Fatalf("the planted link's target was written: %q", b)
	}
	// Without a SpillDir (the shared temp dir) names stay random.
	tmp := &Env{Cwd: t.TempDir()}
	p, err := tmp.spill("bash", "x\n")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(p)
	if filepath.Base(p) == "bash-1.txt" {
		t.Errorf("a spill in the shared temp dir got the predictable name %s", p)
	}
}
