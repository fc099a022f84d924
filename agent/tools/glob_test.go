package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGlobPattern(t *testing.T) {
	tests := []struct {
		pattern string
		path    string
		match   bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/main.go", false},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c/main.go", true},
		{"**/*.go", "a/b/main.txt", false},
		{"src/**", "src/a/b", true},
		{"src/**", "src", true}, // as doublestar: a trailing /** also matches the directory itself
		{"src/**/test/*.ts", "src/test/x.ts", true},
		{"src/**/test/*.ts", "src/a/b/test/x.ts", true},
		{"src/**/test/*.ts", "src/a/b/test/y/x.ts", false},
		{"**/**/x", "a/x", true},
		{"*.{ts,tsx}", "a.tsx", true},
		{"*.{ts,tsx}", "a.js", false},
		{"{src,lib}/**/*.{c,h}", "lib/x/y.h", true},
		{"{a,{b,c}}/f", "c/f", true},
		{"{unclosed/f", "{unclosed/f", true},
		{"./docs/*.md", "docs/a.md", true},
		{`\*.md`, "*.md", true},
		{`\*.md`, "a.md", false},
		{"[ab].txt", "b.txt", true},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+" "+tc.path, func(t *testing.T) {
			g, err := compileGlob(tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.match(tc.path); got != tc.match {
				t.Fatalf("match = %v, want %v (compiled %q)", got, tc.match, g)
			}
		})
	}
}

