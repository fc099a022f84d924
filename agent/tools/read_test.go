package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "five.txt", "one\ntwo\nthree\nfour\nfive\n")
	writeFile(t, env.Cwd, "crlf.txt", "a\r\nb\r\n")
	writeFile(t, env.Cwd, "nofinal.txt", "x\ny")
	writeFile(t, env.Cwd, "empty.txt", "")
	writeFile(t, env.Cwd, "long.txt", strings.Repeat("é", MaxLineRunes+5)+"\n")
	writeFile(t, env.Cwd, "bin.dat", "abc\x00def")
	writeFile(t, env.Cwd, "sub/nested.txt", "deep\n")
	if err := os.Mkdir(filepath.Join(env.Cwd, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	many := make([]string, DefaultReadLimit+10)
	for i := range many {
		many[i] = fmt.Sprint("line", i+1)
	}
	writeFile(t, env.Cwd, "many.txt", strings.Join(many, "\n"))

	tests := []struct {
		name     string
		args     map[string]any
		want     string // exact text, unless empty
		contains []string
		absent   []string
		isError  bool
	}{
		{name: "whole file", args: map[string]any{"file_path": "five.txt"},
			want: "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive"},
		{name: "offset and limit", args: map[string]any{"file_path": "five.txt", "offset": 2, "limit": 2},
			want: "     2\ttwo\n     3\tthree\n\n(Showing lines 2-3 of 5. Use offset=4 to read on.)"},
		{name: "offset to the end", args: map[string]any{"file_path": "five.txt", "offset": 5},
			want: "     5\tfive"},
		{name: "offset past end", args: map[string]any{"file_path": "five.txt", "offset": 9},
			contains: []string{"offset 9 is past the end", "has 5 lines"}},
		{name: "absolute path", args: map[string]any{"file_path": filepath.Join(env.Cwd, "sub", "nested.txt")},
			want: "     1\tdeep"},
		{name: "nested relative path", args: map[string]any{"file_path": "sub/nested.txt"},
			want: "     1\tdeep"},
		{name: "crlf", args: map[string]any{"file_path": "crlf.txt"}, want: "     1\ta\n     2\tb"},
		{name: "no final newline", args: map[string]any{"file_path": "nofinal.txt"}, want: "     1\tx\n     2\ty"},
		{name: "empty file", args: map[string]any{"file_path": "empty.txt"}, contains: []string{"is empty"}},
		{name: "default limit", args: map[string]any{"file_path": "many.txt"},
			contains: []string{"  2000\tline2000\n", "(Showing lines 1-2000 of 2010. Use offset=2001 to read on.)"},
			absent:   []string{"line2001"}},
		{name: "long line cut", args: map[string]any{"file_path": "long.txt"},
			contains: []string{strings.Repeat("é", MaxLineRunes) + "… [line cut: 2005 characters]"},
			absent:   []string{strings.Repeat("é", MaxLineRunes+1)}},
		{name: "missing file", args: map[string]any{"file_path": "nope.txt"}, isError: true,
			contains: []string{"file not found: " + filepath.Join(env.Cwd, "nope.txt")}},
		{name: "directory", args: map[string]any{"file_path": "dir"}, isError: true, contains: []string{"is a directory"}},
		{name: "binary", args: map[string]any{"file_path": "bin.dat"}, isError: true, contains: []string{"binary file"}},
		{name: "negative offset", args: map[string]any{"file_path": "five.txt", "offset": -1}, isError: true, contains: []string{"offset must be"}},
		{name: "negative limit", args: map[string]any{"file_path": "five.txt", "limit": -1}, isError: true, contains: []string{"limit must be"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Read{}.Run(context.Background(), env, mustJSON(t, tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v, want %v; text %q", res.IsError, tc.isError, res.Text)
			}
			if tc.want != "" && res.Text != tc.want {
				t.Fatalf("text\n%q\nwant\n%q", res.Text, tc.want)
			}
			for _, s := range tc.contains {
				if !strings.Contains(res.Text, s) {
					t.Errorf("text %q does not contain %q", res.Text, s)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(res.Text, s) {
					t.Errorf("text contains %q", s)
				}
			}
			if res.Kind != KindRead || len(res.Locations) != 1 || !filepath.IsAbs(res.Locations[0].Path) {
				t.Errorf("kind %q locations %v", res.Kind, res.Locations)
			}
		})
	}
}

func TestReadBadArgs(t *testing.T) {
	env := newEnv(t)
	for _, raw := range []string{`{`, `{"offset":1}`, `{"file_path":7}`} {
		if _, err := (Read{}).Run(context.Background(), env, []byte(raw)); err == nil {
			t.Errorf("Run(%s) succeeded", raw)
		}
	}
	if _, err := (Read{}).Run(context.Background(), &Env{Cwd: "relative"}, []byte(`{"file_path":"a"}`)); err == nil {
		t.Errorf("Run with a relative cwd succeeded")
	}
}

func TestReadUsesFS(t *testing.T) {
	env := newEnv(t)
	p := filepath.Join(env.Cwd, "buffer.txt")
	writeFile(t, env.Cwd, "buffer.txt", "on disk\n")
	mfs := newMemFS(map[string]string{p: "unsaved buffer\n"})
	env.FS = mfs
	res, err := Read{}.Run(context.Background(), env, mustJSON(t, map[string]any{"file_path": "buffer.txt"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "     1\tunsaved buffer" {
		t.Fatalf("text %q: the FS hook was not used", res.Text)
	}
	if len(mfs.reads) != 1 || mfs.reads[0] != p {
		t.Fatalf("FS reads %v, want [%s]", mfs.reads, p)
	}
	res, err = Read{}.Run(context.Background(), env, mustJSON(t, map[string]any{"file_path": "gone.txt"}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text, "file not found") {
		t.Fatalf("missing file through FS: %+v", res)
	}
}
