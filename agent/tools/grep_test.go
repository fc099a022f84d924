package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestGrep(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "a.go", "package a\n// TODO: one\nfunc A() {}\n")
	writeFile(t, env.Cwd, "b.txt", "todo lower\nnothing\nTODO upper\n")
	writeFile(t, env.Cwd, "sub/c.go", "package sub\n// TODO: two\n// TODO: three\n")
	writeFile(t, env.Cwd, "sub/d.ts", "// TODO ts\n")
	writeFile(t, env.Cwd, "bin.dat", "TODO\x00binary")
	writeFile(t, env.Cwd, ".git/config", "TODO in git\n")
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		isError string
	}{
		{name: "files_with_matches default", args: map[string]any{"pattern": "TODO"},
			want: "a.go\nb.txt\nsub/c.go\nsub/d.ts"},
		{name: "content", args: map[string]any{"pattern": "TODO", "output_mode": "content"},
			want: "a.go:2:// TODO: one\nb.txt:3:TODO upper\nsub/c.go:2:// TODO: two\nsub/c.go:3:// TODO: three\nsub/d.ts:1:// TODO ts"},
		{name: "count", args: map[string]any{"pattern": "TODO", "output_mode": "count"},
			want: "a.go:1\nb.txt:1\nsub/c.go:2\nsub/d.ts:1"},
		{name: "ignore case", args: map[string]any{"pattern": "todo", "-i": true, "output_mode": "count", "path": "b.txt"},
			want: "b.txt:2"},
		{name: "case sensitive", args: map[string]any{"pattern": "todo", "output_mode": "count"},
			want: "b.txt:1"},
		{name: "glob on names", args: map[string]any{"pattern": "TODO", "glob": "*.go"}, want: "a.go\nsub/c.go"},
		{name: "glob with braces", args: map[string]any{"pattern": "TODO", "glob": "*.{ts,txt}"}, want: "b.txt\nsub/d.ts"},
		{name: "glob on paths", args: map[string]any{"pattern": "TODO", "glob": "sub/*.go"}, want: "sub/c.go"},
		{name: "path dir", args: map[string]any{"pattern": "TODO", "path": "sub", "output_mode": "content"},
			want: "sub/c.go:2:// TODO: two\nsub/c.go:3:// TODO: three\nsub/d.ts:1:// TODO ts"},
		{name: "path file", args: map[string]any{"pattern": "func", "path": "a.go", "output_mode": "content"}, want: "a.go:3:func A() {}"},
		{name: "regexp", args: map[string]any{"pattern": `^package \w+$`, "output_mode": "content"},
			want: "a.go:1:package a\nsub/c.go:1:package sub"},
		{name: "no match", args: map[string]any{"pattern": "NOPE"}, want: "No matches found"},
		{name: "binary and .git skipped", args: map[string]any{"pattern": "binary|in git"}, want: "No matches found"},
		{name: "invalid regexp", args: map[string]any{"pattern": "("}, isError: "invalid regular expression"},
		{name: "invalid mode", args: map[string]any{"pattern": "x", "output_mode": "lines"}, isError: "unknown output_mode"},
		{name: "invalid glob", args: map[string]any{"pattern": "x", "glob": "["}, isError: "invalid glob"},
		{name: "missing path", args: map[string]any{"pattern": "x", "path": "nope"}, isError: "path not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Grep{}.Run(context.Background(), env, mustJSON(t, tc.args))
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

func TestGrepCap(t *testing.T) {
	env := newEnv(t)
	var b strings.Builder
	const n = MaxListEntries * 2
	for i := range n {
		fmt.Fprintf(&b, "match %d\n", i)
	}
	writeFile(t, env.Cwd, "big.txt", b.String())
	res, err := Grep{}.Run(context.Background(), env, mustJSON(t, map[string]any{"pattern": "match", "output_mode": "content"}))
	if err != nil {
		t.Fatal(err)
	}
	body, note, _ := strings.Cut(res.Text, "\n\n")
	if got := len(strings.Split(body, "\n")); got != MaxListEntries {
		t.Fatalf("capped output has %d lines", got)
	}
	if !strings.HasPrefix(body, "big.txt:1:match 0\n") || !strings.Contains(note, fmt.Sprintf("of %d matching lines", n)) {
		t.Fatalf("head %q note %q", body[:40], note)
	}
	if filepath.Dir(res.SpillPath) != env.SpillDir {
		t.Fatalf("spill path %q not in %q", res.SpillPath, env.SpillDir)
	}
	if full := readFile(t, res.SpillPath); !strings.Contains(full, fmt.Sprintf("big.txt:%d:match %d\n", n, n-1)) {
		t.Fatal("spill file lacks the last match")
	}
}

func TestGrepCancelled(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "a.txt", "x")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Grep{}).Run(ctx, env, mustJSON(t, map[string]any{"pattern": "x"})); err == nil {
		t.Fatal("grep with a cancelled context succeeded")
	}
}
