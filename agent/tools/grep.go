package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// The output modes of grep.
const (
	GrepFilesWithMatches = "files_with_matches"
	GrepContent          = "content"
	GrepCount            = "count"
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
	}

	var lines []string
	search := func(file string) {
		data, err := os.ReadFile(file)
		if err != nil || bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
			return
		}
		shown := env.display(file)
		count := 0
		for i, line := range splitLines(string(data)) {
			if !re.MatchString(line) {
				continue
			}
			count++
			switch mode {
			case GrepFilesWithMatches:
				lines = append(lines, shown)
				return
			case GrepContent:
				lines = append(lines, fmt.Sprintf("%s:%d:%s", shown, i+1, cutLine(line)))
			}
		}
		if mode == GrepCount && count > 0 {
			lines = append(lines, fmt.Sprintf("%s:%d", shown, count))
		}
	}
	if !fi.IsDir() {
		search(root)
	} else {
		err = walkFiles(ctx, root, nil, func(rel string, d fs.DirEntry) {
			if !d.Type().IsRegular() || (filter != nil && !filter.matchFile(rel)) {
				return
			}
			search(filepath.Join(root, filepath.FromSlash(rel)))
		})
		if err != nil {
			return Result{}, fmt.Errorf("tools: grep %q in %s: %w", a.Pattern, root, err)
		}
	}
	if len(lines) == 0 {
		return Result{Text: "No matches found", Kind: KindSearch, Title: title, Locations: locs}, nil
	}
	what := map[string]string{GrepFilesWithMatches: "matching files", GrepContent: "matching lines", GrepCount: "files with matches"}[mode]
	text, spillPath := env.capLines("grep", lines, what)
	return Result{Text: text, Kind: KindSearch, Title: title, Locations: locs, SpillPath: spillPath}, nil
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
