package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// Limits of the read tool.
const (
	// DefaultReadLimit is how many lines read returns without a limit.
	DefaultReadLimit = 2000
	// MaxLineRunes is the longest line read and grep show before cutting it.
	MaxLineRunes = 2000
	// MaxReadScanBytes is how far into a file read goes to find and show
	// its window (the lines from offset to offset+limit-1): an offset past
	// it gets a note instead of lines, and a window that would reach beyond
	// it ends there, with a note.
	// Lines before the offset are only scanned for "\n", so getting there
	// is fast; no more than one buffer of the file is held at a time.
	MaxReadScanBytes = 1 << 30
	// MaxReadCountBytes is how far past the window read scans to count the
	// file's lines for its "(Showing lines a-b of N …)" note; a longer rest
	// makes the note say "of at least N".
	MaxReadCountBytes = 64 << 20
	// MaxReadOutputBytes bounds the text of one read: the window ends at the
	// last line that fits, and the note says where to go on.
	MaxReadOutputBytes = 1 << 20
	// binarySniffBytes is how much of a file is checked for a NUL byte.
	binarySniffBytes = 8000
)

// readBounds are the limits one read call works within; the Read tool uses
// defaultReadBounds, tests smaller ones.
type readBounds struct {
	buf    int   // line buffer, bytes; longer lines are taken in pieces
	scan   int64 // MaxReadScanBytes
	count  int64 // MaxReadCountBytes
	output int   // MaxReadOutputBytes
}

// defaultReadBounds are the documented limits.
func defaultReadBounds() readBounds {
	return readBounds{buf: readChunkBytes, scan: MaxReadScanBytes, count: MaxReadCountBytes, output: MaxReadOutputBytes}
}

// ReadArgs are the arguments of the read tool.
type ReadArgs struct {
	// FilePath is the file to read, relative to the cwd or absolute.
	FilePath string `json:"file_path"`
	// Offset is the 1-based first line; 0 means 1.
	Offset int `json:"offset,omitempty"`
	// Limit is the number of lines; 0 means DefaultReadLimit.
	Limit int `json:"limit,omitempty"`
}

// ParseReadArgs decodes the read tool's arguments.
func ParseReadArgs(raw json.RawMessage) (ReadArgs, error) {
	var a ReadArgs
	o, err := decodeArgs("read", raw)
	if err != nil {
		return a, err
	}
	if a.FilePath, err = o.str("file_path", true); err != nil {
		return a, err
	}
	if a.Offset, err = o.integer("offset"); err != nil {
		return a, err
	}
	if a.Limit, err = o.integer("limit"); err != nil {
		return a, err
	}
	return a, nil
}

// Read is the read tool: it shows a text file with numbered lines.
type Read struct{}

var _ Tool = Read{}

// Name returns "read".
func (Read) Name() string { return "read" }

