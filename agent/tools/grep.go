package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// The output modes of grep.
const (
	GrepFilesWithMatches = "files_with_matches"
	GrepContent          = "content"
	GrepCount            = "count"
)

// Limits of the grep tool, on top of glob's MaxSearchEntries and
// MaxSearchResults. When one is reached the result says which, and how to
// narrow the search.
const (
	// MaxGrepFileBytes is how much of one file grep reads; the rest of a
	// longer file is not searched.
	MaxGrepFileBytes = 64 << 20
	// MaxGrepTotalBytes is how many file bytes grep reads in one call;
	// the search stops there.
	MaxGrepTotalBytes = 256 << 20
	// MaxGrepLineBytes is the longest line grep holds to match it: a longer
	// line is matched on its first MaxGrepLineBytes bytes only.
	MaxGrepLineBytes = 1 << 20
	// MaxGrepResultBytes bounds the total size of the results grep collects
	// (the listing kept in full in the spill file); the search stops there.
	MaxGrepResultBytes = 8 << 20
)

// GrepArgs are the arguments of the grep tool.
type GrepArgs struct {
	// Pattern is a Go (RE2) regular expression matched line by line.
	Pattern string `json:"pattern"`
	// Path is the file or directory to search; empty means the cwd.
	Path string `json:"path,omitempty"`
	// Glob filters files: without a slash it matches file names, with one
	// it matches paths relative to Path.
	Glob string `json:"glob,omitempty"`
	// OutputMode is GrepFilesWithMatches (the default), GrepContent or
	// GrepCount.
	OutputMode string `json:"output_mode,omitempty"`
	// IgnoreCase makes the match case-insensitive.
	IgnoreCase bool `json:"-i,omitempty"`
}

// ParseGrepArgs decodes the grep tool's arguments.
func ParseGrepArgs(raw json.RawMessage) (GrepArgs, error) {
	var a GrepArgs
	o, err := decodeArgs("grep", raw)
	if err != nil {
		return a, err
	}
	if a.Pattern, err = o.str("pattern", true); err != nil {
		return a, err
	}
	if a.Path, err = o.str("path", false); err != nil {
		return a, err
	}
	if a.Glob, err = o.str("glob", false); err != nil {
		return a, err
	}
	if a.OutputMode, err = o.str("output_mode", false); err != nil {
		return a, err
	}
	if a.IgnoreCase, err = o.boolean("-i"); err != nil {
		return a, err
	}
	return a, nil
}

// Grep is the grep tool: it searches file contents with a regular
// expression.
type Grep struct{}

var _ Tool = Grep{}

// Name returns "grep".
func (Grep) Name() string { return "grep" }

