package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// protectedNames are the names, at the root of a workspace, that
// workspace-write keeps read-only to confined commands and file tools:
// the git directory (whose config and hooks the user's next git command
// runs, outside any sandbox) and the agents' per-project folders: reel's
// .reel and the .dsh, .agents and .claude folders whose skills reel also
// loads into later sessions (agent/skills), .claude holding Claude Code's
// settings and hooks as well.
var protectedNames = [...]string{".git", ".reel", ".dsh", ".agents", ".claude"}

// Protected returns the paths inside or beside the workspace root that
// workspace-write keeps read-only: root/.git and the agents' folders
// root/.reel, root/.dsh, root/.agents and root/.claude (whether or not
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

// rootGitDir reports whether git would take the directory root itself for
// a git directory: it holds HEAD (of any type or content, to err on the
// safe side) and either objects and refs or a commondir file — the
// signature git's discovery looks for after .git. A workspace with no .git
// that a confined command or file tool turns into one gets, with
// core.worktree in a config beside them, the user's next `git status` to
// run that config's core.fsmonitor outside the sandbox.
func rootGitDir(root string) bool {
	has := func(name string, follow bool) bool {
		var err error
		if follow {
			_, err = os.Stat(filepath.Join(root, name))
		} else {
			_, err = os.Lstat(filepath.Join(root, name))
		}
		return err == nil
	}
	return has("HEAD", false) && (has("objects", true) && has("refs", true) || has("commondir", false))
}

// gitDirNote is why a HEAD that made the workspace root a git directory
// was moved away, for the model and the user.
const gitDirNote = "it made the working directory itself a git directory (HEAD beside objects and refs), whose config git runs outside the sandbox at the user's next git command; the working directory's .git and the agents' folders are read-only in workspace-write and creating a git directory needs an approved escalation"

// moveAside renames p to p.reel-quarantine-XXXXXXXXXXXX (a random suffix;
// never over an existing file) and returns the new name.
func moveAside(p string) (string, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	to := p + ".reel-quarantine-" + hex.EncodeToString(b[:])
	if _, err := os.Lstat(to); err == nil {
		return "", fmt.Errorf("moving %s aside: %s exists", p, to)
	}
	if err := os.Rename(p, to); err != nil {
		return "", fmt.Errorf("moving %s aside: %w", p, err)
	}
	return to, nil
}
