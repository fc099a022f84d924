package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reel-agent/reel/agent/tools"
)

// guard is the in-process write confinement of one mode and root: it names
// the directories the file tools must open beneath, and words their
// refusals with the denial marker.
type guard struct {
	mode      Mode
	root, tmp string
}

// WriteRoots implements tools.Guard: in workspace-write the root and its
// temp dir, provided path lies lexically beneath one of them (each as given
// or with its symbolic links resolved; path itself is not resolved, the
// tools open it beneath the root); in danger-full-access none (unconfined);
// read-only and unknown modes refuse every write.
func (g *guard) WriteRoots(path string) ([]string, error) {
	marker := Marker(g.mode)
	switch g.mode {
	case DangerFullAccess:
		return nil, nil
	case ReadOnly:
		return nil, fmt.Errorf("%s write to %s is not allowed: this mode permits no writes", marker, path)
	case WorkspaceWrite:
	default:
		return nil, fmt.Errorf("%s write to %s refused: unknown sandbox mode", marker, path)
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.root, p)
	}
	p = filepath.Clean(p)
	roots := []string{g.root}
	if g.tmp != "" && g.tmp != g.root {
		roots = append(roots, g.tmp)
	}
	for _, d := range Protected(g.root) {
		if beneath(p, d) {
			return nil, g.Refuse(path, "it lies in "+d+": "+tools.ReadOnlyReason)
		}
	}
	for _, r := range roots {
		if beneath(p, r) {
			return roots, nil
		}
	}
	return nil, fmt.Errorf("%s write to %s is outside the writable roots %s", marker, path, strings.Join(roots, " and "))
}

// ReadOnlyDirs implements tools.Shield: in workspace-write the
// [Protected] paths of the root, which the file tools must not write even
// when a symbolic link leads there.
func (g *guard) ReadOnlyDirs() []string {
	if g.mode != WorkspaceWrite {
		return nil
	}
	return Protected(g.root)
}

// Watch implements tools.Sentry: in workspace-write, when the write to
// path turns the root, which was not one, into a git directory
// (rootGitDir), the root's HEAD is moved away and the write is refused
// saying so.
func (g *guard) Watch(path string) func() error {
	if g.mode != WorkspaceWrite || rootGitDir(g.root) {
		return func() error { return nil }
	}
	return func() error {
		if !rootGitDir(g.root) {
			return nil
		}
		head := filepath.Join(g.root, "HEAD")
		to, err := moveAside(head)
		if err != nil {
			return g.Refuse(path, fmt.Sprintf("%s; and %v: do not run git there before checking it", gitDirNote, err))
		}
		return g.Refuse(path, fmt.Sprintf("%s; %s was moved to %s", gitDirNote, head, to))
	}
}

// Refuse implements tools.Refuser: a refusal the tools found while opening
// beneath the roots, marked like every denial.
func (g *guard) Refuse(path, reason string) error {
	return fmt.Errorf("%s write to %s refused: %s", Marker(g.mode), path, reason)
}

// beneath reports whether the clean absolute path p is the directory dir or
// lies beneath it by name, with dir taken as given or with its symbolic
// links resolved (dir is trusted).
func beneath(p, dir string) bool {
	if within(p, filepath.Clean(dir)) {
		return true
	}
	real, err := filepath.EvalSymlinks(dir)
	return err == nil && within(p, real)
}

// within reports whether the clean absolute path p is dir or beneath it.
func within(p, dir string) bool {
	return dir == "/" || p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
