package sqlite_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

// walChildEnv names the store directory of the WAL child process.
const walChildEnv = "REEL_SQLITE_WAL_CHILD"

// walTurns is how many turns the WAL child commits, one transaction each.
const walTurns = 3

// runWALChild, in the child process, commits walTurns complete turns of
// session "w" (one Sync, so one transaction, per turn), prints the last seq
// of each, then waits to be killed without closing anything: the commits
// stay in sessions.db-wal, not checkpointed.
func runWALChild() {
	dir := os.Getenv(walChildEnv)
	if dir == "" {
		return
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "wal child:", err)
		os.Exit(1)
	}
	ctx := context.Background()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		fail(err)
	}
	w, err := st.Create(ctx, sessionlog.NewHeader("w", 1, "/work"))
	if err != nil {
		fail(err)
	}
	b := sessionlogtest.NewBuilder(0)
	for turn := 1; turn <= walTurns; turn++ {
		reason := sessionlog.ReasonInitial
		if turn > 1 {
			reason = ""
		}
		b.Turn(turn, fmt.Sprintf("prompt %d", turn), reason)
		evs := b.Take()
		if err := w.Append(ctx, evs...); err != nil {
			fail(err)
		}
		if err := w.Sync(ctx); err != nil {
			fail(err)
		}
		fmt.Printf("committed %d\n", evs[len(evs)-1].Seq)
	}
	fmt.Println("done")
	select {} // killed here
}

// walFrame is one frame of a WAL file.
type walFrame struct {
	off    int64 // offset of the frame header
	commit bool  // the last frame of a transaction
}

// walFrames parses a WAL file's frames (https://sqlite.org/fileformat.html#wal_file_format).
func walFrames(t *testing.T, wal []byte) (pageSize int, frames []walFrame) {
	t.Helper()
	if len(wal) < 32 || binary.BigEndian.Uint32(wal)&^1 != 0x377f0682 {
		t.Fatalf("not a WAL file (%d bytes)", len(wal))
	}
	pageSize = int(binary.BigEndian.Uint32(wal[8:]))
	for off := int64(32); off+24+int64(pageSize) <= int64(len(wal)); off += 24 + int64(pageSize) {
		frames = append(frames, walFrame{off: off, commit: binary.BigEndian.Uint32(wal[off+4:]) != 0})
	}
	return pageSize, frames
}

// killedWriter runs the WAL child in dir, kills it with SIGKILL once it
// committed every turn, and returns the last seq of each turn.
func killedWriter(t *testing.T, dir string) []int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), walChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var last []int
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "done" {
		n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "committed "))
		if err != nil {
			t.Fatalf("wal child said %q", sc.Text())
		}
		last = append(last, n)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if len(last) != walTurns {
		t.Fatalf("the wal child committed %d turns, want %d", len(last), walTurns)
	}
	return last
}

