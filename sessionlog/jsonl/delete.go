package jsonl

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/internal/storage"
)

var _ sessionlog.Deleter = (*Store)(nil)

// Delete removes the log file of session id under the session's lock (so
// no writer, in this process or another, holds it) and syncs the
// directory. The id is checked first: one that could name a path outside
// the store is ErrBadID and touches nothing.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := storage.CheckID(id); err != nil {
		return err
	}
	lock, err := storage.Acquire(s.dir, id)
	if err != nil {
		return err
	}
	path, err := s.locate(id)
	if err != nil {
		return errors.Join(err, lock.Release())
	}
	if err := os.Remove(path); err != nil {
		return errors.Join(fmt.Errorf("session %s: delete %s: %w", id, path, err), lock.Release())
	}
	if err := storage.SyncDir(s.dir); err != nil {
		return errors.Join(fmt.Errorf("session %s: sync %s after deleting: %w", id, s.dir, err), lock.Release())
	}
	return lock.Release()
}
