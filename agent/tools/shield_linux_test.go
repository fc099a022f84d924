package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shieldGuard confines writes to root and keeps ro read-only; it has no
// check by name, so what refuses is the descriptor check alone.
type shieldGuard struct {
	root string
	ro   []string
}

func (g shieldGuard) WriteRoots(string) ([]string, error) { return []string{g.root}, nil }
func (g shieldGuard) ReadOnlyDirs() []string              { return g.ro }

// TestConfinedShieldedDirs: write and edit refuse a file that lies in a
// read-only directory inside the root however the path gets there — "..",
// a symbolic link to the file or to a directory on the way, a new file or
// a new directory in it — in both resolution modes, and change nothing
// there; the rest of the root stays writable.
func TestConfinedShieldedDirs(t *testing.T) {
	for _, rm := range resolveModes() {
		t.Run(rm.name, func(t *testing.T) {
			j := newJail(t)
			git := filepath.Join(j.root, ".git")
			writeFile(t, git, "config", "original config\n")
			writeFile(t, git, "hooks/README", "original hooks\n")
			mkLink(t, ".git/config", filepath.Join(j.root, "cfg"))
			mkLink(t, ".git", filepath.Join(j.root, "gl"))
			mkLink(t, "../.git/hooks", filepath.Join(j.root, "sub", "hk"))
			env := &Env{Cwd: j.root, SpillDir: t.TempDir(), Guard: shieldGuard{root: j.root, ro: []string{git}}}
			before := treeSnapshot(t, git)
			for _, c := range []struct{ tool, path string }{
				{"write", ".git/config"},
				{"write", "sub/../.git/config"},
				{"write", "cfg"},
				{"edit", "cfg"},
				{"write", "gl/config"},
				{"write", "gl/hooks/pre-commit"},
				{"write", "gl/evil/deep/file"},
				{"write", "sub/hk/post-checkout"},
				{"edit", "sub/hk/README"},
			} {
				res := confinedCall(t, env, c.tool, c.path, rm.how)
				if !res.IsError || !strings.Contains(res.Text, ReadOnlyReason) {
					t.Errorf("%s %s: %+v; want a refusal giving the read-only reason", c.tool, c.path, res)
				}
			}
			if after := treeSnapshot(t, git); after != before {
				t.Errorf("ESCAPE: .git changed:\n%s\nwant\n%s", after, before)
			}
			if res := confinedCall(t, env, "write", "sub/ok.txt", rm.how); res.IsError {
				t.Errorf("write sub/ok.txt: %+v; want it written", res)
			}
			if b, _ := os.ReadFile(filepath.Join(j.root, "sub", "ok.txt")); string(b) != "pwn\n" {
				t.Errorf("sub/ok.txt holds %q", b)
			}
		})
	}
}
