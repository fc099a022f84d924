package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Limits of the glob and grep tools. When a search reaches one of them it
// stops, and the result says which limit ended it and how to narrow the
// search.
const (
	// MaxListEntries is the most paths or lines glob and grep show; longer
	// listings are cut with a note and spilled whole.
	MaxListEntries = 1000
	// MaxSearchEntries is how many files and directories (every directory
	// entry read counts) glob and grep visit in one call.
	MaxSearchEntries = 200_000
	// MaxSearchResults is how many results (paths, matching lines or counts)
	// glob and grep collect in one call; the listing kept in the spill file
	// holds at most this many.
	MaxSearchResults = 100_000
)

// searchBounds are the limits one glob or grep call works within; the tools
// use defaultSearchBounds, tests smaller ones.
type searchBounds struct {
	entries     int   // MaxSearchEntries
	results     int   // MaxSearchResults
	resultBytes int   // MaxGrepResultBytes
	fileBytes   int64 // MaxGrepFileBytes
	totalBytes  int64 // MaxGrepTotalBytes
	lineBytes   int   // MaxGrepLineBytes
	buf         int   // initial line buffer
}

// defaultSearchBounds are the documented limits.
func defaultSearchBounds() searchBounds {
	return searchBounds{
		entries: MaxSearchEntries, results: MaxSearchResults, resultBytes: MaxGrepResultBytes,
		fileBytes: MaxGrepFileBytes, totalBytes: MaxGrepTotalBytes, lineBytes: MaxGrepLineBytes, buf: readChunkBytes,
	}
}

// GlobArgs are the arguments of the glob tool.
type GlobArgs struct {
	// Pattern is the glob; "**" matches any number of directories and
	// {a,b} alternatives are expanded.
	Pattern string `json:"pattern"`
	// Path is the directory to search; empty means the cwd.
	Path string `json:"path,omitempty"`
}

// ParseGlobArgs decodes the glob tool's arguments.
func ParseGlobArgs(raw json.RawMessage) (GlobArgs, error) {
	var a GlobArgs
	o, err := decodeArgs("glob", raw)
	if err != nil {
		return a, err
	}
	if a.Pattern, err = o.str("pattern", true); err != nil {
		return a, err
	}
	if a.Path, err = o.str("path", false); err != nil {
		return a, err
	}
	return a, nil
}

// Glob is the glob tool: it lists files whose paths match a pattern.
type Glob struct{}

var _ Tool = Glob{}

// Name returns "glob".
func (Glob) Name() string { return "glob" }

