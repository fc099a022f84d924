package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinkDepth bounds how many dangling symbolic links realPath follows.
const maxLinkDepth = 40

// check reports whether e can be used.
func (e *Env) check() error {
	if e == nil {
		return fmt.Errorf("%w: nil Env", ErrEnv)
	}
	if !filepath.IsAbs(e.Cwd) {
		return fmt.Errorf("%w: Cwd %q is not an absolute path", ErrEnv, e.Cwd)
	}
	return nil
}

// abs resolves p against the session cwd and cleans it.
func (e *Env) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(e.Cwd, p)
}

// display renders an absolute path for the model: relative to the cwd when
// inside it, absolute otherwise.
func (e *Env) display(p string) string {
	rel, err := filepath.Rel(e.Cwd, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return rel
}

// guardWrite resolves p to the path the guard must see and asks the guard.
// A non-nil error's message is meant for the model.
func (e *Env) guardWrite(p string) error {
	if e.Guard == nil {
		return nil
	}
	real, err := realPath(p)
	if err != nil {
		return err
	}
	return e.Guard.CheckWrite(real)
}

// realPath returns the clean absolute path p with the symbolic links of its
// existing components resolved (filepath.EvalSymlinks of the deepest
// existing ancestor) and the non-existing rest appended. A dangling link
// among the components is followed to its target, so writing through it is
// judged by where the write would land.
// RealPath resolves p as a write to it would land: symlinks in the deepest
// existing ancestor are resolved, and a symlink among the remaining
// components is followed to its target (up to 40 links). The sandbox's
// write guard and the file tools share it.
func RealPath(p string) (string, error) { return realPath(p) }

func realPath(p string) (string, error) {
	p = filepath.Clean(p)
	for depth := 0; depth <= maxLinkDepth; depth++ {
		dir, rest := p, ""
		var resolved string
		for {
			r, err := filepath.EvalSymlinks(dir)
			if err == nil {
				resolved = r
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				// Nothing exists, not even the root: keep the lexical path.
				return p, nil
			}
			rest = filepath.Join(filepath.Base(dir), rest)
			dir = parent
		}
		if rest == "" {
			return resolved, nil
		}
		first, remaining, _ := strings.Cut(rest, string(filepath.Separator))
		link := filepath.Join(resolved, first)
		fi, err := os.Lstat(link)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return filepath.Join(resolved, rest), nil
		}
		target, err := os.Readlink(link)
		if err != nil {
			return "", fmt.Errorf("cannot resolve symbolic link %s: %w", link, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(resolved, target)
		}
		p = filepath.Join(target, remaining)
	}
	return "", fmt.Errorf("cannot resolve %s: too many levels of symbolic links", p)
}

// readText reads a file through the FS hook or from disk.
func (e *Env) readText(ctx context.Context, p string) (string, error) {
	if e.FS != nil {
		return e.FS.ReadTextFile(ctx, p)
	}
	b, err := os.ReadFile(p)
	return string(b), err
}

// readExisting returns the current content of p, or nil when p does not
// exist.
func (e *Env) readExisting(ctx context.Context, p string) (*string, error) {
	s, err := e.readText(ctx, p)
	if err == nil {
		return &s, nil
	}
	if e.FS == nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	// The editor's error does not say why; ask the disk.
	if _, serr := os.Stat(p); errors.Is(serr, fs.ErrNotExist) {
		return nil, nil
	}
	return nil, err
}

// writeText writes a file through the FS hook or to disk, creating parent
// directories on disk first.
func (e *Env) writeText(ctx context.Context, p, content string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if e.FS != nil {
		return e.FS.WriteTextFile(ctx, p, content)
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// statFailure explains, for the model, why p cannot be used as a file.
// It returns "" when p is a regular file (or something readable like one).
func statFailure(p string) string {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "file not found: " + p
	case err != nil:
		return fmt.Sprintf("cannot access %s: %v", p, unwrapPathError(err))
	case fi.IsDir():
		return p + " is a directory, not a file"
	}
	return ""
}

// unwrapPathError drops the operation and path a *fs.PathError repeats.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
