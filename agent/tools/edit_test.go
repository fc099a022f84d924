package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEdit(t *testing.T) {
	const src = "alpha\nbeta\ngamma beta\ndelta\n"
	tests := []struct {
		name    string
		args    map[string]any
		want    string // file content afterwards
		line    int    // reported location line
		isError string // substring of the error text; "" for success
	}{
		{name: "replace once", args: map[string]any{"old_string": "delta", "new_string": "DELTA"},
			want: "alpha\nbeta\ngamma beta\nDELTA\n", line: 4},
		{name: "multi-line old string", args: map[string]any{"old_string": "alpha\nbeta\n", "new_string": "A\n"},
			want: "A\ngamma beta\ndelta\n", line: 1},
		{name: "delete", args: map[string]any{"old_string": "gamma ", "new_string": ""},
			want: "alpha\nbeta\nbeta\ndelta\n", line: 3},
		{name: "replace_all", args: map[string]any{"old_string": "beta", "new_string": "B", "replace_all": true},
			want: "alpha\nB\ngamma B\ndelta\n", line: 2},
		{name: "replace_all single", args: map[string]any{"old_string": "alpha", "new_string": "A", "replace_all": true},
			want: "A\nbeta\ngamma beta\ndelta\n", line: 1},
		{name: "ambiguous", args: map[string]any{"old_string": "beta", "new_string": "B"}, isError: "occurs 2 times"},
		{name: "not found", args: map[string]any{"old_string": "omega", "new_string": "O"}, isError: "old_string not found in "},
		{name: "identical", args: map[string]any{"old_string": "beta", "new_string": "beta"}, isError: "identical"},
		{name: "empty old_string", args: map[string]any{"old_string": "", "new_string": "x"}, isError: "must not be empty"},
		{name: "missing file", args: map[string]any{"file_path": "nope.txt", "old_string": "a", "new_string": "b"}, isError: "file not found"},
		{name: "directory", args: map[string]any{"file_path": ".", "old_string": "a", "new_string": "b"}, isError: "is a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			p := writeFile(t, env.Cwd, "f.txt", src)
			if _, ok := tc.args["file_path"]; !ok {
				tc.args["file_path"] = "f.txt"
			}
			res, err := Edit{}.Run(context.Background(), env, mustJSON(t, tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if tc.isError != "" {
				if !res.IsError || !strings.Contains(res.Text, tc.isError) {
					t.Fatalf("got %+v, want an error containing %q", res, tc.isError)
				}
				if got := readFile(t, p); got != src {
					t.Fatalf("failed edit changed the file to %q", got)
				}
				return
			}
			if res.IsError {
				t.Fatalf("unexpected error result: %s", res.Text)
			}
			if got := readFile(t, p); got != tc.want {
				t.Fatalf("file holds %q, want %q", got, tc.want)
			}
			if res.Diff == nil || res.Diff.Path != p || res.Diff.OldText == nil || *res.Diff.OldText != src || res.Diff.NewText != tc.want {
				t.Fatalf("diff %+v", res.Diff)
			}
			if len(res.Locations) != 1 || res.Locations[0] != (Location{Path: p, Line: tc.line}) {
				t.Fatalf("locations %v, want line %d", res.Locations, tc.line)
			}
			if res.Kind != KindEdit || res.Title != "Edit f.txt" {
				t.Fatalf("kind %q title %q", res.Kind, res.Title)
			}
		})
	}
}

func TestEditGuardDenied(t *testing.T) {
	env := newEnv(t)
	p := writeFile(t, env.Cwd, "f.txt", "keep me")
	env.Guard = GuardFunc(func(string) ([]string, error) { return nil, errors.New("blocked by mode read-only") })
	res, err := Edit{}.Run(context.Background(), env, mustJSON(t, map[string]any{"file_path": "f.txt", "old_string": "keep", "new_string": "lose"}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Text != "blocked by mode read-only" || res.Diff != nil {
		t.Fatalf("got %+v", res)
	}
	if got := readFile(t, p); got != "keep me" {
		t.Fatalf("denied edit changed the file to %q", got)
	}
}

func TestEditUsesFS(t *testing.T) {
	env := newEnv(t)
	p := filepath.Join(env.Cwd, "buf.go")
	mfs := newMemFS(map[string]string{p: "package x // TODO"})
	env.FS = mfs
	res, err := Edit{}.Run(context.Background(), env, mustJSON(t, map[string]any{"file_path": "buf.go", "old_string": "TODO", "new_string": "done"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || mfs.files[p] != "package x // done" {
		t.Fatalf("result %+v, fs %v", res, mfs.files)
	}
	if len(mfs.reads) != 1 || len(mfs.writes) != 1 {
		t.Fatalf("FS reads %v writes %v", mfs.reads, mfs.writes)
	}
	if _, err := os.Stat(p); err == nil {
		t.Fatal("edit wrote to disk despite the FS hook")
	}
}

func TestEditBadArgs(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "f.txt", "x")
	for _, raw := range []string{`{"file_path":"f.txt","old_string":"x"}`, `{"file_path":"f.txt","new_string":"y"}`, `not json`} {
		if _, err := (Edit{}).Run(context.Background(), env, []byte(raw)); !errors.Is(err, ErrInvalidArgs) {
			t.Errorf("Run(%s) = %v, want ErrInvalidArgs", raw, err)
		}
	}
}
