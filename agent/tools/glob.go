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

// DefaultGlobMaxResults is how many paths a glob result shows when
// Env.GlobMaxResults is 0, the reference agent's default (globMaxResults).
const DefaultGlobMaxResults = 100

// GlobArgs are the arguments of the glob tool.
type GlobArgs struct {
	// Pattern is the glob; "**" matches any number of directories and
	// {a,b} alternatives are expanded. A pattern with no "/" matches file
	// names at any depth; one with a "/" is anchored to Path.
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
		Description: "Find files by path pattern, such as \"*.go\", \"**/*.go\" or \"src/**/*.{ts,tsx}\". " +
			"A pattern with no \"/\" matches file names at any depth, so \"*\" matches every file in the tree and \"*.ts\" every .ts file; " +
			"a pattern with a \"/\" is matched against paths relative to path. " +
			"\"**\" matches any number of directories; \"*\" matches within one path segment. " +
			"Returns matching file paths, never directories (relative to the working directory when inside it), oldest modification first. " +
			"A result of more than 100 paths (or the configured limit) shows that many and says how many matched. " +
			".git directories are skipped.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"pattern": {"type": "string", "description": "The glob pattern. With no \"/\" it matches file names at any depth; with one it is anchored to path."},
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

// globHit is one file a glob matched.
type globHit struct {
	path string    // as shown to the model
	top  string    // the first segment of its path below the search base
	mod  time.Time // its modification time
}

// anchorGlob returns the pattern matched against paths relative to the
// base: one with no "/" matches file names at any depth, so it gets a
// leading "**/"; one with a "/" is anchored as it is.
func anchorGlob(pattern string) string {
	if strings.Contains(pattern, "/") {
		return pattern
	}
	return "**/" + pattern
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
	g, err := compileGlob(anchorGlob(pattern))
	if err != nil {
		return fail(fmt.Sprintf("invalid glob pattern %q", a.Pattern))
	}

	var hits []globHit
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
		top, _, _ := strings.Cut(rel, "/")
		hits = append(hits, globHit{path: env.display(filepath.Join(base, filepath.FromSlash(rel))), top: top, mod: mod})
		return true
	})
	if err != nil {
		return Result{}, fmt.Errorf("tools: glob %q in %s: %w", a.Pattern, base, err)
	}
	var notes string
	if resultsCut {
		notes += fmt.Sprintf("\n\n(glob stopped at %d matching files, the most it collects in one call, so there are more, and the modification-time order is among these only. "+
			"Narrow the pattern or path to see the rest.)", len(hits))
	}
	if entriesCut {
		notes += fmt.Sprintf("\n\n(glob stopped after visiting %d files and directories, the most it visits in one call: the rest of the tree was not searched. "+
			"Narrow the pattern or path to search it.)", b.entries)
	}
	if len(hits) == 0 {
		return Result{Text: "No files found" + notes, Kind: KindSearch, Title: title, Locations: locs}, nil
	}
	sortGlobHits(hits)
	// Over the cap, the whole sorted result is saved to a spill file the
	// footer names (unless GlobNoSpill, or the save fails: the footer then
	// says it was not saved).
	spillPath := ""
	if n := env.globMaxResults(); len(hits) > n && !env.GlobNoSpill {
		all := make([]string, len(hits))
		for i, h := range hits {
			all[i] = h.path
		}
		if p, err := env.spill("glob", strings.Join(all, "\n")+"\n"); err == nil {
			spillPath = p
		}
	}
	text := formatGlob(hits, env.globMaxResults(), env.GlobSample, MaxOutputBytes, spillPath)
	return Result{Text: text + notes, Kind: KindSearch, Title: title, Locations: locs, SpillPath: spillPath}, nil
}

// globMaxResults is the cap on the paths a glob result shows:
// GlobMaxResults, DefaultGlobMaxResults when it is 0 or less, and never
// more than MaxListEntries.
func (e *Env) globMaxResults() int {
	n := e.GlobMaxResults
	if n <= 0 {
		n = DefaultGlobMaxResults
	}
	return min(n, MaxListEntries)
}

