package storage_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/internal/storage"
)

func TestCheckID(t *testing.T) {
	for id, want := range map[string]string{
		"e128dda9-ed11-4868-8266-0ef90d03c3d6": "",
		"{{sessionId}}":                        "",
		"":                                     "is empty",
		".hidden":                              "starts with a dot",
		"..":                                   "starts with a dot",
		"a/b":                                  "contains a path separator",
		`a\b`:                                  "contains a path separator",
		"a\x00b":                               "contains a control character",
		"tab\there":                            "contains a control character",
		strings.Repeat("x", 201):               "is longer than 200 bytes",
	} {
		err := storage.CheckID(id)
		switch {
		case want == "" && err != nil:
			t.Errorf("CheckID(%q) = %v", id, err)
		case want == "":
		case !errors.Is(err, sessionlog.ErrBadID) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), strconv.Quote(id)):
			t.Errorf("CheckID(%q) = %v, want ErrBadID naming the id, %q", id, err, want)
		case errors.Is(err, sessionlog.ErrHeader):
			// A bad id is the caller's mistake, not a damaged header.
			t.Errorf("CheckID(%q) = %v matches ErrHeader", id, err)
		}
	}
	if err := storage.CheckID(strings.Repeat("x", 200)); err != nil {
		t.Errorf("CheckID of 200 bytes: %v", err)
	}
}

func TestCheckHeader(t *testing.T) {
	h, err := storage.CheckHeader(sessionlog.Header{ID: "a", CreatedAt: 3, Cwd: "/w"})
	if err != nil || string(h.Raw) != `{"type":"session","version":0,"id":"a","createdAt":3,"cwd":"/w"}` {
		t.Fatalf("from fields: %s, %v", h.Raw, err)
	}
	raw := sessionlog.Header{ID: "a", CreatedAt: 3, Raw: json.RawMessage(`{ "type":"session","version":0,"id":"a","createdAt":3 }`)}
	if h, err := storage.CheckHeader(raw); err != nil || string(h.Raw) != `{"type":"session","version":0,"id":"a","createdAt":3}` {
		t.Fatalf("raw is compacted: %s, %v", h.Raw, err)
	}
	for _, tc := range []struct {
		name string
		h    sessionlog.Header
		want error
	}{
		{"version", sessionlog.Header{Version: 2, ID: "a"}, sessionlog.ErrVersion},
		{"raw version", sessionlog.Header{ID: "a", Raw: json.RawMessage(`{"type":"session","version":3,"id":"a","createdAt":0}`)}, sessionlog.ErrVersion},
		{"disagreeing fields", sessionlog.Header{ID: "b", CreatedAt: 3, Raw: raw.Raw}, sessionlog.ErrHeader},
		{"bad id", sessionlog.Header{ID: "a/b", CreatedAt: 3}, sessionlog.ErrBadID},
		{"empty id", sessionlog.Header{CreatedAt: 3}, sessionlog.ErrBadID},
		{"bad id in fields and raw", sessionlog.Header{ID: "..", CreatedAt: 3, Raw: json.RawMessage(`{"type":"session","version":0,"id":"..","createdAt":3}`)}, sessionlog.ErrBadID},
		{"raw without an id", sessionlog.Header{ID: "a", CreatedAt: 3, Raw: json.RawMessage(`{"type":"session","version":0,"createdAt":3}`)}, sessionlog.ErrHeader},
	} {
		_, err := storage.CheckHeader(tc.h)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		// A header that is bad for another reason does not blame the id.
		if tc.want != sessionlog.ErrBadID && errors.Is(err, sessionlog.ErrBadID) {
			t.Errorf("%s: %v matches ErrBadID", tc.name, err)
		}
	}
}

