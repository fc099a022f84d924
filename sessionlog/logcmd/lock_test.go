package logcmd_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/internal/storage"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/logcmd"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

// openLive creates, in a store of kind in dir, the session of an unfinished
// log (a tool call that never got its result) and leaves its writer open,
// as a running agent does. It returns the log's file and the writer.
func openLive(t *testing.T, dir, kind string) (string, sessionlog.Writer) {
	t.Helper()
	cut, _ := cutAfterFirstToolCall(t, t.TempDir(), "cut.jsonl")
	d := decode(t, cut)
	var (
		st   sessionlog.Store
		file string
		err  error
	)
	switch kind {
	case "jsonl":
		st, err = jsonl.Open(dir, jsonl.Options{})
		file = filepath.Join(dir, d.Header.ID+jsonl.ExtRaw)
	case "sqlite":
		st, err = sqlite.Open(dir, sqlite.Options{})
		file = filepath.Join(dir, sqlite.DBName)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := st.Create(ctx, d.Header)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(ctx, d.Events...); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close(); _ = st.Close() })
	return file, w
}

// TestRepairRefusesALiveLog: `reel log repair` on a log whose session a
// writer holds open (the agent's store lock) is refused with a *LiveError
// naming the file and the lock, and the log is left byte for byte and
// inode for inode as it was; once the writer closes, repair commits the
// closers. Both backends.
func TestRepairRefusesALiveLog(t *testing.T) {
	for _, kind := range []string{"jsonl", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			file, w := openLive(t, dir, kind)
			before := readBytes(t, file)
			fiBefore, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := run("repair", file)
			var le *logcmd.LiveError
			if !errors.As(err, &le) || !errors.Is(err, sessionlog.ErrInUse) {
				t.Fatalf("repair of a live log: %v (stdout %q), want a LiveError", err, out)
			}
			for _, want := range []string{"repair: " + file + " is live", "a reel process holds its session lock " + le.Lock} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			fiAfter, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if !os.SameFile(fiBefore, fiAfter) || !bytes.Equal(readBytes(t, file), before) {
				t.Error("the refused repair changed the live log")
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if kind == "sqlite" {
				return // the store's database keeps its WAL until the store closes
			}
			out, _, err = run("repair", file)
			if err != nil || !strings.Contains(out, "(turn/end)") {
				t.Fatalf("repair after the writer closed: %q, %v", out, err)
			}
		})
	}
}

// TestConvertRefusesALiveTarget: convert onto a path whose session lock is
// held (an agent about to create that session) is refused and writes
// nothing.
func TestConvertRefusesALiveTarget(t *testing.T) {
	dir := t.TempDir()
	lk, err := storage.Acquire(dir, "target")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "target.jsonl")
	_, _, err = run("convert", textTurnLog, out)
	var le *logcmd.LiveError
	if !errors.As(err, &le) || le.Session != "target" {
		t.Fatalf("convert onto a locked target: %v, want a LiveError for session target", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused convert created %s (%v)", out, err)
	}
	if err := lk.Release(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run("convert", textTurnLog, out); err != nil {
		t.Fatalf("convert after the lock was released: %v", err)
	}
}
