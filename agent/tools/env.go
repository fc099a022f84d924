package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

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

// writeRoots asks the Guard where a write to the clean absolute path p may
// go. No roots and no error: the write is not confined (no Guard, or a
// Guard that confines nothing). A non-nil error's message is meant for the
// model.
func (e *Env) writeRoots(p string) ([]string, error) {
	if e.Guard == nil {
		return nil, nil
	}
	return e.Guard.WriteRoots(p)
}

// refuse words the refusal of a write to p for reason: through the Guard
// when it is a [Refuser], else plainly.
func (e *Env) refuse(p, reason string) error {
	if r, ok := e.Guard.(Refuser); ok {
		if err := r.Refuse(p, reason); err != nil {
			return err
		}
	}
	return fmt.Errorf("write to %s refused: %s", p, reason)
}

// readText reads the current content of a file that write or edit is
// about to replace, through the FS hook or from disk. Either way it is
// bounded: something that is not a regular file on disk (a FIFO, a device)
// is refused without being opened for reading, and a file over
// maxFileBytes is refused, not read.
func (e *Env) readText(ctx context.Context, p string) (string, error) {
	if fi, err := os.Stat(p); err == nil && !fi.Mode().IsRegular() {
		return "", &notRegularError{path: p, mode: fi.Mode().Type()}
	}
	if e.FS != nil {
		s, err := e.FS.ReadTextFile(ctx, p)
		if err == nil && len(s) > maxFileBytes {
			return "", tooLarge(p, int64(len(s)))
		}
		return s, err
	}
	f, err := openRegular(p, false)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if f.size > maxFileBytes {
		return "", tooLarge(p, f.size)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err == nil && len(b) > maxFileBytes {
		return "", tooLarge(p, int64(len(b)))
	}
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
	// O_NONBLOCK: a FIFO swapped in since the read fails instead of
	// waiting for a reader; anything but a regular file is refused.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		if err != nil {
			return err
		}
		return &notRegularError{path: p, mode: fi.Mode().Type()}
	}
	if _, err := f.WriteString(content); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// unwrapPathError drops the operation and path a *fs.PathError repeats.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
