package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of the read tool.
const (
	// DefaultReadLimit is how many lines read returns without a limit.
	DefaultReadLimit = 2000
	// MaxLineRunes is the longest line read and grep show before cutting it.
	MaxLineRunes = 2000
	// binarySniffBytes is how much of a file is checked for a NUL byte.
	binarySniffBytes = 8000
)

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

	var content string
	if env.FS == nil {
		if msg := statFailure(p); msg != "" {
			return fail(msg)
		}
	}
	content, err = env.readText(ctx, p)
	if err != nil {
		if msg := statFailure(p); msg != "" {
			return fail(msg)
		}
		return fail(fmt.Sprintf("cannot read %s: %v", p, unwrapPathError(err)))
	}
	if strings.IndexByte(content[:min(len(content), binarySniffBytes)], 0) >= 0 {
		return fail(p + " is a binary file; read shows text files only")
	}
	return Result{Text: numberLines(p, content, a.Offset, a.Limit), Kind: KindRead, Title: title, Locations: locs}, nil
}

// numberLines renders lines offset… of content in cat -n style.
func numberLines(p, content string, offset, limit int) string {
	lines := splitLines(content)
	if len(lines) == 0 {
		return fmt.Sprintf("(%s is empty)", p)
	}
	if offset < 1 {
		offset = 1
	}
	if limit < 1 {
		limit = DefaultReadLimit
	}
	if offset > len(lines) {
		return fmt.Sprintf("(offset %d is past the end of %s, which has %d lines)", offset, p, len(lines))
	}
	end := min(len(lines), offset-1+limit)
	var b strings.Builder
	for i := offset; i <= end; i++ {
		if i > offset {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%6d\t%s", i, cutLine(lines[i-1]))
	}
	if end < len(lines) {
		fmt.Fprintf(&b, "\n\n(Showing lines %d-%d of %d. Use offset=%d to read on.)", offset, end, len(lines), end+1)
	}
	return b.String()
}

// splitLines splits text into lines without their terminators ("\n" or
// "\r\n"); a final terminator does not start another line. Invalid UTF-8 is
// replaced so the output is stable once JSON-encoded.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
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