func TestCheckBatch(t *testing.T) {
	ev := func(seq int, typ, data string) sessionlog.Event {
		e := sessionlog.Event{Type: typ, Seq: seq}
		if data != "" {
			e.Data = json.RawMessage(data)
		}
		return e
	}
	for _, tc := range []struct {
		name   string
		next   int
		events []sessionlog.Event
		want   string
	}{
		{"ok", 2, []sessionlog.Event{ev(2, "a", `{"s":"x y"}`), ev(3, "b", "")}, ""},
		{"empty", 5, nil, ""},
		{"gap", 2, []sessionlog.Event{ev(2, "a", ""), ev(4, "b", "")}, "seq 4 (b): sessionlog: invalid event: append out of order: expected seq 3"},
		{"duplicate", 2, []sessionlog.Event{ev(1, "a", "")}, "seq 1 (a): sessionlog: invalid event: append out of order: expected seq 2"},
		{"no type", 0, []sessionlog.Event{ev(0, "", "")}, "seq 0 (): sessionlog: invalid event: event has no type"},
		{"invalid data", 0, []sessionlog.Event{ev(0, "a", `{"x":`)}, "seq 0 (a): sessionlog: invalid event: data is not valid JSON"},
		{"newline in data", 0, []sessionlog.Event{ev(0, "a", "{\n}")}, "seq 0 (a): sessionlog: invalid event: data is not compact JSON"},
		{"spaces in data", 0, []sessionlog.Event{ev(0, "a", `{"x": 1}`)}, "seq 0 (a): sessionlog: invalid event: data is not compact JSON"},
	} {
		err := storage.CheckBatch(tc.next, tc.events)
		if got := ""; err != nil {
			got = err.Error()
			if !errors.Is(err, sessionlog.ErrInvalid) {
				t.Errorf("%s: %v is not ErrInvalid", tc.name, err)
			}
			if got != tc.want {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%s: accepted, want %q", tc.name, tc.want)
		}
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	l, err := storage.Acquire(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Acquire(dir, "s"); !errors.Is(err, sessionlog.ErrInUse) || !strings.Contains(err.Error(), "session s") {
		t.Fatalf("second Acquire: %v", err)
	}
	other, err := storage.Acquire(dir, "t")
	if err != nil {
		t.Fatalf("another session: %v", err)
	}
	if err := errors.Join(l.Release(), l.Release(), other.Release()); err != nil {
		t.Fatal(err)
	}
	var nilLock *storage.Lock
	if err := nilLock.Release(); err != nil {
		t.Fatal(err)
	}
	l, err = storage.Acquire(dir, "s")
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	_ = l.Release()
	if _, err := storage.Acquire(filepath.Join(dir, "missing"), "s"); err == nil || errors.Is(err, sessionlog.ErrInUse) {
		t.Fatalf("Acquire in a missing directory: %v", err)
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.jsonl")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := storage.WriteAtomic(path, func(f *os.File) error {
		if _, err := f.WriteString("half"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteAtomic: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("a failed write changed the file: %q", b)
	}
	if err := storage.WriteAtomic(path, func(f *os.File) error { _, err := f.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("file = %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
	if err := storage.WriteAtomic(filepath.Join(dir, "no", "such", "dir"), func(*os.File) error { return nil }); err == nil {
		t.Fatal("WriteAtomic into a missing directory succeeded")
	}
	tmp := filepath.Join(dir, storage.TempPrefix+"x")
	if err := os.WriteFile(tmp, []byte("c"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := storage.Commit(tmp, filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	if err := storage.Commit(tmp, filepath.Join(dir, "c")); err == nil {
		t.Fatal("Commit of a missing file succeeded")
	}
	if err := storage.SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("SyncDir of a missing directory succeeded")
	}
}

// TestReleaseRemovesLockFile: a clean release leaves no lock file behind,
// and a process still holding a lock on the removed file does not keep the
// next writer out, nor share the session with it.
func TestReleaseRemovesLockFile(t *testing.T) {
	dir := t.TempDir()
	l, err := storage.Acquire(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	p := storage.LockPath(dir, "s")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("lock file while held: %v", err)
	}
	// A late opener: it opened the lock file before the release and locks
	// it afterwards.
	late, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("lock file after Release: %v, want it gone", err)
	}
	if err := syscall.Flock(int(late.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("lock the removed file: %v", err)
	}
	next, err := storage.Acquire(dir, "s")
	if err != nil {
		t.Fatalf("Acquire while only a removed lock file is locked: %v", err)
	}
	if _, err := storage.Acquire(dir, "s"); !errors.Is(err, sessionlog.ErrInUse) {
		t.Fatalf("second writer: %v, want ErrInUse", err)
	}
	if err := next.Release(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("files left in the state dir: %v", entries)
	}
}
