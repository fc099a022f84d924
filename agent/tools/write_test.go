package tools

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name    string
		seed    map[string]string // files in the cwd before the call
		args    map[string]any
		path    string  // expected file, relative to the cwd
		old     *string // expected Diff.OldText
		isError string  // substring of the error text; "" for success
	}{
		{name: "new file", args: map[string]any{"file_path": "a.txt", "content": "hello\n"}, path: "a.txt"},
		{name: "nested new dirs", args: map[string]any{"file_path": "x/y/z/a.txt", "content": "deep"}, path: "x/y/z/a.txt"},
		{name: "overwrite", seed: map[string]string{"a.txt": "before"}, args: map[string]any{"file_path": "a.txt", "content": "after"},
			path: "a.txt", old: ptr("before")},
		{name: "empty content", seed: map[string]string{"a.txt": "before"}, args: map[string]any{"file_path": "a.txt", "content": ""},
			path: "a.txt", old: ptr("before")},
		{name: "extra escalation args", args: map[string]any{"file_path": "e.md", "content": "x", "sandbox_permissions": "danger-full-access", "justification": "asked"},
			path: "e.md"},
		{name: "directory", seed: map[string]string{"d/keep": ""}, args: map[string]any{"file_path": "d", "content": "x"}, isError: "is a directory"},
		{name: "parent is a file", seed: map[string]string{"f": "file"}, args: map[string]any{"file_path": "f/a.txt", "content": "x"}, isError: "not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			for name, content := range tc.seed {
				writeFile(t, env.Cwd, name, content)
			}
			res, err := Write{}.Run(context.Background(), env, mustJSON(t, tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if tc.isError != "" {
				if !res.IsError || !strings.Contains(res.Text, tc.isError) {
					t.Fatalf("got %+v, want an error containing %q", res, tc.isError)
				}
				return
			}
			if res.IsError {
				t.Fatalf("unexpected error result: %s", res.Text)
			}
			p := filepath.Join(env.Cwd, filepath.FromSlash(tc.path))
			content := tc.args["content"].(string)
			if got := readFile(t, p); got != content {
				t.Fatalf("file holds %q, want %q", got, content)
			}
			if res.Diff == nil || res.Diff.Path != p || res.Diff.NewText != content {
				t.Fatalf("diff %+v", res.Diff)
			}
			if (res.Diff.OldText == nil) != (tc.old == nil) || (tc.old != nil && *res.Diff.OldText != *tc.old) {
				t.Fatalf("diff old text %v, want %v", res.Diff.OldText, tc.old)
			}
			if !strings.HasPrefix(res.Text, "Wrote ") || !strings.Contains(res.Text, p) {
				t.Fatalf("text %q", res.Text)
			}
			if res.Kind != KindEdit || res.Title != "Write "+tc.args["file_path"].(string) {
				t.Fatalf("kind %q title %q", res.Kind, res.Title)
			}
		})
	}
}

// recording adapts a recordingGuard to the Guard interface: it records
// the path, then refuses with the recorder's error or confines the write
// to roots.
func recording(g *recordingGuard, roots ...string) Guard {
	return GuardFunc(func(p string) ([]string, error) {
		if err := g.CheckWrite(p); err != nil {
			return nil, err
		}
		return roots, nil
	})
}

func TestWriteGuardDenied(t *testing.T) {
	env := newEnv(t)
	existing := writeFile(t, env.Cwd, "keep.txt", "original")
	denial := errors.New("sandbox: write denied in read-only mode [reel-sandbox-denied]")
	guard := &recordingGuard{err: denial}
	env.Guard = recording(guard)
	tests := []struct {
		name string
		path string
	}{
		{"existing file", "keep.txt"},
		{"new file in new dir", "new/dir/file.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Write{}.Run(context.Background(), env, mustJSON(t, map[string]any{"file_path": tc.path, "content": "changed"}))
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.Text != denial.Error() {
				t.Fatalf("got %+v, want the denial verbatim", res)
			}
			if res.Diff != nil {
				t.Fatalf("denied write reports a diff")
			}
		})
	}
	if got := readFile(t, existing); got != "original" {
		t.Fatalf("denied write changed the file to %q", got)
	}
	if _, err := os.Stat(filepath.Join(env.Cwd, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("denied write created directories: %v", err)
	}
	want := []string{existing, filepath.Join(env.Cwd, "new", "dir", "file.txt")}
	if strings.Join(guard.paths, "|") != strings.Join(want, "|") {
		t.Fatalf("guard saw %q, want %q", guard.paths, want)
	}
}

