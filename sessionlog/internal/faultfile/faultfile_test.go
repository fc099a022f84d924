package faultfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/sessionlog/internal/faultfile"
)

func openAppend(path string) (faultfile.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func newFile(t *testing.T, content string, inj faultfile.Injector) (string, *faultfile.Opener, faultfile.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	o := &faultfile.Opener{Inj: inj, Open: openAppend}
	f, err := o.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return path, o, f
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNthFailsExactlyOne(t *testing.T) {
	path, _, f := newFile(t, "", faultfile.Nth(faultfile.OpWrite, 2))
	for i, want := range []error{nil, faultfile.ErrInjected, nil} {
		if _, err := f.Write([]byte{'a' + byte(i)}); !errors.Is(err, want) {
			t.Fatalf("write %d: %v, want %v", i+1, err, want)
		}
		if err := f.Sync(); err != nil {
			t.Fatalf("sync %d: %v", i+1, err)
		}
	}
	// The failed write wrote nothing.
	if got := read(t, path); got != "ac" {
		t.Fatalf("file holds %q", got)
	}
}

func TestTornWritesHalf(t *testing.T) {
	path, _, f := newFile(t, "", faultfile.Torn(faultfile.Nth(faultfile.OpWrite, 1)))
	n, err := f.Write([]byte("abcdefgh"))
	if !errors.Is(err, faultfile.ErrInjected) || n != 4 {
		t.Fatalf("torn write: %d, %v", n, err)
	}
	if got := read(t, path); got != "abcd" {
		t.Fatalf("file holds %q", got)
	}
}

func TestEveryAndAny(t *testing.T) {
	inj := faultfile.Any(
		faultfile.Every(func(op faultfile.Op, _ string) bool { return op == faultfile.OpTruncate }),
		faultfile.Nth(faultfile.OpSync, 1),
	)
	_, _, f := newFile(t, "x", inj)
	for range 2 {
		if err := f.Truncate(0); !errors.Is(err, faultfile.ErrInjected) {
			t.Fatalf("truncate: %v", err)
		}
	}
	if err := f.Sync(); !errors.Is(err, faultfile.ErrInjected) {
		t.Fatalf("first sync: %v", err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("second sync: %v", err)
	}
}

func TestOpenFails(t *testing.T) {
	var c faultfile.Counter
	o := &faultfile.Opener{Inj: faultfile.Any(&c, faultfile.Nth(faultfile.OpOpen, 1)), Open: openAppend}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := o.OpenFile(path); !errors.Is(err, faultfile.ErrInjected) || f != nil {
		t.Fatalf("first open: %v, %v", f, err)
	}
	if _, ok := o.Durable(path); ok {
		t.Fatal("a file that failed to open has a durable length")
	}
	f, err := o.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if c.Count(faultfile.OpOpen) != 2 || c.Count(faultfile.OpClose) != 1 || c.Count(faultfile.OpWrite) != 0 {
		t.Fatalf("counted open %d, close %d, write %d", c.Count(faultfile.OpOpen), c.Count(faultfile.OpClose), c.Count(faultfile.OpWrite))
	}
}

// Durable follows the last successful Sync: unsynced writes and a failed
// Sync do not count, a truncation does at once.
func TestDurable(t *testing.T) {
	path, o, f := newFile(t, "head\n", faultfile.Nth(faultfile.OpSync, 2))
	durable := func(want int64) {
		t.Helper()
		if got, ok := o.Durable(path); !ok || got != want {
			t.Fatalf("Durable = %d, %t; want %d", got, ok, want)
		}
	}
	durable(5)
	if _, err := f.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	durable(5)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	durable(9)
	if _, err := f.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); !errors.Is(err, faultfile.ErrInjected) {
		t.Fatalf("second sync: %v", err)
	}
	durable(9)
	if err := f.Truncate(7); err != nil {
		t.Fatal(err)
	}
	durable(7)
}

func TestOpNames(t *testing.T) {
	for _, op := range faultfile.Ops {
		if op.String() == "" || op.String()[0] == 'O' {
			t.Fatalf("op %d has no name: %q", int(op), op)
		}
	}
	if got := faultfile.Op(42).String(); got != "Op(42)" {
		t.Fatalf("unknown op: %q", got)
	}
}
