package storage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gofrs/flock"
)

// TestLockedCurrent: a lock on a file that is no longer at the lock path
// (its holder removed it on release, and maybe another writer created a new
// one) is recognised as worthless.
func TestLockedCurrent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.lock")
	fl := flock.New(p)
	if ok, err := fl.TryLock(); !ok || err != nil {
		t.Fatalf("TryLock: %v %v", ok, err)
	}
	defer fl.Close()
	if same, err := lockedCurrent(fl, p); !same || err != nil {
		t.Fatalf("fresh lock: current %v, %v; want true", same, err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if same, err := lockedCurrent(fl, p); same || err != nil {
		t.Fatalf("lock file removed: current %v, %v; want false", same, err)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if same, err := lockedCurrent(fl, p); same || err != nil {
		t.Fatalf("lock file replaced: current %v, %v; want false", same, err)
	}
}

// TestAcquireRetriesRemovedLock: when the file Acquire locked is removed
// and replaced under it (a holder released and another writer created a new
// one), Acquire drops the worthless lock and takes the current file; while
// that one is held, it refuses.
func TestAcquireRetriesRemovedLock(t *testing.T) {
	dir := t.TempDir()
	p := LockPath(dir, "s")
	tries := 0
	l, err := acquire(p, "s", func() {
		tries++
		if tries == 1 {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if tries != 2 {
		t.Fatalf("locked %d times, want 2 (the replaced file, then the current one)", tries)
	}
	if same, err := lockedCurrent(l.fl, p); !same || err != nil {
		t.Fatalf("the lock is not on the current file: %v %v", same, err)
	}
	if _, err := Acquire(dir, "s"); err == nil {
		t.Fatal("a second writer got the lock")
	}
}
