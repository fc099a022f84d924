package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// MaxListEntries is the most paths or lines glob and grep show; longer
// listings are cut with a note and spilled whole.
const MaxListEntries = 1000

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
	err = walkFiles(ctx, base, func(rel string) bool { return g.mayContain(rel) }, func(rel string, d fs.DirEntry) {
		if !g.match(rel) {
			return
		}
		var mod time.Time
		if info, err := d.Info(); err == nil {
			mod = info.ModTime()
		}
		hits = append(hits, hit{path: env.display(filepath.Join(base, filepath.FromSlash(rel))), mod: mod})
	})
	if err != nil {
		return Result{}, fmt.Errorf("tools: glob %q in %s: %w", a.Pattern, base, err)
	}
	if len(hits) == 0 {
		return Result{Text: fmt.Sprintf("No files match %q in %s", a.Pattern, env.display(base)), Kind: KindSearch, Title: title, Locations: locs}, nil
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
	return Result{Text: text, Kind: KindSearch, Title: title, Locations: locs, SpillPath: spillPath}, nil
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
// lexical order. It stops with ctx's error when ctx is done.
func walkFiles(ctx context.Context, root string, descend func(rel string) bool, visit func(rel string, d fs.DirEntry)) error {
	walkRoot := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		walkRoot = r
	}
	return filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p == walkRoot {
			return err
		}
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, rerr := filepath.Rel(walkRoot, p)
		if rerr != nil {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || (descend != nil && !descend(rel)) {
				return fs.SkipDir
			}
			return nil
		}
		visit(rel, d)
		return nil
	})
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