// TestWALByteFlip pins what SQLite's WAL checksums guarantee, through a
// real database whose writer was killed with its commits still in the
// WAL: every frame carries a checksum chained over all frames before it,
// so recovery stops at the first frame that does not match and ignores it
// and every later frame, committed or not. The store then loads the last
// transaction before the damage: a consistent prefix of the log, with no
// error. Later committed events are lost silently (a damaged WAL header
// drops the whole WAL: the session itself is gone). The package doc says
// exactly this.
func TestWALByteFlip(t *testing.T) {
	for _, tc := range []struct {
		name string
		// flip returns the offset of the byte to flip, given the frames
		// and the first frame of each transaction of turn 1, 2 and 3.
		flip func(frames []walFrame, turnStart []int, pageSize int) int64
		// keep is how many turns survive (-1: the session is gone).
		keep int
	}{
		{"no damage", nil, 3},
		{"a page of turn 3's transaction", func(f []walFrame, ts []int, ps int) int64 { return f[ts[2]].off + 24 + int64(ps)/2 }, 2},
		{"a page of turn 2's transaction", func(f []walFrame, ts []int, ps int) int64 { return f[ts[1]].off + 24 + int64(ps)/2 }, 1},
		{"the frame header of turn 2's commit", func(f []walFrame, ts []int, ps int) int64 { return f[ts[2]-1].off + 17 }, 1},
		{"the WAL header checksum", func([]walFrame, []int, int) int64 { return 27 }, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			last := killedWriter(t, dir)
			walPath := filepath.Join(dir, sqlite.DBName+"-wal")
			wal, err := os.ReadFile(walPath)
			if err != nil {
				t.Fatalf("the killed writer left no WAL: %v", err)
			}
			ps, frames := walFrames(t, wal)
			var commits []int
			for i, f := range frames {
				if f.commit {
					commits = append(commits, i)
				}
			}
			// The transactions: the session row, then one per turn.
			if len(commits) != 1+walTurns {
				t.Fatalf("the WAL holds %d commits, want %d", len(commits), 1+walTurns)
			}
			turnStart := []int{commits[0] + 1, commits[1] + 1, commits[2] + 1}
			if tc.flip != nil {
				off := tc.flip(frames, turnStart, ps)
				wal[off] ^= 0x5a
				if err := os.WriteFile(walPath, wal, 0o600); err != nil {
					t.Fatal(err)
				}
			}

			st, err := sqlite.Open(dir, sqlite.Options{})
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			l, err := st.Inspect(context.Background(), "w")
			cerr := st.Close()
			if tc.keep < 0 {
				if !errors.Is(err, sessionlog.ErrNotFound) {
					t.Fatalf("Inspect after the WAL header flip: %v, want the session gone (ErrNotFound)", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Inspect: %v (SQLite reports nothing for a damaged WAL frame; the store loads the prefix)", err)
			}
			if cerr != nil {
				t.Fatal(cerr)
			}
			if got, want := l.Log.Len(), last[tc.keep-1]+1; got != want || len(l.Closers) != 0 {
				t.Errorf("loaded %d events (%d closers), want %d: the turns before the damaged frame, complete", got, len(l.Closers), want)
			}
			// The loaded prefix was checkpointed into the database on
			// Close: nothing is left in its WAL.
			if fi, err := os.Stat(walPath); err == nil && fi.Size() != 0 {
				t.Errorf("after a clean Close the WAL holds %d bytes", fi.Size())
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
		})
	}
}

// TestFileModes: the store's database and its -wal and -shm are private
// (0600), like the JSONL logs, and a cleanly closed store leaves nothing
// in its WAL.
func TestFileModes(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := st.Create(ctx, sessionlog.NewHeader("m", 1, "/w"))
	if err != nil {
		t.Fatal(err)
	}
	b := sessionlogtest.NewBuilder(0)
	b.Turn(1, "hello", sessionlog.ReasonInitial)
	if err := w.Append(ctx, b.Take()...); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, sqlite.DBName)
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s has mode %04o, want 0600", filepath.Base(p), m)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(db + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("a cleanly closed store leaves %d bytes in its WAL", fi.Size())
	}
	// A single-session file written by convert is private too.
	out := filepath.Join(dir, "out.db")
	h := sessionlog.NewHeader("m", 1, "/w")
	b = sessionlogtest.NewBuilder(0)
	b.Turn(1, "hello", sessionlog.ReasonInitial)
	if err := sqlite.WriteFile(out, h, b.Take()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("WriteFile made %s with %v (%v), want mode 0600", out, fi.Mode(), err)
	}
}

// TestOpenMakesAnOldDatabasePrivate: a store database an older reel
// created 0644 is made 0600 when the store opens it.
func TestOpenMakesAnOldDatabasePrivate(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, sqlite.DBName)
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if fi, err := os.Stat(db); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has %v (%v), want 0600", db, fi.Mode(), err)
	}
}
