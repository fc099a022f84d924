package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Limits bound what one capture may store.
type Limits struct {
	// MaxFile is the largest file (bytes, by lstat) a capture stores; a
	// larger one is left out and named in the Snapshot.
	MaxFile int64
	// MaxTotal is the most bytes one capture may add up to; above it the
	// capture is skipped.
	MaxTotal int64
	// MaxFiles is the most files one capture may hold; above it the
	// capture is skipped.
	MaxFiles int
}

// packFiles is the number of files above which a capture packs the blobs
// it adds: core.bigFileThreshold=1 makes `git add` stream every new blob
// into one pack (git's bulk check-in) instead of writing one loose object
// file per blob. A loose object takes a file system block (4 KiB) and an
// inode however small it is, so a capture of 100,000 small files took
// 430 MiB on disk in 100,000 files; packed it takes 16 MiB in about a
// hundred. Below it the loose objects (at most 4 MiB) are cheaper to write
// than a pack and its index every turn (at most 16 MiB). The store never diffs contents,
// the one other thing the setting changes.
const packFiles = 4096

// DefaultLimits are the limits reel uses.
var DefaultLimits = Limits{MaxFile: 16 << 20, MaxTotal: 512 << 20, MaxFiles: 200000}

// Store is a shadow git repository of one workspace.
type Store struct {
	dir, root string
	limits    Limits
	// hold, when positive, stops a restore for good after that many
	// files (a debug aid: a test kills the process there).
	hold int
}

// HoldAfter makes every restore stop for good after n files (n > 0), so a
// test can kill the process in the middle of a restore.
func (s *Store) HoldAfter(n int) { s.hold = n }

// Open returns the store in dir (created on first Capture) of the
// workspace root.
func Open(dir, root string, limits Limits) *Store {
	return &Store{dir: dir, root: root, limits: limits}
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Snapshot is one capture.
type Snapshot struct {
	// Tree is the git tree id ("" when the capture was skipped).
	Tree string
	// Files and Bytes count what the tree holds.
	Files int
	Bytes int64
	// Left lists the files left out for their size.
	Left []string
	// Skipped says why the capture was skipped ("" when it was not).
	Skipped string
}

// git runs git on the store with the workspace as work tree, isolated
// from the user's and the system's configuration and hooks.
func (s *Store) git(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	base := []string{"--git-dir=" + s.dir, "--work-tree=" + s.root,
		"-c", "core.autocrlf=false", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
		"-c", "core.quotepath=off", "-c", "core.symlinks=true", "-c", "gc.auto=0", "-c", "core.untrackedCache=true"}
	cmd := exec.CommandContext(ctx, "git", append(base, args...)...)
	cmd.Dir = s.root
	cmd.Env = append(gitEnv(), "GIT_INDEX_FILE="+filepath.Join(s.dir, "index"), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		name := args[0]
		if name == "-c" && len(args) > 2 {
			name = args[2]
		}
		return out, fmt.Errorf("checkpoint store %s: git %s: %w: %s", s.dir, name, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// init makes the shadow repository when it does not exist.
func (s *Store) init(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(s.dir, "HEAD")); err == nil {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("checkpoint store %s: %w", s.dir, err)
	}
	cmd := exec.CommandContext(ctx, "git", "init", "-q", "--bare", s.dir)
	cmd.Env = gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("checkpoint store %s: git init: %w: %s", s.dir, err, out)
	}
	return nil
}

// Capture stores the workspace's files (tracked and untracked, the
// ignored ones left out) and returns the snapshot.
func (s *Store) Capture(ctx context.Context) (Snapshot, error) {
	if err := s.init(ctx); err != nil {
		return Snapshot{}, err
	}
	// Every candidate, by name only (no content is read here).
	out, err := s.git(ctx, nil, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return Snapshot{}, err
	}
	var snap Snapshot
	var left []string
	seen := map[string]bool{}
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		fi, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(name)))
		if err != nil {
			continue // gone since: git add -A drops it
		}
		if fi.Mode().IsRegular() && fi.Size() > s.limits.MaxFile {
			left = append(left, name)
			continue
		}
		snap.Files++
		snap.Bytes += fi.Size()
	}
	switch {
	case s.limits.MaxFiles > 0 && snap.Files > s.limits.MaxFiles:
		return Snapshot{Files: snap.Files, Bytes: snap.Bytes, Skipped: fmt.Sprintf("the workspace holds %d files, more than the checkpoint limit of %d", snap.Files, s.limits.MaxFiles)}, nil
	case snap.Bytes > s.limits.MaxTotal:
		return Snapshot{Files: snap.Files, Bytes: snap.Bytes, Skipped: fmt.Sprintf("the workspace holds %d bytes, more than the checkpoint limit of %d", snap.Bytes, s.limits.MaxTotal)}, nil
	}
	sort.Strings(left)
	snap.Left = left
	var spec bytes.Buffer
	for _, n := range left {
		spec.WriteString(n)
		spec.WriteByte(0)
	}
	if len(left) > 0 {
		// A file stored while small and large now leaves the index too.
		if _, err := s.git(ctx, spec.Bytes(), "--literal-pathspecs", "rm", "-q", "--cached", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
			return Snapshot{}, err
		}
		var ex bytes.Buffer
		ex.WriteString(".\x00")
		for _, n := range left {
			ex.WriteString(":(exclude,literal)" + n)
			ex.WriteByte(0)
		}
		spec = ex
	} else {
		spec.WriteString(".\x00")
	}
	add := []string{"add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"}
	if snap.Files > packFiles {
		add = append([]string{"-c", "core.bigFileThreshold=1"}, add...)
	}
	if _, err := s.git(ctx, spec.Bytes(), add...); err != nil {
		return Snapshot{}, err
	}
	tree, err := s.git(ctx, nil, "write-tree")
	if err != nil {
		return Snapshot{}, err
	}
	snap.Tree = strings.TrimSpace(string(tree))
	return snap, nil
}

