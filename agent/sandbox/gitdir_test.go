package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRootGitDir: which root contents make git take the root itself for a
// git directory (HEAD of any kind beside objects and refs, or beside
// commondir), and the file tools' Watch moving that HEAD away after a
// write that made one, and only then.
func TestRootGitDir(t *testing.T) {
	cases := []struct {
		name  string
		make  func(root string)
		isGit bool
	}{
		{"empty", func(string) {}, false},
		{"objects and refs only", func(r string) { mkdirs(t, r, "objects", "refs") }, false},
		{"HEAD only", func(r string) { writeFile(t, r, "HEAD", "ref: refs/heads/main\n") }, false},
		{"HEAD objects refs", func(r string) {
			mkdirs(t, r, "objects", "refs")
			writeFile(t, r, "HEAD", "ref: refs/heads/main\n")
		}, true},
		{"dangling HEAD link", func(r string) {
			mkdirs(t, r, "objects", "refs")
			if err := os.Symlink("nowhere", filepath.Join(r, "HEAD")); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"HEAD and commondir", func(r string) {
			writeFile(t, r, "HEAD", "0123456789012345678901234567890123456789\n")
			writeFile(t, r, "commondir", "../elsewhere\n")
		}, true},
		{"objects a file", func(r string) {
			mkdirs(t, r, "refs")
			writeFile(t, r, "objects", "")
			writeFile(t, r, "HEAD", "ref: refs/heads/main\n")
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := realTempDir(t)
			g := &guard{mode: WorkspaceWrite, root: root}
			after := g.Watch(filepath.Join(root, "x"))
			c.make(root)
			if got := rootGitDir(root); got != c.isGit {
				t.Fatalf("rootGitDir = %v, want %v", got, c.isGit)
			}
			err := after()
			if (err != nil) != c.isGit {
				t.Fatalf("Watch after the change: %v, want a refusal %v", err, c.isGit)
			}
			if c.isGit {
				if !strings.Contains(err.Error(), Marker(WorkspaceWrite)) || !strings.Contains(err.Error(), "git directory") {
					t.Errorf("refusal %q: want the denial marker and the reason", err)
				}
				if rootGitDir(root) {
					t.Error("the root is still a git directory after Watch moved HEAD away")
				}
			}
			// A root that already was one is left alone (it is the user's).
			if c.isGit {
				c.make(root)
				if err := g.Watch(filepath.Join(root, "x"))(); err != nil {
					t.Errorf("Watch on a root already a git directory: %v", err)
				}
			}
		})
	}
}

// mkdirs makes each directory name under dir.
func mkdirs(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}
