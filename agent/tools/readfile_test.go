package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadRegularFile: whatever the path leads to, the read is bounded
// and cannot block: only a regular file off procfs and sysfs within the
// limit is read.
func TestReadRegularFile(t *testing.T) {
	dir := realTempDir(t)
	writeFile(t, dir, "ok.md", "rules\n")
	writeFile(t, dir, "big.md", strings.Repeat("x", 101))
	writeFile(t, dir, "exact.md", strings.Repeat("x", 100))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"to-ok": "ok.md", "to-zero": "/dev/zero", "to-environ": "/proc/self/environ",
		"to-cmdline": "/proc/self/cmdline", "to-sys": "/sys/kernel/mm/transparent_hugepage/enabled",
		"to-fifo": "fifo", "loop": "loop", "dangling": "nowhere", "to-dir": ".",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		want string
		err  error // nil: success; fs.ErrNotExist, ErrNotRegular, ErrTooLarge; errAny
	}{
		{"ok.md", "rules\n", nil},
		{"to-ok", "rules\n", nil},
		{"exact.md", strings.Repeat("x", 100), nil},
		{"big.md", "", ErrTooLarge},
		{"fifo", "", ErrNotRegular},
		{"to-fifo", "", ErrNotRegular},
		{"to-zero", "", ErrNotRegular},
		{"to-environ", "", ErrNotRegular},
		{"to-cmdline", "", ErrNotRegular},
		{"to-sys", "", errAny},
		{"to-dir", "", ErrNotRegular},
		{"loop", "", errAny},
		{"dangling", "", fs.ErrNotExist},
		{"missing", "", fs.ErrNotExist},
	} {
		done := make(chan struct{})
		var got []byte
		var v FileVersion
		var err error
		go func() {
			defer close(done)
			got, v, err = ReadRegularFile(filepath.Join(dir, tc.name), 100)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadRegularFile blocked", tc.name)
		}
		switch {
		case tc.err == nil && (err != nil || string(got) != tc.want || v.Size != int64(len(tc.want))):
			t.Errorf("%s: %q %+v %v, want %q", tc.name, got, v, err, tc.want)
		case tc.err == errAny && err == nil:
			t.Errorf("%s: read %q, want an error", tc.name, got)
		case tc.err != nil && tc.err != errAny && !errors.Is(err, tc.err):
			t.Errorf("%s: %q %v, want %v", tc.name, got, err, tc.err)
		}
	}
}

// errAny stands for any error in a table.
var errAny = errors.New("any error")
