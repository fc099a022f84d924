package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// maxFileBytes caps the current content write and edit read from a file
// they are about to replace: a larger file is refused, not read.
const maxFileBytes = 16 << 20

// maxLinks bounds the symbolic links one confined open follows, as the
// kernel's own limit does.
const maxLinks = 40

// resolveMode selects how a confined open resolves its path beneath the
// root. Run always uses resolveAuto; tests pass resolveWalk to exercise the
// fallback on kernels that have openat2.
type resolveMode int

const (
	// resolveAuto uses openat2 (RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS)
	// and walks the path itself only where the kernel lacks openat2.
	resolveAuto resolveMode = iota
	// resolveWalk always walks the path itself, one component at a time.
	resolveWalk
)

// refusal is a confined write refused because the path, as the kernel
// resolves it, would leave the root or reach a shared file. Its reason is
// worded for the model by [Env.refuse].
type refusal struct{ reason string }

// Error implements error.
func (r *refusal) Error() string { return "refused: " + r.reason }

// changeFunc computes the new content of a file from its current content
// (nil when write is creating it) and what was opened. An error's message
// is meant for the model and the file is left unchanged.
type changeFunc func(old *string, cur opened) (string, error)

// opened describes the file a confined rewrite opened, for the
// read-before-edit checks: whether the open created it, and its version
// on the descriptor.
type opened struct {
	created bool
	version FileVersion
}

// notFoundError is a confined open of a file (or parent) that does not
// exist, without create.
type notFoundError struct{ p string }

// Error says the file was not found.
func (e *notFoundError) Error() string { return "file not found: " + e.p + " (use write to create it)" }

// Is makes the error match fs.ErrNotExist.
func (e *notFoundError) Is(target error) bool { return target == fs.ErrNotExist }

// rewriteConfined replaces the content of the clean absolute path p with
// change's result, confined beneath one of roots: p is matched lexically
// against each root (as given, and with its symbolic links resolved), then
// resolved and opened beneath that root's directory in one step, and the old
// content is read and the new one written through that descriptor. create
// allows creating the file and its missing parent directories. It returns
// the old content (nil for a new file), the new one and the file's version
// after the write. An error's message is meant for the model and names p;
// a file (or parent) that does not exist, without create, is a
// *notFoundError.
func (e *Env) rewriteConfined(p string, roots []string, create bool, how resolveMode, change changeFunc) (*string, string, FileVersion, error) {
	root, rel, ok := beneathRoots(p, roots)
	if !ok {
		return nil, "", FileVersion{}, e.refuse(p, "it is beneath none of the writable roots "+strings.Join(roots, ", "))
	}
	var ro []string
	if s, ok := e.Guard.(Shield); ok {
		for _, d := range s.ReadOnlyDirs() {
			ro = append(ro, resolvedDir(d))
		}
	}
	check := func() error { return nil }
	if s, ok := e.Guard.(Sentry); ok {
		check = s.Watch(p)
	}
	old, updated, after, err := rewriteBeneath(p, root, rel, create, how, ro, change)
	if r, ok := errors.AsType[*refusal](err); ok {
		return nil, "", FileVersion{}, e.refuse(p, r.reason)
	}
	if cerr := check(); cerr != nil {
		return nil, "", FileVersion{}, cerr
	}
	return old, updated, after, err
}

// resolvedDir returns the absolute path d with its symbolic links
// resolved as far as it exists (the rest joined on as named).
func resolvedDir(d string) string {
	for p, rest := filepath.Clean(d), ""; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(d)
		}
		rest, p = filepath.Join(filepath.Base(p), rest), parent
	}
}

// beneathRoots returns the first of roots that the clean absolute path p
// lies lexically beneath, and p relative to it ("." for the root itself).
// Each root is tried as given and with its symbolic links resolved: roots
// are trusted, p is not, so p itself is never resolved here.
func beneathRoots(p string, roots []string) (root, rel string, ok bool) {
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			continue
		}
		forms := []string{filepath.Clean(r)}
		if real, err := filepath.EvalSymlinks(r); err == nil && real != forms[0] {
			forms = append(forms, real)
		}
		for _, f := range forms {
			if rel, ok := lexicallyBeneath(p, f); ok {
				return forms[0], rel, true
			}
		}
	}
	return "", "", false
}

// lexicallyBeneath reports whether the clean absolute path p is dir or lies
// beneath it, comparing names only, and returns p relative to dir.
func lexicallyBeneath(p, dir string) (string, bool) {
	switch {
	case p == dir:
		return ".", true
	case dir == string(filepath.Separator):
		return p[1:], true
	case strings.HasPrefix(p, dir+string(filepath.Separator)):
		return p[len(dir)+1:], true
	}
	return "", false
}

// tooLarge is the failure for a file over maxFileBytes.
func tooLarge(p string, size int64) error {
	return fmt.Errorf("%s is too large to rewrite (%d bytes; write and edit refuse files over %d MiB)", p, size, maxFileBytes>>20)
}