// TestWriteGuardSeesLexicalPath checks that the Guard is asked about the
// clean absolute path as the model named it, with no symbolic link
// resolved: resolution happens beneath the root, not in the Guard.
func TestWriteGuardSeesLexicalPath(t *testing.T) {
	cwd := realTempDir(t)
	outside := realTempDir(t)
	if err := os.Symlink(outside, filepath.Join(cwd, "dirlink")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"dirlink/new/file.txt", filepath.Join(cwd, "dirlink", "new", "file.txt")},
		{"plain/../inside.txt", filepath.Join(cwd, "inside.txt")},
		{"./a//b.txt", filepath.Join(cwd, "a", "b.txt")},
		{filepath.Join(outside, "x"), filepath.Join(outside, "x")},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			guard := &recordingGuard{err: errors.New("denied")}
			env := &Env{Cwd: cwd, SpillDir: t.TempDir(), Guard: recording(guard)}
			calls := []struct {
				tool Tool
				args map[string]any
			}{
				{Write{}, map[string]any{"file_path": tc.path, "content": "x"}},
				{Edit{}, map[string]any{"file_path": tc.path, "old_string": "a", "new_string": "b"}},
			}
			for _, c := range calls {
				tool := c.tool
				res, err := tool.Run(context.Background(), env, mustJSON(t, c.args))
				if err != nil {
					t.Fatal(err)
				}
				if !res.IsError || res.Text != "denied" {
					t.Fatalf("%s: %+v", tool.Name(), res)
				}
			}
			if len(guard.paths) != 2 || guard.paths[0] != tc.want || guard.paths[1] != tc.want {
				t.Fatalf("guard saw %q, want %q twice", guard.paths, tc.want)
			}
		})
	}
	if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
		t.Fatalf("denied writes created %v outside (%v)", entries, err)
	}
}

func TestWriteUsesFS(t *testing.T) {
	env := newEnv(t)
	p := filepath.Join(env.Cwd, "buf.txt")
	mfs := newMemFS(map[string]string{p: "buffer before"})
	env.FS = mfs
	res, err := Write{}.Run(context.Background(), env, mustJSON(t, map[string]any{"file_path": "buf.txt", "content": "buffer after"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || mfs.files[p] != "buffer after" || res.Diff.OldText == nil || *res.Diff.OldText != "buffer before" {
		t.Fatalf("result %+v, fs %v", res, mfs.files)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("write went to disk despite the FS hook: %v", err)
	}
	// A file the editor does not know and the disk does not hold is new.
	res, err = Write{}.Run(context.Background(), env, mustJSON(t, map[string]any{"file_path": "sub/new.txt", "content": "n"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Diff.OldText != nil || mfs.files[filepath.Join(env.Cwd, "sub", "new.txt")] != "n" {
		t.Fatalf("new file through FS: %+v", res)
	}
}

func ptr(s string) *string { return &s }

// TestUnconfinedRewriteBounded: without a sandbox (danger-full-access)
// write and edit still never block on a FIFO nor read a device or a huge
// file whole: each such target is an error result, promptly.
func TestUnconfinedRewriteBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse")
	if err := os.WriteFile(sparse, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 8<<40); err != nil {
		t.Fatalf("making an 8 TiB sparse file: %v", err)
	}
	env := &Env{Cwd: dir}
	for _, target := range []string{fifo, sparse, "/dev/zero"} {
		for _, tool := range []Tool{Write{}, Edit{}} {
			args := map[string]any{"file_path": target, "content": "x"}
			if tool.Name() == "edit" {
				args = map[string]any{"file_path": target, "old_string": "a", "new_string": "b"}
			}
			done := make(chan Result, 1)
			go func() {
				res, err := tool.Run(context.Background(), env, mustJSON(t, args))
				if err != nil {
					res = Result{Text: err.Error(), IsError: true}
				}
				done <- res
			}()
			select {
			case res := <-done:
				if !res.IsError || !strings.Contains(res.Text, target) {
					t.Errorf("%s %s: %+v, want an error naming the path", tool.Name(), target, res)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%s %s hung (no answer within a minute)", tool.Name(), target)
			}
		}
	}
	if fi, err := os.Stat(sparse); err != nil || fi.Size() != 8<<40 {
		t.Errorf("the sparse file changed: %v %v", fi.Size(), err)
	}
}
