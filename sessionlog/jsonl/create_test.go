package jsonl_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
)

// TestCreateAtFirstSync pins when Create's log appears: not at Create
// (which takes the lock and checks the id), but whole at the writer's first
// Sync, header and first batch together — or, when that fails, never: the
// error names the file and the creation, the writer refuses from then on,
// and the id stays free. Path names the file from Create on (a hook is
// told it) until a failed writer is closed.
func TestCreateAtFirstSync(t *testing.T) {
	for _, compress := range []bool{false, true} {
		for _, fail := range []bool{false, true} {
			name := "plain"
			if compress {
				name = "zstd"
			}
			if fail {
				name += "/the directory is gone"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				dir := filepath.Join(t.TempDir(), "state")
				st, err := jsonl.Open(dir, jsonl.Options{Compress: compress})
				must(t, err)
				t.Cleanup(func() { _ = st.Close() })
				ext := jsonl.ExtRaw
				if compress {
					ext = jsonl.ExtZstd
				}
				path := filepath.Join(dir, "s1"+ext)
				w, err := st.Create(ctx, sessionlog.NewHeader("s1", 1, "/w"))
				must(t, err)
				b := sessionlogtest.NewBuilder(0)
				b.Turn(1, "hello", sessionlog.ReasonInitial)
				events := b.Take()
				must(t, w.Append(ctx, events...))
				if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("the log exists before the first Sync (%v)", err)
				}
				// A hook is told the transcript's path from the start.
				if got := st.Path("s1"); got != path {
					t.Fatalf("Path before the first Sync = %q, want %q", got, path)
				}
				if fail {
					must(t, os.RemoveAll(dir))
				}
				err = w.Sync(ctx)
				if !fail {
					must(t, err)
					l, err := st.Inspect(ctx, "s1")
					must(t, err)
					if l.Log.Len() != len(events) {
						t.Fatalf("after the first Sync the log holds %d events, want %d", l.Log.Len(), len(events))
					}
					must(t, w.Close())
					return
				}
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "create") {
					t.Fatalf("first Sync into a vanished directory: got %v, want an error naming create and %s", err, path)
				}
				if _, serr := os.Stat(path); !errors.Is(serr, fs.ErrNotExist) {
					t.Fatalf("a failed first Sync left %s (%v)", path, serr)
				}
				// Failed for good: with the directory back, the writer still
				// refuses, and makes no log.
				must(t, os.MkdirAll(dir, 0o755))
				more := sessionlogtest.NewBuilder(len(events))
				more.TurnStart(2)
				if err := w.Append(ctx, more.Take()...); err == nil {
					t.Fatal("Append after a failed first Sync succeeded")
				}
				if err := w.Close(); err == nil {
					t.Fatal("Close after a failed first Sync reported no failure")
				}
				if _, serr := os.Stat(path); !errors.Is(serr, fs.ErrNotExist) {
					t.Fatalf("a writer whose first Sync failed made %s later (%v)", path, serr)
				}
				if got := st.Path("s1"); got != "" {
					t.Fatalf("Path of a session whose log was never made = %q, want none", got)
				}
			})
		}
	}
}
