package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/internal/storage"
)

// ReadFile reads the one session of a single-session database file (as
// WriteFile makes, and `reel log convert` uses). The file is checked like a
// store's database; it is not switched to WAL. The events are decoded, not
// validated against the log rules (sessionlog.Load does that).
func ReadFile(path string) (sessionlog.Header, []sessionlog.Event, error) {
	ctx := context.Background()
	db, err := openDB(ctx, path, false)
	if err != nil {
		return sessionlog.Header{}, nil, err
	}
	defer db.Close()
	var (
		id sql.NullString
		n  int
	)
	if err := db.QueryRowContext(ctx, "SELECT MIN(id), COUNT(*) FROM sessions").Scan(&id, &n); err != nil {
		return sessionlog.Header{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	switch n {
	case 0:
		return sessionlog.Header{}, nil, fmt.Errorf("%s: %w: the database holds no session", path, sessionlog.ErrNotFound)
	case 1:
		return readSession(ctx, db, path, id.String)
	}
	return sessionlog.Header{}, nil, fmt.Errorf("%s: holds %d sessions, not one; open it as a store instead", path, n)
}

// WriteFile writes a single-session database file atomically: a new
// database is built under a temporary name in the same directory, fsynced
// and renamed over path. It checks the header and that seqs are contiguous
// from 0, but not the log rules. It refuses to replace a database that has
// a non-empty write-ahead log beside it (a live database).
func WriteFile(path string, h sessionlog.Header, events []sessionlog.Event) (err error) {
	ctx := context.Background()
	h, err = sessionlog.DecodeHeader(h.Raw)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := storage.CheckBatch(0, events); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return fmt.Errorf("write %s: the database is live (its write-ahead log %s-wal is not empty)", path, path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), storage.TempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
			_ = os.Remove(tmp + "-journal")
		}
	}()
	db, err := openDB(ctx, tmp, true)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = fill(ctx, db, tmp, h, events)
	if err = errors.Join(err, db.Close()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = storage.Commit(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func fill(ctx context.Context, db *sql.DB, path string, h sessionlog.Header, events []sessionlog.Event) error {
	if err := insertSession(ctx, db, path, h); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	return insertEvents(ctx, db, path, h.ID, events)
}