// sortGlobHits orders hits by modification time, oldest first, and equal
// times by path.
func sortGlobHits(hits []globHit) {
	sort.SliceStable(hits, func(i, j int) bool {
		if !hits[i].mod.Equal(hits[j].mod) {
			return hits[i].mod.Before(hits[j].mod)
		}
		return hits[i].path < hits[j].path
	})
}

// globPage is the part of an over-cap glob result shown to the model.
type globPage struct {
	items []string // the paths shown
	shown int      // distinct top-level entries the shown paths reach
	total int      // distinct top-level entries across the whole result
}

// headPage is the first n hits, in their order.
func headPage(hits []globHit, n int) globPage {
	p := globPage{items: make([]string, 0, n)}
	for _, h := range hits[:min(n, len(hits))] {
		p.items = append(p.items, h.path)
	}
	return p
}

// samplePage picks n of hits round-robin across their top-level entries:
// every entry gets a slot before any gets a second, an exhausted entry
// drops out. Entries come in the order of their first hit, and the page
// lists the paths grouped by entry, each group in hits' order, so a result
// with one path per entry gives the head of hits.
func samplePage(hits []globHit, n int) globPage {
	var order []string
	groups := map[string][]string{}
	for _, h := range hits {
		if _, ok := groups[h.top]; !ok {
			order = append(order, h.top)
		}
		groups[h.top] = append(groups[h.top], h.path)
	}
	taken := map[string]int{}
	count := 0
	for round := 0; count < n; round++ {
		progressed := false
		for _, key := range order {
			if count >= n {
				break
			}
			if round < len(groups[key]) {
				taken[key]++
				count++
				progressed = true
			}
		}
		if !progressed {
			break
		}
	}
	p := globPage{total: len(order)}
	for _, key := range order {
		if k := taken[key]; k > 0 {
			p.items = append(p.items, groups[key][:k]...)
			p.shown++
		}
	}
	return p
}

// formatGlob joins the sorted hits. A result of more than maxResults paths
// shows maxResults of them (fewer when their text would pass maxBytes):
// the head of the order, or with sample a round-robin sample across
// top-level entries, and a footer giving the total and, from spillPath,
// where the whole sorted list is saved ("": it was not saved).
func formatGlob(hits []globHit, maxResults int, sample bool, maxBytes int, spillPath string) string {
	n := max(maxResults, 1)
	for {
		var p globPage
		switch {
		case len(hits) <= n:
			p = headPage(hits, n)
		case sample:
			p = samplePage(hits, n)
		default:
			p = headPage(hits, n)
		}
		fit, size := 0, 0
		for fit < len(p.items) && size+len(p.items[fit])+1 <= maxBytes {
			size += len(p.items[fit]) + 1
			fit++
		}
		if fit < len(p.items) && fit > 0 && fit < n {
			n = fit // the page is too long: take fewer paths, sampled again
			continue
		}
		if len(p.items) == len(hits) {
			return strings.Join(p.items, "\n")
		}
		basis := "."
		if sample && len(hits) > n && p.total != len(hits) {
			basis = fmt.Sprintf(", sampled across %d of the %d top-level entries this pattern matched instead of taken in modification-time order.", p.shown, p.total)
			if p.shown < p.total {
				basis += " Narrow path to inspect a specific subtree."
			}
		}
		return formatGlobPage(p.items[:max(fit, 1)], len(hits), basis, spillPath)
	}
}

// formatGlobPage is the page items of a result of seen paths with its
// footer; basis ends the "Showing" sentence, and the recovery sentence
// names spillPath or says the whole result was not saved.
func formatGlobPage(items []string, seen int, basis, spillPath string) string {
	recovery := "The complete result could not be saved; narrow pattern or path to see more."
	if spillPath != "" {
		recovery = "Full sorted result stored at: " + spillPath + ". Use read with offset/limit, or grep this path to search within it."
	}
	return fmt.Sprintf("%s\n\n(Showing %d of %d paths%s %s)", strings.Join(items, "\n"), len(items), seen, basis, recovery)
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
