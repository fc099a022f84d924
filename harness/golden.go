package harness

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// Golden checks (or rewrites) one golden file: dir/name_1.snap<ext>, the
// go-snaps standalone layout, so `go test` (through go-snaps) and
// `reel snapshot` share the same files.
type Golden interface {
	Match(dir, name, ext string, content []byte) error
}

// GoldenPath is the file a golden lives in.
func GoldenPath(dir, name, ext string) string {
	return filepath.Join(dir, name+"_1.snap"+ext)
}

// FileGolden compares golden files directly; with Update it rewrites them
// atomically instead of failing.
type FileGolden struct{ Update bool }

// Match implements Golden.
func (g FileGolden) Match(dir, name, ext string, content []byte) error {
	path := GoldenPath(dir, name, ext)
	want, ok, err := readFile(path)
	if err != nil {
		return err
	}
	if ok && bytes.Equal(want, content) {
		return nil
	}
	if g.Update {
		return writeAtomic(path, content)
	}
	if !ok {
		return fmt.Errorf("%s: no golden yet (run `reel snapshot --refresh` to create it):\n%s", path, clip(string(content)))
	}
	return fmt.Errorf("%s differs:\n%s", path, TextDiff(string(want), string(content)))
}

// writeAtomic writes a file whole or not at all (temp file, then rename).
func writeAtomic(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
