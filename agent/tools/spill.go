package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Spill limits.
const (
	// MaxSpillBytes caps one spill file (a long bash output, a background
	// job's output file, a glob or grep listing). Output beyond it is
	// counted but discarded, and the result says so.
	MaxSpillBytes = 8 << 20
	// DefaultSessionSpillBytes is a sensible session cap for
	// [NewSpillBudget].
	DefaultSessionSpillBytes = 256 << 20
)

// SpillBudget caps the total bytes one session's spill files may hold, so
// that a model cannot fill the disk through tool output. Its zero value
// allows nothing; a nil *SpillBudget allows everything. It is safe for
// concurrent use.
type SpillBudget struct {
	mu    sync.Mutex
	limit int64
	used  int64
}

// NewSpillBudget returns a budget of limit bytes.
func NewSpillBudget(limit int64) *SpillBudget { return &SpillBudget{limit: max(limit, 0)} }

// Limit returns the budget's size in bytes.
func (b *SpillBudget) Limit() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// Used returns how many bytes have been spent.
func (b *SpillBudget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// take spends up to n bytes and returns how many were granted. A nil
// budget grants everything.
func (b *SpillBudget) take(n int64) int64 {
	if b == nil {
		return n
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	g := min(n, b.limit-b.used)
	if g < 0 {
		g = 0
	}
	b.used += g
	return g
}

// refund gives back n bytes taken but not written.
func (b *SpillBudget) refund(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// spillDir returns the directory for spill files, creating it.
func (e *Env) spillDir() (string, error) {
	dir := e.SpillDir
	if dir == "" {
		dir = os.TempDir()
	} else if !filepath.IsAbs(dir) {
		dir = e.abs(dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("tools: creating spill directory %s: %w", dir, err)
	}
	return dir, nil
}

// Why a spill file stopped taking bytes.
const (
	spillWhole  = iota // nothing was cut
	spillCap           // MaxSpillBytes reached
	spillBudget        // the session's budget is used up
	spillFailed        // a write failed (ENOSPC, EDQUOT, …)
)

// spillFile writes one spill file with the caps applied: at most
// MaxSpillBytes, within the session's budget, and nothing more after a
// write error. Its Write never fails: what is not kept is counted.
type spillFile struct {
	w      io.Writer // the file, or a test's writer
	name   string
	budget *SpillBudget
	kept   int64 // bytes in the file
	total  int64 // bytes offered
	why    int   // a spill… constant
	err    error // the write error, with why == spillFailed
}

// createSpill creates a spill file named prefix-*suffix in the spill dir.
func (e *Env) createSpill(prefix, suffix string) (*spillFile, *os.File, error) {
	dir, err := e.spillDir()
	if err != nil {
		return nil, nil, err
	}
	f, err := e.openSpill(dir, prefix, suffix)
	if err != nil {
		return nil, nil, fmt.Errorf("tools: creating spill file in %s: %w", dir, err)
	}
	return &spillFile{w: f, name: f.Name(), budget: e.Spill}, f, nil
}

// maxSpillNames bounds the numbered names tried in a session's spill dir.
const maxSpillNames = 100000

// openSpill creates a new spill file in dir. In a session's own SpillDir
// the name is the first free PREFIX-N.SUFFIX (N from 1), so a replayed
// session names its spill files as the recorded one did; O_EXCL never
// opens an existing file or follows a planted link. In the shared temp
// dir (no SpillDir) the name is random, as os.CreateTemp makes it.
func (e *Env) openSpill(dir, prefix, suffix string) (*os.File, error) {
	if e.SpillDir == "" {
		return os.CreateTemp(dir, prefix+"-*"+suffix)
	}
	for n := 1; n <= maxSpillNames; n++ {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%s-%d%s", prefix, n, suffix)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil || !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return os.CreateTemp(dir, prefix+"-*"+suffix)
}

// Write keeps what the caps allow of p and counts the rest.
func (s *spillFile) Write(p []byte) (int, error) {
	s.total += int64(len(p))
	if len(p) == 0 || s.why != spillWhole {
		return len(p), nil
	}
	n := min(int64(len(p)), MaxSpillBytes-s.kept)
	if n <= 0 {
		s.why = spillCap
		return len(p), nil
	}
	g := s.budget.take(n)
	if g > 0 {
		w, err := s.w.Write(p[:g])
		s.kept += int64(w)
		if err != nil {
			s.budget.refund(g - int64(w))
			s.why, s.err = spillFailed, err
			return len(p), nil
		}
	}
	switch {
	case g < n:
		s.why = spillBudget
	case n < int64(len(p)):
		s.why = spillCap
	}
	return len(p), nil
}

// cut reports whether bytes were discarded.
func (s *spillFile) cut() bool { return s.kept < s.total }

// reason says why the file stopped taking bytes, for a note.
func (s *spillFile) reason() string {
	switch s.why {
	case spillCap:
		return fmt.Sprintf("the spill file cap of %d bytes was reached", MaxSpillBytes)
	case spillBudget:
		return fmt.Sprintf("the session's spill budget of %d bytes is used up", s.budget.Limit())
	case spillFailed:
		return fmt.Sprintf("writing it failed: %v", s.err)
	}
	return "it was not cut"
}

// errSpillCut reports a spill file that keeps only part of its content.
var errSpillCut = errors.New("tools: spill file cut")

// spill saves text to a new file in the spill directory and returns its
// path. The file is capped like every spill file: when text does not fit
// (MaxSpillBytes, the session's budget, a write error), spill returns an
// error naming what was kept and why, and no path; a file holding a part
// of the text is kept and named in the error, an empty one removed.
func (e *Env) spill(prefix, text string) (string, error) {
	s, f, err := e.createSpill(prefix, ".txt")
	if err != nil {
		return "", err
	}
	_, _ = io.WriteString(s, text)
	cerr := f.Close()
	if cerr != nil && s.why == spillWhole {
		s.why, s.err = spillFailed, cerr
	}
	switch {
	case s.why == spillWhole:
		return f.Name(), nil
	case s.kept == 0:
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("%w: nothing saved, %s", errSpillCut, s.reason())
	}
	return "", fmt.Errorf("%w: %s holds only the first %d of %d bytes, %s", errSpillCut, f.Name(), s.kept, s.total, s.reason())
}
