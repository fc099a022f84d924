package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

// makeDB builds a database file at path with the given statements.
func makeDB(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db := rawDB(t, path)
	for _, s := range stmts {
		exec(t, db, s)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesForeignFiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		make    func(t *testing.T, path string)
		want    error
		mention string
	}{
		{"text file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("{\"type\":\"session\"}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, sqlite.ErrForeign, "not an SQLite database"},
		{"short file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("SQLite"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, sqlite.ErrForeign, "not an SQLite database"},
		{"other application", func(t *testing.T, path string) {
			makeDB(t, path, "PRAGMA application_id = 1234", "CREATE TABLE notes (x TEXT)")
		}, sqlite.ErrForeign, "application_id is 0x000004d2"},
		{"unversioned with tables", func(t *testing.T, path string) {
			makeDB(t, path, "CREATE TABLE sessions (id TEXT)", "CREATE TABLE events (x)")
		}, sqlite.ErrForeign, "already holds table events, table sessions"},
		{"no application_id but a user_version", func(t *testing.T, path string) {
			makeDB(t, path, "PRAGMA user_version = 3")
		}, sqlite.ErrForeign, "user_version 3"},
		{"reel schema 2", func(t *testing.T, path string) {
			makeDB(t, path, fmt.Sprintf("PRAGMA application_id = %d", sqlite.ApplicationID), "PRAGMA user_version = 2", "CREATE TABLE sessions (id TEXT)")
		}, sqlite.ErrSchema, "schema version 2; reel reads version 1"},
		{"reel schema 1 without tables", func(t *testing.T, path string) {
			makeDB(t, path, fmt.Sprintf("PRAGMA application_id = %d", sqlite.ApplicationID), "PRAGMA user_version = 1", "CREATE TABLE other (x)")
		}, sessionlog.ErrCorrupt, "without its tables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, sqlite.DBName)
			tc.make(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			st, err := sqlite.Open(dir, sqlite.Options{})
			if err == nil {
				_ = st.Close()
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.mention) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open: got %v, want %v naming %s and mentioning %q", err, tc.want, path, tc.mention)
			}
			if _, _, err := sqlite.ReadFile(path); !errors.Is(err, tc.want) {
				t.Fatalf("ReadFile: got %v, want %v", err, tc.want)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Fatal("a refused database was written to")
			}
			if _, err := os.Stat(path + "-wal"); err == nil {
				t.Fatal("a refused database was switched to WAL")
			}
		})
	}
}

func TestOpenEmptyFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, sqlite.DBName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatalf("an empty file is a new database: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopening the initialised database works.
	st, err = sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	if _, err := sqlite.Open(filepath.Join(dir, "a?b"), sqlite.Options{}); err == nil {
		t.Fatal("a path with '?' was accepted")
	}
}

// storedSession makes a store holding one crashed session (an unfinished
// turn) and returns its directory and database path.
func storedSession(t *testing.T, id string) (dir, path string, events []sessionlog.Event) {
	t.Helper()
	dir = t.TempDir()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := sessionlogtest.NewBuilder(0)
	b.Turn(1, "one", sessionlog.ReasonInitial)
	b.TurnStart(2)
	b.StepStart(1)
	b.User("two")
	events = b.Take()
	ctx := context.Background()
	w, err := st.Create(ctx, sessionlog.NewHeader(id, 42, "/work"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(ctx, events...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, st.Path(), events
}

func TestRowsEditedBehindTheBackend(t *testing.T) {
	const id = "edited"
	for _, tc := range []struct {
		name    string
		edit    string
		want    error
		mention []string
	}{
		{"seq gap", "DELETE FROM events WHERE seq = 2", sessionlog.ErrCorrupt,
			[]string{"session edited: row seq 3 (request/header)", "seq gap: expected seq 2"}},
		{"invalid data JSON", "UPDATE events SET data = '{\"turn\":' WHERE seq = 1", sessionlog.ErrCorrupt,
			[]string{"row seq 1 (step/start)", "data is not valid JSON"}},
		{"spliced fields", "UPDATE events SET data = '{},\"surfaceOp\":\"append\"' WHERE seq = 1", sessionlog.ErrCorrupt,
			[]string{"row seq 1 (step/start)", "data is not valid JSON"}},
		{"bad surface op", "UPDATE events SET surface_op = '\"prepend\"' WHERE seq = 2", sessionlog.ErrCorrupt,
			[]string{"row seq 2 (user/message)", "surfaceOp \"prepend\""}},
		{"bad source seqs", "UPDATE events SET source_event_seqs = '[1,' WHERE seq = 2", sessionlog.ErrCorrupt,
			[]string{"row seq 2 (user/message)", "source_event_seqs is not valid JSON"}},
		{"rule broken", "UPDATE events SET surface_op = NULL WHERE seq = 2", sessionlog.ErrInvalid,
			[]string{"seq 2 (user/message)", "surface event has no surfaceOp"}},
		{"legacy row", "UPDATE events SET type = 'request/header-delta' WHERE seq = 3", sessionlog.ErrLegacy,
			[]string{"session edited: seq 3 (request/header-delta)"}},
		{"header disagrees", "UPDATE sessions SET created_at = 5", sessionlog.ErrCorrupt,
			[]string{"disagrees with its columns"}},
		{"header version", "UPDATE sessions SET header = replace(header, '\"version\":0', '\"version\":7')", sessionlog.ErrVersion,
			[]string{"session edited: header row", "version 7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, path, _ := storedSession(t, id)
			exec(t, rawDB(t, path), tc.edit)
			st, err := sqlite.Open(dir, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			_, err = st.Inspect(context.Background(), id)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Inspect: got %v, want %v", err, tc.want)
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Fatalf("error %q does not mention %q", err, m)
				}
			}
			if _, w, err := st.Open(context.Background(), id); !errors.Is(err, tc.want) {
				if w != nil {
					_ = w.Close()
				}
				t.Fatalf("Open: got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSyncAssertsContiguityInTheDatabase(t *testing.T) {
	const id = "raced"
	dir, path, events := storedSession(t, id)
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	l, w, err := st.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	n := l.Log.Len()
	// Someone inserts a row behind the writer's back.
	exec(t, rawDB(t, path), "INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, 'x/y', 1, '{}')", id, n)
	b := sessionlogtest.NewBuilder(n)
	b.TurnStart(3)
	if err := w.Append(ctx, b.Take()...); err != nil {
		t.Fatal(err)
	}
	err = w.Sync(ctx)
	if !errors.Is(err, sessionlog.ErrInvalid) || !strings.Contains(err.Error(), fmt.Sprintf("ends at seq %d", n)) {
		t.Fatalf("Sync over a moved log: got %v", err)
	}
	_ = w.Close()
	_ = events
}

func TestFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, f := range sessionlogtest.CorpusLogs(t) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := jsonl.Decode(bytes.NewReader(raw), f)
		if err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, "converted.db")
		if err := sqlite.WriteFile(db, d.Header, d.Events); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		h, events, err := sqlite.ReadFile(db)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		back := filepath.Join(dir, "back.jsonl")
		if err := jsonl.WriteFile(back, h, events); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, raw) {
			t.Fatalf("%s: jsonl → sqlite → jsonl is not byte-exact", f)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(left) > 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := sqlite.ReadFile(filepath.Join(dir, "missing.db")); !errors.Is(err, sessionlog.ErrNotFound) {
		t.Fatalf("ReadFile of a missing file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Fatal("ReadFile created the missing file")
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sqlite.ReadFile(empty); !errors.Is(err, sessionlog.ErrNotFound) {
		t.Fatalf("ReadFile of an empty file: %v", err)
	}
	// A store database with two sessions is not a single-session file; and
	// while it is live, WriteFile refuses to replace it.
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if _, _, err := sqlite.ReadFile(st.Path()); !errors.Is(err, sessionlog.ErrNotFound) {
		t.Fatalf("ReadFile of a store without sessions: %v", err)
	}
	for _, id := range []string{"a", "b"} {
		w, err := st.Create(ctx, sessionlog.NewHeader(id, 1, ""))
		if err != nil {
			t.Fatal(err)
		}
		_ = w.Close()
	}
	if _, _, err := sqlite.ReadFile(st.Path()); err == nil || !strings.Contains(err.Error(), "holds 2 sessions, not one") {
		t.Fatalf("ReadFile of a two-session store: %v", err)
	}
	h := sessionlog.NewHeader("c", 1, "")
	if err := sqlite.WriteFile(st.Path(), h, nil); err == nil || !strings.Contains(err.Error(), "live") {
		t.Fatalf("WriteFile over a live database: %v", err)
	}
	bad := sessionlog.Header{Raw: []byte(`{"type":"session","version":2,"id":"x","createdAt":1}`)}
	if err := sqlite.WriteFile(filepath.Join(dir, "v2.db"), bad, nil); !errors.Is(err, sessionlog.ErrVersion) {
		t.Fatalf("WriteFile of a version-2 header: %v", err)
	}
	b := sessionlogtest.NewBuilder(1)
	b.TurnStart(1)
	if err := sqlite.WriteFile(filepath.Join(dir, "gap.db"), h, b.Take()); !errors.Is(err, sessionlog.ErrInvalid) {
		t.Fatalf("WriteFile with a seq gap: %v", err)
	}
	// WriteFile replaces an existing single-session file.
	one := filepath.Join(dir, "one.db")
	b = sessionlogtest.NewBuilder(0)
	b.Turn(1, "x", sessionlog.ReasonInitial)
	evs := b.Take()
	for _, n := range []int{len(evs), 3} {
		if err := sqlite.WriteFile(one, h, evs[:n]); err != nil {
			t.Fatal(err)
		}
		_, got, err := sqlite.ReadFile(one)
		if err != nil || len(got) != n {
			t.Fatalf("ReadFile after WriteFile of %d events: %d events, %v", n, len(got), err)
		}
	}
}

// TestClosedDatabase covers the database-error paths: every operation on a
// closed store fails with an error naming the database, and a writer whose
// store closed keeps its events buffered.
func TestClosedDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(ctx, sessionlog.NewHeader("s", 1, "/w"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	b := sessionlogtest.NewBuilder(0)
	b.TurnStart(1)
	if err := w.Append(ctx, b.Take()...); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(ctx); err == nil || !strings.Contains(err.Error(), st.Path()) {
		t.Fatalf("Sync on a closed database: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close with unsynced events on a closed database succeeded")
	}
	if _, err := st.Create(ctx, sessionlog.NewHeader("t", 1, "")); err == nil || !strings.Contains(err.Error(), "session t") {
		t.Fatalf("Create on a closed database: %v", err)
	}
	if _, err := st.Inspect(ctx, "s"); err == nil {
		t.Fatal("Inspect on a closed database succeeded")
	}
	if _, _, err := st.Open(ctx, "s"); err == nil {
		t.Fatal("Open on a closed database succeeded")
	}
	for _, err := range st.List(ctx) {
		if err == nil {
			t.Fatal("List on a closed database yielded no error")
		}
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(filepath.Join(file, "sub"), sqlite.Options{}); err == nil {
		t.Fatal("Open under a file succeeded")
	}
	if err := sqlite.WriteFile(filepath.Join(dir, "missing", "x.db"), sessionlog.NewHeader("x", 1, ""), nil); err == nil {
		t.Fatal("WriteFile into a missing directory succeeded")
	}
	if _, err := sqlite.Open(filepath.Join(dir, "sessions.db"), sqlite.Options{}); err == nil {
		t.Fatal("Open of a directory path that is a database file succeeded")
	}
}

// TestSchemaDamagedWhileOpen drops the tables under an open store: every
// operation fails with an error naming the database.
func TestSchemaDamagedWhileOpen(t *testing.T) {
	ctx := context.Background()
	dir, path, _ := storedSession(t, "s")
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, w, err := st.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	exec(t, raw, "DROP TABLE events")
	b := sessionlogtest.NewBuilder(l.Log.Len())
	b.TurnStart(3)
	if err := w.Append(ctx, b.Take()...); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(ctx); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Sync without an events table: %v", err)
	}
	_ = w.Close()
	if _, err := st.Inspect(ctx, "s"); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Inspect without an events table: %v", err)
	}
	exec(t, raw, "DROP TABLE sessions")
	if _, err := st.Create(ctx, sessionlog.NewHeader("u", 1, "")); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Create without a sessions table: %v", err)
	}
	for _, err := range st.List(ctx) {
		if err == nil {
			t.Fatal("List without a sessions table yielded no error")
		}
	}
}
