package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/agent/checkpoint"
)

// benchTree makes n small files (100 per directory) under dir.
func benchTree(b *testing.B, dir string, n int) {
	b.Helper()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.txt", i))
		if i%100 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\nsome content of a source file\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// BenchmarkCapture measures a checkpoint of a workspace of 1,000 and
// 50,000 files: the first (every file stored), a later one after one file
// changed (what each turn pays), and plain `git add -A && git write-tree`
// into a fresh repository on the same tree. store-bytes is what the
// capture added to the store.
func BenchmarkCapture(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1000, 50000} {
		ws := filepath.Join(b.TempDir(), "ws")
		benchTree(b, ws, n)
		b.Run(fmt.Sprintf("files=%d/first", n), func(b *testing.B) {
			var added int64
			for i := range b.N {
				dir := filepath.Join(b.TempDir(), fmt.Sprint(i))
				st := checkpoint.Open(dir, ws, checkpoint.DefaultLimits)
				if _, err := st.Capture(ctx); err != nil {
					b.Fatal(err)
				}
				added = dirBytes(dir)
			}
			b.ReportMetric(float64(added), "store-bytes")
		})
		b.Run(fmt.Sprintf("files=%d/next", n), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "s")
			st := checkpoint.Open(dir, ws, checkpoint.DefaultLimits)
			if _, err := st.Capture(ctx); err != nil {
				b.Fatal(err)
			}
			before := dirBytes(dir)
			b.ResetTimer()
			for i := range b.N {
				if err := os.WriteFile(filepath.Join(ws, "d000", "f00000.txt"), []byte(fmt.Sprint("changed ", i)), 0o644); err != nil {
					b.Fatal(err)
				}
				if _, err := st.Capture(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(dirBytes(dir)-before)/float64(b.N), "store-bytes")
		})
		b.Run(fmt.Sprintf("files=%d/plain-git", n), func(b *testing.B) {
			for i := range b.N {
				dir := filepath.Join(b.TempDir(), fmt.Sprint(i))
				if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
					b.Fatalf("git init: %v %s", err, out)
				}
				env := append(os.Environ(), "GIT_DIR="+dir, "GIT_WORK_TREE="+ws, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
				for _, args := range [][]string{{"add", "-A"}, {"write-tree"}} {
					cmd := exec.Command("git", args...)
					cmd.Dir, cmd.Env = ws, env
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("git %v: %v %s", args, err, out)
					}
				}
			}
		})
	}
}
