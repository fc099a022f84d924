package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// ProtectedNames are the names, at the root of a workspace, that
// workspace-write keeps read-only to confined commands and file tools:
// the git directory (whose config and hooks the user's next git command
// runs, outside any sandbox) and reel's per-project folder (its skills are
// loaded into later sessions).
var protectedNames = [...]string{".git", ".reel"}

// Protected returns the paths inside or beside the workspace root that
// workspace-write keeps read-only: root/.git and root/.reel (whether or not
// they exist yet: the file tools refuse to create them), and, when
// root/.git is a file ("gitdir: DIR", a worktree or a submodule), the git
// directory it names and that directory's common directory (named by its
// "commondir" file). Paths are absolute and clean; symbolic links are not
// resolved.
func Protected(root string) []string {
	root = filepath.Clean(root)
	var out []string
	for _, n := range protectedNames {
		out = append(out, filepath.Join(root, n))
	}
	gitFile := filepath.Join(root, ".git")
	if fi, err := os.Lstat(gitFile); err != nil || !fi.Mode().IsRegular() {
		return out
	}
	gitdir := readLinkFile(gitFile, "gitdir:", root)
	if gitdir == "" {
		return out
	}
	out = append(out, gitdir)
	if common := readLinkFile(filepath.Join(gitdir, "commondir"), "", gitdir); common != "" {
		out = append(out, common)
	}
	return out
}

// readLinkFile reads the first line of the small file p, strips prefix
// (when it has it; "" for none) and returns the rest as a clean absolute
// path, relative ones taken from base; "" when there is none.
func readLinkFile(p, prefix, base string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return ""
	}
	line := strings.TrimSpace(sc.Text())
	if prefix != "" {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			return ""
		}
		line = strings.TrimSpace(rest)
	}
	if line == "" {
		return ""
	}
	if !filepath.IsAbs(line) {
		line = filepath.Join(base, line)
	}
	return filepath.Clean(line)
}