// Change is one file that differs between two trees.
type Change struct {
	// Path is slash separated, relative to the workspace.
	Path string
	// Mode and Blob are the file in the target tree ("" when the target
	// has no such file: the restore removes it).
	Mode, Blob string
}

// Diff lists the files that differ from tree from to tree to, with what
// to holds.
func (s *Store) Diff(ctx context.Context, from, to string) ([]Change, error) {
	out, err := s.git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--raw", from, to)
	if err != nil {
		return nil, err
	}
	// Records: ":<srcmode> <dstmode> <srcsha> <dstsha> <status>\0<path>\0".
	f := strings.Split(string(out), "\x00")
	var cs []Change
	for i := 0; i+1 < len(f); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) < 5 {
			return nil, fmt.Errorf("checkpoint store %s: unexpected diff record %q", s.dir, f[i])
		}
		c := Change{Path: f[i+1]}
		if meta[4] != "D" {
			c.Mode, c.Blob = meta[1], meta[3]
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// Paths returns the paths of cs.
func Paths(cs []Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}

// blob reads a stored blob.
func (s *Store) blob(ctx context.Context, id string) ([]byte, error) {
	return s.git(ctx, nil, "cat-file", "blob", id)
}

// errNotStore is returned for a store directory that is not one.
var errNotStore = errors.New("not a checkpoint store")

// Exists reports whether the store holds tree.
func (s *Store) Exists(ctx context.Context, tree string) error {
	if _, err := os.Stat(filepath.Join(s.dir, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", s.dir, errNotStore)
	}
	_, err := s.git(ctx, nil, "cat-file", "-e", tree+"^{tree}")
	return err
}

// gitEnv is the environment without any GIT_ variable (the user's
// repository must never be the one driven), with no system or global
// configuration.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}