// Schema returns the glob tool's schema.
func (Glob) Schema() Schema {
	return Schema{
		Name: "glob",
		Description: "Find files by path pattern, such as \"**/*.go\" or \"src/**/*.{ts,tsx}\". " +
			"\"**\" matches any number of directories; \"*\" matches within one path segment. " +
			"Returns matching file paths (relative to the working directory when inside it), newest first, at most 1000. " +
			".git directories are skipped.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"pattern": {"type": "string", "description": "The glob pattern, matched against paths relative to path."},
				"path": {"type": "string", "description": "Directory to search in (default: the working directory)."}
			},
			"required": ["pattern"]
		}`),
	}
}

// describeSearch returns the title and locations of a glob or grep call.
func describeSearch(verb, pattern, dir string, resolve func(string) string) (string, []Location) {
	if dir == "" {
		return verb + " " + pattern, nil
	}
	return verb + " " + pattern + " in " + dir, []Location{{Path: resolve(dir)}}
}

// Run lists the matching files.
func (Glob) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	return runGlob(ctx, env, raw, defaultSearchBounds())
}

// runGlob is Glob.Run within the bounds b. It only reads directories,
// never opens a file, and does not follow symbolic links below the base.
func runGlob(ctx context.Context, env *Env, raw json.RawMessage, b searchBounds) (Result, error) {
	a, err := ParseGlobArgs(raw)
	if err != nil {
		return Result{}, err
	}
	if err := env.check(); err != nil {
		return Result{}, err
	}
	title, locs := describeSearch("Glob", a.Pattern, a.Path, env.abs)
	fail := func(text string) (Result, error) { return errorResult(title, KindSearch, locs, text), nil }

	base, pattern := env.Cwd, filepath.ToSlash(a.Pattern)
	if a.Path != "" {
		base = env.abs(a.Path)
	}
	if path.IsAbs(pattern) {
		base, pattern = splitAbsPattern(pattern)
	}
	if msg := dirFailure(base); msg != "" {
		return fail(msg)
	}
	g, err := compileGlob(pattern)
	if err != nil {
		return fail(fmt.Sprintf("invalid glob pattern %q", a.Pattern))
	}

	type hit struct {
		path string
		mod  time.Time
	}
	var hits []hit
	resultsCut := false
	entriesCut, err := walkFiles(ctx, base, b.entries, func(rel string) bool { return g.mayContain(rel) }, func(rel string, d fs.DirEntry) bool {
		if !g.match(rel) {
			return true
		}
		if len(hits) >= b.results {
			resultsCut = true
			return false
		}
		var mod time.Time
		if info, err := d.Info(); err == nil {
			mod = info.ModTime()
		}
		hits = append(hits, hit{path: env.display(filepath.Join(base, filepath.FromSlash(rel))), mod: mod})
		return true
	})
	if err != nil {
		return Result{}, fmt.Errorf("tools: glob %q in %s: %w", a.Pattern, base, err)
	}
	var notes string
	if resultsCut {
		notes += fmt.Sprintf("\n\n(glob stopped at %d matching files, the most it collects in one call, so there are more, and newest first is among these only. "+
			"Narrow the pattern or path to see the rest.)", len(hits))
	}
	if entriesCut {
		notes += fmt.Sprintf("\n\n(glob stopped after visiting %d files and directories, the most it visits in one call: the rest of the tree was not searched. "+
			"Narrow the pattern or path to search it.)", b.entries)
	}
	if len(hits) == 0 {
		return Result{Text: fmt.Sprintf("No files match %q in %s", a.Pattern, env.display(base)) + notes, Kind: KindSearch, Title: title, Locations: locs}, nil
	}
	sort.Slice(hits, func(i, j int) bool {
		if !hits[i].mod.Equal(hits[j].mod) {
			return hits[i].mod.After(hits[j].mod)
		}
		return hits[i].path < hits[j].path
	})
	lines := make([]string, len(hits))
	for i, h := range hits {
		lines[i] = h.path
	}
	text, spillPath := env.capLines("glob", lines, "matching files, newest first")
	return Result{Text: text + notes, Kind: KindSearch, Title: title, Locations: locs, SpillPath: spillPath}, nil
}

// splitAbsPattern splits an absolute slash pattern into the directory made
// of its literal leading segments and the rest.
func splitAbsPattern(pattern string) (string, string) {
	segs := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	i := 0
	for i < len(segs)-1 && !strings.ContainsAny(segs[i], `*?[{\`) {
		i++
	}
	return filepath.FromSlash("/" + strings.Join(segs[:i], "/")), strings.Join(segs[i:], "/")
}

// dirFailure explains, for the model, why dir cannot be searched; "" when
// it can.
func dirFailure(dir string) string {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "path not found: " + dir
	case err != nil:
		return fmt.Sprintf("cannot access %s: %v", dir, unwrapPathError(err))
	case !fi.IsDir():
		return dir + " is not a directory"
	}
	return ""
}

// walkFiles walks the tree under root (following root itself if it is a
// symbolic link), skipping .git directories, unreadable directories and
// directories for which descend returns false. It calls visit for every
// non-directory entry with its slash-separated path relative to root, in
// lexical order, until visit returns false. Symbolic links below root are
// visited, never followed, so a link loop cannot trap it, and directories
// are opened with O_NONBLOCK|O_DIRECTORY|O_NOFOLLOW, so nothing swapped in
// can block it. It reads at most maxEntries directory entries in all and
// reports whether that bound stopped it (the directory being read then
// shows only the entries read). It stops with ctx's error when ctx is done.
func walkFiles(ctx context.Context, root string, maxEntries int, descend func(rel string) bool, visit func(rel string, d fs.DirEntry) bool) (capped bool, err error) {
	walkRoot := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		walkRoot = r
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	w := &treeWalk{ctx: ctx, max: maxEntries, descend: descend, visit: visit}
	ents, err := w.readDir(walkRoot, 0)
	if err != nil {
		return false, err
	}
	err = w.walk(walkRoot, "", ents)
	return w.capped, err
}

// treeWalk is the state of one walkFiles.
type treeWalk struct {
	ctx     context.Context
	max     int // entries to read in all
	entries int // entries read
	capped  bool
	stopped bool // visit said stop
	descend func(rel string) bool
	visit   func(rel string, d fs.DirEntry) bool
}

// walk visits the entries ents of dir, whose path relative to the root is
// rel, descending into subdirectories.
func (w *treeWalk) walk(dir, rel string, ents []fs.DirEntry) error {
	for _, d := range ents {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		r := d.Name()
		if rel != "" {
			r = rel + "/" + r
		}
		if !d.IsDir() {
			if !w.visit(r, d) {
				w.stopped = true
				return nil
			}
			continue
		}
		if d.Name() == ".git" || (w.descend != nil && !w.descend(r)) {
			continue
		}
		sub := filepath.Join(dir, d.Name())
		subEnts, err := w.readDir(sub, syscall.O_NOFOLLOW)
		if err != nil {
			if cerr := w.ctx.Err(); cerr != nil {
				return cerr
			}
			continue // unreadable (or no longer a directory): skipped
		}
		if err := w.walk(sub, r, subEnts); err != nil || w.stopped {
			return err
		}
	}
	return nil
}

// readDir returns the entries of dir sorted by name, reading no more than
// the walk's bound allows.
func (w *treeWalk) readDir(dir string, extra int) ([]fs.DirEntry, error) {
	fd, err := openNonblock(dir, syscall.O_DIRECTORY|extra)
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		_ = syscall.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	var ents []fs.DirEntry
	for {
		if err := w.ctx.Err(); err != nil {
			return nil, err
		}
		room := w.max - w.entries - len(ents)
		if room <= 0 {
			// Any entry left is one too many.
			if more, _ := f.ReadDir(1); len(more) > 0 {
				w.capped = true
			}
			break
		}
		batch, err := f.ReadDir(min(room, 512))
		ents = append(ents, batch...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	w.entries += len(ents)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, nil
}

// capLines joins lines. When there are more than MaxListEntries lines or
// more than MaxOutputBytes bytes, it keeps the head, saves the full listing
// to a spill file and appends a note; it then also returns the spill path.
func (e *Env) capLines(prefix string, lines []string, what string) (string, string) {
	full := strings.Join(lines, "\n")
	if len(lines) <= MaxListEntries && len(full) <= MaxOutputBytes {
		return full, ""
	}
	keep, size := 0, 0
	for keep < len(lines) && keep < MaxListEntries && size+len(lines[keep])+1 <= MaxOutputBytes {
		size += len(lines[keep]) + 1
		keep++
	}
	var b strings.Builder
	b.WriteString(strings.Join(lines[:keep], "\n"))
	fmt.Fprintf(&b, "\n\n(Showing %d of %d %s.", keep, len(lines), what)
	spillPath, err := e.spill(prefix, full+"\n")
	if err != nil {
		spillPath = ""
		fmt.Fprintf(&b, " The full list could not be saved: %v.", err)
	} else {
		fmt.Fprintf(&b, " The full list is saved to %s.", spillPath)
	}
	b.WriteString(" Narrow the pattern or path to see the rest.)")
	return b.String(), spillPath
}