// Schema returns the read tool's schema.
func (Read) Schema() Schema {
	return Schema{
		Name: "read",
		Description: "Read a text file. Returns its lines numbered like `cat -n` (line number, tab, text). " +
			"Reads up to 2000 lines by default; use offset (1-based first line) and limit to page through longer files. " +
			"Lines longer than 2000 characters are cut. Relative paths resolve against the working directory.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"file_path": {"type": "string", "description": "Path of the file to read, absolute or relative to the working directory."},
				"offset": {"type": "integer", "description": "1-based line number to start reading from.", "minimum": 1},
				"limit": {"type": "integer", "description": "Maximum number of lines to read (default 2000).", "minimum": 1}
			},
			"required": ["file_path"]
		}`),
	}
}

// describeRead returns the title and locations of a read call; resolve
// turns the model's path into the reported one.
func describeRead(a ReadArgs, resolve func(string) string) (string, []Location) {
	return "Read " + a.FilePath, []Location{{Path: resolve(a.FilePath), Line: a.Offset}}
}

// Run reads the file.
func (Read) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	return runRead(ctx, env, raw, defaultReadBounds())
}

// runRead is Read.Run within the bounds b.
//
// Only regular files are read: a FIFO, a device, a socket or a directory is
// refused from a stat before anything is opened, and the file is opened
// with O_NONBLOCK (a FIFO swapped in meanwhile cannot block the open) and
// its type checked again on the descriptor. The file is then streamed: only
// the window and the line count come out of it, within b.
func runRead(ctx context.Context, env *Env, raw json.RawMessage, b readBounds) (Result, error) {
	a, err := ParseReadArgs(raw)
	if err != nil {
		return Result{}, err
	}
	if err := env.check(); err != nil {
		return Result{}, err
	}
	title, locs := describeRead(a, env.abs)
	p := locs[0].Path
	fail := func(text string) (Result, error) { return errorResult(title, KindRead, locs, text), nil }
	if a.Offset < 0 {
		return fail(fmt.Sprintf("offset must be a 1-based line number, got %d", a.Offset))
	}
	if a.Limit < 0 {
		return fail(fmt.Sprintf("limit must be positive, got %d", a.Limit))
	}

	// What read finds is what the session has seen of the file (see
	// Observations): its version on success, its absence when nothing is
	// there.
	key := fileKey(p)
	absent := func(text string) (Result, error) {
		if st := statPath(p); !st.exists && st.err == nil {
			env.observe(key, Observation{})
		}
		return fail(text)
	}
	var src io.Reader
	var seen func()
	if env.readsBuffer(p) {
		// The editor is never asked for what is not a regular file on
		// disk (it might block on a FIFO as well); a path missing on disk
		// may still be an editor buffer.
		if fi, err := os.Stat(p); err == nil && !fi.Mode().IsRegular() {
			return fail(fileFailure(p, "read"))
		}
		content, err := env.FS.ReadTextFile(ctx, p)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return Result{}, fmt.Errorf("tools: read %s: %w", p, cerr)
			}
			if msg := fileFailure(p, "read"); msg != "" {
				return absent(msg)
			}
			return fail(fmt.Sprintf("cannot read %s: %v", p, unwrapPathError(err)))
		}
		src = strings.NewReader(content)
		seen = func() { env.observeBuffer(key, p) }
	} else {
		if msg := fileFailure(p, "read"); msg != "" {
			return absent(msg)
		}
		f, err := openRegular(p, false)
		var nre *notRegularError
		switch {
		case errors.As(err, &nre):
			return fail(notRegularText(p, nre.mode, "read"))
		case err != nil:
			return absent(fmt.Sprintf("cannot read %s: %v", p, unwrapPathError(err)))
		}
		defer f.Close()
		src = f
		seen = func() { env.observe(key, Observation{Present: true, Version: f.version}) }
	}
	text, err := readWindow(ctx, p, src, a.Offset, a.Limit, b)
	switch {
	case errors.Is(err, errBinary):
		return fail(p + " is a binary file; read shows text files only")
	case ctx.Err() != nil && err != nil:
		return Result{}, fmt.Errorf("tools: read %s: %w", p, err)
	case err != nil:
		return fail(fmt.Sprintf("cannot read %s: %v", p, unwrapPathError(err)))
	}
	seen()
	return Result{Text: text, Kind: KindRead, Title: title, Locations: locs, Value: readValue(p, a.Offset, text)}, nil
}

// initialBuffer sizes read's line buffer for r: a small file gets a small
// buffer (it may still grow to most), anything of unknown size the full
// most bytes.
func initialBuffer(r io.Reader, most int) int {
	var size int64 = -1
	switch f := r.(type) {
	case *regularFile:
		size = f.size
	case *strings.Reader:
		size = f.Size()
	}
	if size < 0 || size >= int64(most) {
		return most
	}
	return int(size) + 1
}

// errBinary reports a file with a NUL byte in its first binarySniffBytes.
var errBinary = errors.New("binary file")

// readWindow renders lines offset… of r in cat -n style, streaming r
// within b: it holds one line buffer and the output, never the file.
func readWindow(ctx context.Context, p string, r io.Reader, offset, limit int, b readBounds) (string, error) {
	if offset < 1 {
		offset = 1
	}
	if limit < 1 {
		limit = DefaultReadLimit
	}
	lr := newLineReader(ctx, r, initialBuffer(r, b.buf), b.buf, b.scan)
	head, err := lr.peek(binarySniffBytes)
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return "", errBinary
	}
	if len(head) == 0 && lr.err == io.EOF {
		return fmt.Sprintf("(%s is empty)", p), nil
	}

	// Skip to the window.
	for skipped := 0; skipped < offset-1; skipped++ {
		switch err := lr.skipLine(); {
		case err == io.EOF:
			return fmt.Sprintf("(offset %d is past the end of %s, which has %d lines)", offset, p, skipped), nil
		case err == errScanBudget:
			return fmt.Sprintf("(offset %d is past the first %d bytes of %s, as far as read looks for a line; they hold %d complete lines. "+
				"Use a smaller offset, or bash (sed -n, tail) to see lines further in.)", offset, b.scan, p, skipped), nil
		case err != nil:
			return "", err
		}
	}

	// The window.
	var out strings.Builder
	shown, taken := 0, 0 // lines shown; lines consumed (one more when the output cap refused a line)
	atEOF, scanCut, outputCut := false, false, false
	for shown < limit {
		seg, eol, err := lr.segment()
		if err == io.EOF {
			atEOF = true
			break
		}
		if err == errScanBudget {
			scanCut = true
			break
		}
		if err != nil {
			return "", err
		}
		var text string
		if eol {
			text = cutLine(string(validUTF8(trimCR(seg))))
		} else {
			text, err = longLine(lr, seg)
			if err == errScanBudget {
				scanCut = true
			} else if err != nil {
				return "", err
			}
		}
		taken++
		line := fmt.Sprintf("%6d	%s", offset+shown, text)
		if shown > 0 && out.Len()+1+len(line) > b.output {
			outputCut = true
			break
		}
		if shown > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(line)
		shown++
		if scanCut {
			break
		}
	}
	if shown == 0 {
		if scanCut {
			return fmt.Sprintf("(offset %d is past the first %d bytes of %s, as far as read looks for a line; they hold %d complete lines. "+
				"Use a smaller offset, or bash (sed -n, tail) to see lines further in.)", offset, b.scan, p, offset-1), nil
		}
		return fmt.Sprintf("(offset %d is past the end of %s, which has %d lines)", offset, p, offset-1), nil
	}
	first, last := offset, offset+shown-1
	if scanCut {
		fmt.Fprintf(&out, "\n\n(Showing lines %d-%d of %s: read stops after the first %d bytes of a file. "+
			"Use bash (sed -n, tail) to see the rest.)", first, last, p, b.scan)
		return out.String(), nil
	}
	// Count the lines after the window.
	total, exact := int64(offset-1+taken), true
	if !atEOF {
		lr.extend(b.count)
		n, complete, err := lr.countLines()
		if err != nil {
			return "", err
		}
		total += n
		exact = complete
	}
	if total > int64(last) {
		of := fmt.Sprint(total)
		if !exact {
			of = "at least " + of
		}
		if outputCut {
			fmt.Fprintf(&out, "\n\n(Showing lines %d-%d of %s; read shows at most %d bytes at a time. Use offset=%d to read on.)", first, last, of, b.output, last+1)
		} else {
			fmt.Fprintf(&out, "\n\n(Showing lines %d-%d of %s. Use offset=%d to read on.)", first, last, of, last+1)
		}
	}
	return out.String(), nil
}

// longLine reads the rest of a line longer than the buffer, whose first
// piece is first, and returns it as cutLine shows it. With errScanBudget the
// line's end was not reached, and the text says so.
func longLine(lr *lineReader, first []byte) (string, error) {
	var c lineCut
	c.add(first)
	for {
		seg, eol, err := lr.segment()
		if err == errScanBudget {
			return c.text(true), err
		}
		if err == io.EOF {
			return c.text(false), nil
		}
		if err != nil {
			return "", err
		}
		if eol {
			c.add(trimCR(seg))
			return c.text(false), nil
		}
		c.add(seg)
	}
}

// cutLine cuts a line longer than MaxLineRunes runes, saying so.
func cutLine(line string) string {
	if len(line) <= MaxLineRunes {
		return line
	}
	n := utf8.RuneCountInString(line)
	if n <= MaxLineRunes {
		return line
	}
	return fmt.Sprintf("%s… [line cut: %d characters]", truncateRunes(line, MaxLineRunes), n)
}