func TestGlobPatternMayContain(t *testing.T) {
	tests := []struct {
		pattern string
		dir     string
		want    bool
	}{
		{"src/*.go", "src", true},
		{"src/*.go", "lib", false},
		{"src/*.go", "src/deeper", false},
		{"**/*.go", "any/depth", true},
		{"a/b/c", "a/b", true},
		{"a/b/c", "a/b/c", false},
		{"{x,y}/z", "y", true},
	}
	for _, tc := range tests {
		g, err := compileGlob(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.mayContain(tc.dir); got != tc.want {
			t.Errorf("mayContain(%q, %q) = %v, want %v", tc.pattern, tc.dir, got, tc.want)
		}
	}
}

func TestGlobPatternInvalid(t *testing.T) {
	for _, p := range []string{"[", "a/[b", strings.Repeat("{a,b}", 11), strings.Repeat("{", 40) + strings.Repeat("}", 40)} {
		if _, err := compileGlob(p); err == nil {
			t.Errorf("compileGlob(%q) succeeded", p)
		}
	}
}

// globTree builds a small tree with increasing modification times in the
// listed order, so the result order (oldest first) is the creation order.
func globTree(t *testing.T, dir string, files ...string) {
	t.Helper()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, f := range files {
		p := writeFile(t, dir, f, f)
		mt := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGlob(t *testing.T) {
	env := newEnv(t)
	globTree(t, env.Cwd,
		"main.go", "README.md", "pkg/a.go", "pkg/sub/b.go", "pkg/sub/c.txt", "web/x.ts", "web/y.tsx", ".git/HEAD.go", "pkg/.hidden.go")
	// Two files with equal times are ordered by name.
	same := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range []string{"tie/b.md", "tie/a.md"} {
		p := writeFile(t, env.Cwd, f, "")
		if err := os.Chtimes(p, same, same); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		isError string
	}{
		{name: "basename at any depth", args: map[string]any{"pattern": "*.go"},
			want: "main.go\npkg/a.go\npkg/sub/b.go\npkg/.hidden.go"},
		{name: "doublestar oldest first", args: map[string]any{"pattern": "**/*.go"},
			want: "main.go\npkg/a.go\npkg/sub/b.go\npkg/.hidden.go"},
		{name: "anchored", args: map[string]any{"pattern": "pkg/*.go"}, want: "pkg/a.go\npkg/.hidden.go"},
		{name: "braces", args: map[string]any{"pattern": "**/*.{ts,tsx}"}, want: "web/x.ts\nweb/y.tsx"},
		{name: "braces at any depth", args: map[string]any{"pattern": "*.{ts,tsx}"}, want: "web/x.ts\nweb/y.tsx"},
		{name: "base path", args: map[string]any{"pattern": "**/*.go", "path": "pkg/sub"}, want: "pkg/sub/b.go"},
		{name: "pattern relative to base", args: map[string]any{"pattern": "sub/*", "path": "pkg"}, want: "pkg/sub/b.go\npkg/sub/c.txt"},
		{name: "equal times by name", args: map[string]any{"pattern": "tie/*.md"}, want: "tie/a.md\ntie/b.md"},
		{name: "absolute pattern", args: map[string]any{"pattern": filepath.ToSlash(env.Cwd) + "/pkg/**/*.txt"}, want: "pkg/sub/c.txt"},
		{name: "absolute base", args: map[string]any{"pattern": "*.go", "path": filepath.Join(env.Cwd, "pkg")}, want: "pkg/a.go\npkg/sub/b.go\npkg/.hidden.go"},
		{name: "no match", args: map[string]any{"pattern": "**/*.rs"}, want: "No files found"},
		{name: "invalid pattern", args: map[string]any{"pattern": "[oops"}, isError: "invalid glob pattern"},
		{name: "missing base", args: map[string]any{"pattern": "*", "path": "nope"}, isError: "path not found"},
		{name: "base is a file", args: map[string]any{"pattern": "*", "path": "main.go"}, isError: "is not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Glob{}.Run(context.Background(), env, mustJSON(t, tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if tc.isError != "" {
				if !res.IsError || !strings.Contains(res.Text, tc.isError) {
					t.Fatalf("got %+v, want an error containing %q", res, tc.isError)
				}
				return
			}
			if res.IsError || res.Text != tc.want {
				t.Fatalf("text\n%s\nwant\n%s", res.Text, tc.want)
			}
			if res.Kind != KindSearch {
				t.Fatalf("kind %q", res.Kind)
			}
		})
	}
}

func TestGlobOutsideCwdIsAbsolute(t *testing.T) {
	env := newEnv(t)
	other := realTempDir(t)
	writeFile(t, other, "o.txt", "")
	res, err := Glob{}.Run(context.Background(), env, mustJSON(t, map[string]any{"pattern": "*.txt", "path": other}))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(other, "o.txt"); res.Text != want {
		t.Fatalf("text %q, want %q", res.Text, want)
	}
	if len(res.Locations) != 1 || res.Locations[0].Path != other {
		t.Fatalf("locations %v", res.Locations)
	}
}

func TestGlobCap(t *testing.T) {
	env := newEnv(t)
	const n = DefaultGlobMaxResults + 5
	for i := range n {
		writeFile(t, env.Cwd, fmt.Sprintf("d/f%04d.txt", i), "")
	}
	res, err := Glob{}.Run(context.Background(), env, mustJSON(t, map[string]any{"pattern": "d/*.txt"}))
	if err != nil {
		t.Fatal(err)
	}
	body, note, ok := strings.Cut(res.Text, "\n\n")
	if !ok || len(strings.Split(body, "\n")) != DefaultGlobMaxResults {
		t.Fatalf("capped listing has %d lines", len(strings.Split(body, "\n")))
	}
	// By default the whole sorted list is saved, and the footer says where.
	want := fmt.Sprintf("(Showing %d of %d paths. Full sorted result stored at: %s. Use read with offset/limit, or grep this path to search within it.)", DefaultGlobMaxResults, n, res.SpillPath)
	if res.SpillPath == "" || note != want {
		t.Fatalf("note %q, want %q", note, want)
	}
	saved, err := os.ReadFile(res.SpillPath)
	if err != nil || len(strings.Split(strings.TrimSpace(string(saved)), "\n")) != n {
		t.Fatalf("the spill file holds %d paths (%v), want %d", len(strings.Split(strings.TrimSpace(string(saved)), "\n")), err, n)
	}
	// Without a spill store the footer says the list was not saved.
	noSpill := *env
	noSpill.GlobNoSpill = true
	res, err = Glob{}.Run(context.Background(), &noSpill, mustJSON(t, map[string]any{"pattern": "d/*.txt"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, note, _ := strings.Cut(res.Text, "\n\n"); note != fmt.Sprintf("(Showing %d of %d paths. The complete result could not be saved; narrow pattern or path to see more.)", DefaultGlobMaxResults, n) || res.SpillPath != "" {
		t.Fatalf("without a spill store: note %q, spill %q", note, res.SpillPath)
	}
}

func TestGlobCancelled(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "a/b.txt", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Glob{}).Run(ctx, env, mustJSON(t, map[string]any{"pattern": "**"})); err == nil {
		t.Fatal("glob with a cancelled context succeeded")
	}
}