// Schema returns the grep tool's schema.
func (Grep) Schema() Schema {
	return Schema{
		Name: "grep",
		Description: "Search file contents with a regular expression (Go RE2 syntax), line by line. " +
			"output_mode \"files_with_matches\" (default) lists matching files, \"content\" shows matching lines as path:line:text, " +
			"\"count\" shows path:count. Binary files and .git directories are skipped; output is capped at 1000 lines.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"pattern": {"type": "string", "description": "Regular expression to search for."},
				"path": {"type": "string", "description": "File or directory to search (default: the working directory)."},
				"glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.go\" or \"src/**/*.{ts,tsx}\"."},
				"output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"], "description": "What to show (default files_with_matches)."},
				"-i": {"type": "boolean", "description": "Case-insensitive search."}
			},
			"required": ["pattern"]
		}`),
	}
}

// Run searches.
func (Grep) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	return runGrep(ctx, env, raw, defaultSearchBounds())
}

// runGrep is Grep.Run within the bounds b. Files are streamed line by line
// through a bounded buffer; only regular files are opened (with
// O_NONBLOCK, their type checked on the descriptor), so a FIFO or a device
// in the tree is skipped and path=/dev/zero is refused.
func runGrep(ctx context.Context, env *Env, raw json.RawMessage, b searchBounds) (Result, error) {
	a, err := ParseGrepArgs(raw)
	if err != nil {
		return Result{}, err
	}
	if err := env.check(); err != nil {
		return Result{}, err
	}
	title, locs := describeSearch("Grep", a.Pattern, a.Path, env.abs)
	fail := func(text string) (Result, error) { return errorResult(title, KindSearch, locs, text), nil }

	mode := a.OutputMode
	switch mode {
	case "":
		mode = GrepFilesWithMatches
	case GrepFilesWithMatches, GrepContent, GrepCount:
	default:
		return fail(fmt.Sprintf("unknown output_mode %q; use %q, %q or %q", mode, GrepFilesWithMatches, GrepContent, GrepCount))
	}
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return fail(fmt.Sprintf("invalid regular expression: %v", err))
	}
	var filter globPattern
	if a.Glob != "" {
		if filter, err = compileGlob(filepath.ToSlash(a.Glob)); err != nil {
			return fail(fmt.Sprintf("invalid glob %q", a.Glob))
		}
	}

	root := env.Cwd
	if a.Path != "" {
		root = env.abs(a.Path)
	}
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("path not found: " + root)
	case err != nil:
		return fail(fmt.Sprintf("cannot access %s: %v", root, unwrapPathError(err)))
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return fail(fmt.Sprintf("%s is %s, not a regular file or a directory; grep searches regular files and directories only", root, fileKind(fi.Mode())))
	}

	s := &grepSearch{ctx: ctx, env: env, re: re, mode: mode, b: b}
	if prefix, _ := re.LiteralPrefix(); prefix != "" {
		// Only then is one regexp search over a block fast (the regexp
		// skips to the literal); otherwise matching line by line is
		// faster, unless a literal every match holds can skip lines.
		s.pre = lineAnchored(expr)
	} else {
		s.lit, s.fold = requiredLiteral(expr)
	}
	if !fi.IsDir() {
		err = s.file(root, false)
	} else {
		var capped bool
		capped, err = walkFiles(ctx, root, b.entries, nil, func(rel string, d fs.DirEntry) bool {
			if !d.Type().IsRegular() || (filter != nil && !filter.matchFile(rel)) {
				return true
			}
			if err := s.file(filepath.Join(root, filepath.FromSlash(rel)), true); err != nil {
				s.err = err
				return false
			}
			return !s.stopped()
		})
		s.entriesCut = capped
		if err == nil {
			err = s.err
		}
	}
	if err != nil {
		return Result{}, fmt.Errorf("tools: grep %q in %s: %w", a.Pattern, root, err)
	}
	notes := s.notes()
	if len(s.lines) == 0 {
		return Result{Text: "No matches found" + notes, Kind: KindSearch, Title: title, Locations: locs}, nil
	}
	what := map[string]string{GrepFilesWithMatches: "matching files", GrepContent: "matching lines", GrepCount: "files with matches"}[mode]
	text, spillPath := env.capLines("grep", s.lines, what)
	return Result{Text: text + notes, Kind: KindSearch, Title: title, Locations: locs, SpillPath: spillPath}, nil
}

// grepSearch is the state of one grep call: what it found and which of its
// bounds it reached.
type grepSearch struct {
	ctx  context.Context
	env  *Env
	re   *regexp.Regexp
	mode string
	b    searchBounds

	pre *regexp.Regexp // re made line-anchored, for block pre-filtering
	lit []byte         // else a literal every match holds (lower case when fold)
	// fold: lit is matched ignoring ASCII case.
	fold  bool
	lower []byte      // a block in lower case, reused
	lr    *lineReader // reused from file to file

	lines       []string // the results so far
	resultBytes int      // their length in bytes
	read        int64    // file bytes read so far
	err         error    // what stopped the walk (ctx's error)

	resultsCut bool     // b.results or b.resultBytes reached: the search stopped
	totalCut   bool     // b.totalBytes reached: the search stopped
	entriesCut bool     // b.entries reached: the walk stopped
	cutFiles   []string // the first few files searched only in their first b.fileBytes
	cutCount   int      // how many files were
	longLines  int      // lines longer than b.lineBytes, matched in their head only
}

// stopped reports whether a bound ended the search.
func (s *grepSearch) stopped() bool { return s.resultsCut || s.totalCut }

// add records one result line, or reports false when the result bounds
// are reached.
func (s *grepSearch) add(line string) bool {
	if len(s.lines) >= s.b.results || s.resultBytes+len(line)+1 > s.b.resultBytes {
		s.resultsCut = true
		return false
	}
	s.lines = append(s.lines, line)
	s.resultBytes += len(line) + 1
	return true
}

// file searches the regular file p. A file that cannot be opened, is not a
// regular file (when inTree, a symbolic link is not followed either) or
// is binary is skipped. It returns only ctx's error.
func (s *grepSearch) file(p string, inTree bool) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	left := s.b.totalBytes - s.read
	if left <= 0 {
		s.totalCut = true
		return nil
	}
	f, err := openRegular(p, inTree)
	if err != nil {
		return nil
	}
	defer f.Close()
	limit := min(s.b.fileBytes, left)
	if s.lr == nil {
		s.lr = newLineReader(s.ctx, f, min(s.b.buf, s.b.lineBytes), s.b.lineBytes, limit)
	} else {
		s.lr.reset(f, limit)
	}
	lr := s.lr
	defer func() { s.read += lr.read }()
	head, err := lr.peek(binarySniffBytes)
	if err != nil || bytes.IndexByte(head, 0) >= 0 {
		return s.ctx.Err()
	}
	fs := fileSearch{shown: s.env.display(p)}
	for !fs.done {
		if blk := lr.block(); blk != nil {
			s.block(&fs, blk)
			lr.advance(len(blk))
			continue
		}
		seg, eol, err := lr.segment()
		if err != nil {
			break
		}
		fs.n++
		if eol { // the last line, without "\n"
			s.line(&fs, validUTF8(trimCR(seg)))
			continue
		}
		if lr.err == errScanBudget { // the head of a line, where the byte bound cut the file
			s.line(&fs, validUTF8(seg))
			continue
		}
		// Longer than the largest buffer: matched on its head only, and
		// read on to its end.
		s.longLines++
		long := &lineCut{}
		long.add(seg)
		matched := s.re.Match(validUTF8(seg))
		partial := false
		for !eol {
			if seg, eol, err = lr.segment(); err != nil {
				partial = err != io.EOF
				break
			}
			if eol {
				seg = trimCR(seg)
			}
			if matched && s.mode == GrepContent {
				long.add(seg)
			}
		}
		if matched {
			s.match(&fs, long.text(partial))
		}
	}
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if lr.err == errScanBudget && !fs.done && f.size > limit {
		if left <= s.b.fileBytes {
			s.totalCut = true
		} else {
			s.cutCount++
			if len(s.cutFiles) < 3 {
				s.cutFiles = append(s.cutFiles, fs.shown)
			}
		}
	}
	if s.mode == GrepCount && fs.count > 0 {
		s.add(fmt.Sprintf("%s:%d", fs.shown, fs.count))
	}
	return nil
}

// fileSearch is the state of the search of one file.
type fileSearch struct {
	shown string // the path as shown
	n     int    // the number of the line last taken
	count int    // matching lines
	done  bool   // nothing more to find in this file
}

// block searches blk, complete lines of the file. When blk is valid UTF-8
// without "\r" (so each line is a substring of it), the line-anchored
// pre-filter skips the lines that cannot match: its leftmost match in the
// rest of blk is at or before the first line that matches.
func (s *grepSearch) block(fs *fileSearch, blk []byte) {
	if s.pre != nil && bytes.IndexByte(blk, '\r') < 0 && utf8.Valid(blk) {
		for pos := 0; pos < len(blk) && !fs.done; {
			loc := s.pre.FindIndex(blk[pos:])
			if loc == nil || pos+loc[0] >= len(blk) {
				fs.n += bytes.Count(blk[pos:], []byte{'\n'})
				return
			}
			at := pos + loc[0]
			ls := pos + bytes.LastIndexByte(blk[pos:at], '\n') + 1
			le := at + bytes.IndexByte(blk[at:], '\n')
			fs.n += bytes.Count(blk[pos:ls], []byte{'\n'}) + 1
			s.line(fs, blk[ls:le])
			pos = le + 1
		}
		return
	}
	if s.lit != nil && bytes.IndexByte(blk, '\r') < 0 && s.blockLiteral(fs, blk) {
		return
	}
	for len(blk) > 0 && !fs.done {
		i := bytes.IndexByte(blk, '\n')
		fs.n++
		s.line(fs, validUTF8(trimCR(blk[:i])))
		blk = blk[i+1:]
	}
}

// blockLiteral searches blk, complete lines without "\r", for s.lit and
// matches only the lines that hold it: no other line can match. It reports
// false, having done nothing, when it cannot tell: blk is not valid UTF-8,
// or, for a case-folded literal, not ASCII (Unicode folds ASCII letters
// with others, such as K with the Kelvin sign).
func (s *grepSearch) blockLiteral(fs *fileSearch, blk []byte) bool {
	hay := blk
	if s.fold {
		if !isASCII(blk) {
			return false
		}
		s.lower = append(s.lower[:0], blk...)
		for i, c := range s.lower {
			if 'A' <= c && c <= 'Z' {
				s.lower[i] = c + 'a' - 'A'
			}
		}
		hay = s.lower
	} else if !utf8.Valid(blk) {
		return false
	}
	for pos := 0; pos < len(blk) && !fs.done; {
		i := bytes.Index(hay[pos:], s.lit)
		if i < 0 {
			fs.n += bytes.Count(blk[pos:], []byte{'\n'})
			break
		}
		at := pos + i
		ls := pos + bytes.LastIndexByte(blk[pos:at], '\n') + 1
		le := at + bytes.IndexByte(blk[at:], '\n')
		fs.n += bytes.Count(blk[pos:ls], []byte{'\n'}) + 1
		s.line(fs, blk[ls:le])
		pos = le + 1
	}
	return true
}

// isASCII reports whether b is all ASCII.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// requiredLiteral returns a literal of at least two bytes that every match
// of expr holds, and whether it matches ignoring case (then it is ASCII, in
// lower case); nil when none is found. It looks through concatenations,
// groups and repetitions of at least one.
func requiredLiteral(expr string) ([]byte, bool) {
	t, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, false
	}
	var required func(r *syntax.Regexp) *syntax.Regexp
	required = func(r *syntax.Regexp) *syntax.Regexp {
		switch r.Op {
		case syntax.OpLiteral:
			return r
		case syntax.OpCapture, syntax.OpPlus:
			return required(r.Sub[0])
		case syntax.OpRepeat:
			if r.Min >= 1 {
				return required(r.Sub[0])
			}
		case syntax.OpConcat:
			var best *syntax.Regexp
			for _, sub := range r.Sub {
				if l := required(sub); l != nil && (best == nil || len(l.Rune) > len(best.Rune)) {
					best = l
				}
			}
			return best
		}
		return nil
	}
	l := required(t.Simplify())
	if l == nil {
		return nil, false
	}
	fold := l.Flags&syntax.FoldCase != 0
	lit := []byte(string(l.Rune))
	if len(lit) < 2 || bytes.ContainsAny(lit, "\r\n") || (fold && !isASCII(lit)) {
		return nil, false
	}
	if fold {
		lit = bytes.ToLower(lit)
	}
	return lit, fold
}

// line matches one whole line, already repaired to valid UTF-8.
func (s *grepSearch) line(fs *fileSearch, line []byte) {
	if !s.re.Match(line) {
		return
	}
	text := ""
	if s.mode == GrepContent {
		text = cutLine(string(line))
	}
	s.match(fs, text)
}

// match records a matching line, shown as text in content mode.
func (s *grepSearch) match(fs *fileSearch, text string) {
	fs.count++
	switch s.mode {
	case GrepFilesWithMatches:
		s.add(fs.shown)
		fs.done = true
	case GrepContent:
		if !s.add(fmt.Sprintf("%s:%d:%s", fs.shown, fs.n, text)) {
			fs.done = true
		}
	}
}

// lineAnchored compiles expr with its text anchors (^, $, \A, \z) turned
// into line anchors, for the pre-filter over blocks of lines. Every line
// that expr matches is then matched where it sits in the block: word
// boundaries are kept too, since each line is bounded by "\n" or the
// block's edges. It returns nil when that cannot be built.
func lineAnchored(expr string) *regexp.Regexp {
	t, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	var walk func(*syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpBeginText:
			r.Op = syntax.OpBeginLine
		case syntax.OpEndText:
			r.Op, r.Flags = syntax.OpEndLine, r.Flags&^syntax.WasDollar
		}
		for _, sub := range r.Sub {
			walk(sub)
		}
	}
	walk(t)
	re, err := regexp.Compile(t.String())
	if err != nil {
		return nil
	}
	return re
}

// notes tells the model which bounds the search reached, each in its own
// paragraph; "" when none.
func (s *grepSearch) notes() string {
	var b strings.Builder
	if s.resultsCut {
		fmt.Fprintf(&b, "\n\n(grep stopped at %d results (%d bytes): it collects at most %d results or %d bytes in one call, so there may be more. "+
			"Narrow the pattern, path or glob to see the rest.)", len(s.lines), s.resultBytes, s.b.results, s.b.resultBytes)
	}
	if s.totalCut {
		fmt.Fprintf(&b, "\n\n(grep stopped after reading %d bytes, the most it reads in one call: later files were not searched. "+
			"Narrow the path or glob to search them.)", s.read)
	}
	if s.entriesCut {
		fmt.Fprintf(&b, "\n\n(grep stopped after visiting %d files and directories, the most it visits in one call: the rest of the tree was not searched. "+
			"Narrow the path or glob to search it.)", s.b.entries)
	}
	if s.cutCount > 0 {
		more := ""
		if s.cutCount > len(s.cutFiles) {
			more = fmt.Sprintf(" and %d more", s.cutCount-len(s.cutFiles))
		}
		fmt.Fprintf(&b, "\n\n(%d files were searched only in their first %d bytes, the most grep reads of one file: %s%s. "+
			"Use bash to search the rest of them.)", s.cutCount, s.b.fileBytes, strings.Join(s.cutFiles, ", "), more)
	}
	if s.longLines > 0 {
		fmt.Fprintf(&b, "\n\n(%d lines longer than %d bytes were matched in their first %d bytes only.)", s.longLines, s.b.lineBytes, s.b.lineBytes)
	}
	return b.String()
}

// matchFile applies a grep file filter: a pattern without a slash matches
// the file name, one with a slash the relative path.
func (g globPattern) matchFile(rel string) bool {
	name := path.Base(rel)
	for _, p := range g {
		if len(p) == 1 && p[0] != "**" {
			if ok, _ := path.Match(p[0], name); ok {
				return true
			}
			continue
		}
		if matchSegments(p, strings.Split(rel, "/")) {
			return true
		}
	}
	return false
}
