package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/reel-agent/reel/agent/tools"
)

// guard is the in-process write check of one mode and root.
type guard struct {
	mode, root, tmp string
}

// CheckWrite implements tools.Guard.
func (g *guard) CheckWrite(path string) error {
	marker := Marker(g.mode)
	switch g.mode {
	case DangerFullAccess:
		return nil
	case ReadOnly:
		return fmt.Errorf("%s write to %s is not allowed: this mode permits no writes", marker, path)
	case WorkspaceWrite:
	default:
		return fmt.Errorf("%s write to %s refused: unknown sandbox mode", marker, path)
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.root, p)
	}
	real, err := realPath(p)
	if err != nil {
		return fmt.Errorf("%s write to %s refused: %w", marker, path, err)
	}
	root, tmp := resolveDir(g.root), resolveDir(g.tmp)
	if !within(real, root) && !within(real, tmp) {
		where := path
		if real != filepath.Clean(path) {
			where = fmt.Sprintf("%s (resolved: %s)", path, real)
		}
		return fmt.Errorf("%s write to %s is outside the writable roots %s and %s", marker, where, root, tmp)
	}
	if n := hardLinks(real); n > 1 {
		return fmt.Errorf("%s write to %s refused: the file has %d hard links and may be shared with a file outside the writable roots", marker, path, n)
	}
	return nil
}

// resolveDir returns dir with its symbolic links resolved, or dir cleaned
// when that fails.
func resolveDir(dir string) string {
	r, err := realPath(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	return r
}

// within reports whether the clean absolute path p is dir or beneath it.
func within(p, dir string) bool {
	return dir == "/" || p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// hardLinks returns the link count of the regular file p, 0 when p is not
// an existing regular file.
func hardLinks(p string) uint64 {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

// realPath resolves where a write to p would land (shared with the tools).
func realPath(p string) (string, error) { return tools.RealPath(p) }
