package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/checkpoint"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// absent marks a file the restore must remove.
const absent = "<absent>"

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// TestCaptureRestore: a capture respects .gitignore and a restore brings
// back changed, removed and added files, replacing (never writing
// through) a hard link or a symbolic link to a file outside the
// workspace, and refusing a directory reached through a symbolic link.
func TestCaptureRestore(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		change  func(t *testing.T, ws, out string)
		want    map[string]string // workspace files after the restore
		wantErr string
	}{
		{"edit, add, remove", func(t *testing.T, ws, _ string) {
			write(t, filepath.Join(ws, "a.txt"), "changed")
			write(t, filepath.Join(ws, "new/b.txt"), "new")
			os.Remove(filepath.Join(ws, "dir/c.txt"))
		}, map[string]string{"a.txt": "old a", "dir/c.txt": "old c", "new/b.txt": absent}, ""},
		{"hard link to outside", func(t *testing.T, ws, out string) {
			os.Remove(filepath.Join(ws, "a.txt"))
			if err := os.Link(filepath.Join(out, "victim"), filepath.Join(ws, "a.txt")); err != nil {
				t.Fatal(err)
			}
		}, map[string]string{"a.txt": "old a"}, ""},
		{"symlink file to outside", func(t *testing.T, ws, out string) {
			os.Remove(filepath.Join(ws, "a.txt"))
			if err := os.Symlink(filepath.Join(out, "victim"), filepath.Join(ws, "a.txt")); err != nil {
				t.Fatal(err)
			}
		}, map[string]string{"a.txt": "old a"}, ""},
		{"planted temporary names", func(t *testing.T, ws, _ string) {
			write(t, filepath.Join(ws, ".gitignore"), "ignored\n.reel-*\n")
			for i := 1; i <= 3; i++ {
				write(t, filepath.Join(ws, fmt.Sprintf(".reel-restore-%d-%d", os.Getpid(), i)), "planted")
			}
			write(t, filepath.Join(ws, "a.txt"), "changed")
		}, map[string]string{"a.txt": "old a", ".gitignore": "ignored\n"}, ""},
		{"ignored symlink dir to outside", func(t *testing.T, ws, out string) {
			os.RemoveAll(filepath.Join(ws, "dir"))
			write(t, filepath.Join(ws, ".gitignore"), "ignored\ndir\n")
			if err := os.Symlink(out, filepath.Join(ws, "dir")); err != nil {
				t.Fatal(err)
			}
		}, nil, "refused: dir is reached through a symbolic link"},
	} {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			ws, out := filepath.Join(top, "ws"), filepath.Join(top, "out")
			write(t, filepath.Join(out, "victim"), "victim")
			write(t, filepath.Join(ws, "a.txt"), "old a")
			write(t, filepath.Join(ws, "dir/c.txt"), "old c")
			write(t, filepath.Join(ws, ".gitignore"), "ignored\n")
			write(t, filepath.Join(ws, "ignored"), "secret")
			st := checkpoint.Open(filepath.Join(top, "state"), ws, checkpoint.DefaultLimits)
			snap, err := st.Capture(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Files != 3 {
				t.Fatalf("captured %d files, want 3 (.gitignore, a.txt, dir/c.txt)", snap.Files)
			}
			c.change(t, ws, out)
			p, err := st.PlanRestore(ctx, snap.Tree, nil)
			if err == nil {
				_, err = st.Restore(ctx, p, st.Journal(1))
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("restore: %v, want an error containing %q", err, c.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := read(t, filepath.Join(out, "victim")); got != "victim" {
				t.Fatalf("the file outside the workspace holds %q after the restore", got)
			}
			if _, err := os.Stat(filepath.Join(out, "c.txt")); err == nil {
				t.Fatalf("the restore wrote c.txt outside the workspace")
			}
			for name, want := range c.want {
				got := read(t, filepath.Join(ws, name))
				if want == absent {
					if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
						got = "present"
					} else {
						got = absent
					}
				}
				if got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			if got := read(t, filepath.Join(ws, "ignored")); got != "secret" {
				t.Errorf("the ignored file holds %q", got)
			}
		})
	}
}

// TestCaptureBounded: a file above MaxFile is left out unread (a sparse
// terabyte), and a workspace above MaxTotal is skipped with a note.
func TestCaptureBounded(t *testing.T) {
	ctx := context.Background()
	top := t.TempDir()
	ws := filepath.Join(top, "ws")
	write(t, filepath.Join(ws, "small"), "x")
	f, err := os.Create(filepath.Join(ws, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	snap, err := checkpoint.Open(filepath.Join(top, "s1"), ws, checkpoint.Limits{MaxFile: 1 << 20, MaxTotal: 1 << 30, MaxFiles: 10}).Capture(ctx)
	if err != nil || snap.Tree == "" || len(snap.Left) != 1 || snap.Left[0] != "sparse" || snap.Files != 1 {
		t.Fatalf("capture = %+v, %v; want the sparse file left out", snap, err)
	}
	snap, err = checkpoint.Open(filepath.Join(top, "s2"), ws, checkpoint.Limits{MaxFile: 1 << 41, MaxTotal: 1 << 30, MaxFiles: 10}).Capture(ctx)
	if err != nil || snap.Tree != "" || !strings.Contains(snap.Skipped, "more than the checkpoint limit") {
		t.Fatalf("capture = %+v, %v; want it skipped", snap, err)
	}
}

// TestCapturePacks: a capture of a workspace of more than 4,096 files
// writes its blobs into a pack, not one loose object file each (a file
// system block and an inode per blob); a small workspace's capture stays
// loose. Both restore the same.
func TestCapturePacks(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		files    int
		maxStore int // files in the store after the capture
	}{
		{files: 20, maxStore: 60},
		{files: 6000, maxStore: 300},
	} {
		t.Run(fmt.Sprint(c.files), func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			for i := range c.files {
				write(t, filepath.Join(ws, fmt.Sprintf("d%02d", i/500), fmt.Sprintf("f%d.txt", i)), fmt.Sprintf("file %d\n", i))
			}
			st := checkpoint.Open(filepath.Join(dir, "store"), ws, checkpoint.DefaultLimits)
			snap, err := st.Capture(ctx)
			if err != nil || snap.Files != c.files {
				t.Fatalf("Capture: %+v, %v", snap, err)
			}
			n := 0
			_ = filepath.Walk(filepath.Join(dir, "store"), func(_ string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() {
					n++
				}
				return nil
			})
			if n > c.maxStore {
				t.Errorf("the store of a %d-file capture holds %d files, want at most %d (one loose object file per blob)", c.files, n, c.maxStore)
			}
			write(t, filepath.Join(ws, "d00", "f0.txt"), "changed")
			plan, err := st.PlanRestore(ctx, snap.Tree, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Restore(ctx, plan, st.Journal(1)); err != nil {
				t.Fatal(err)
			}
			if got := read(t, filepath.Join(ws, "d00", "f0.txt")); got != "file 0\n" {
				t.Errorf("f0.txt after the restore: %q", got)
			}
		})
	}
}
