package jsonl

import (
	"context"
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
	return storage.UnderLock(ctx, s.dir, id, func() error {
		path, err := s.locate(id)
		if err != nil {
			return err
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("session %s: delete %s: %w", id, path, err)
		}
		if err := storage.SyncDir(s.dir); err != nil {
			return fmt.Errorf("session %s: sync %s after deleting: %w", id, s.dir, err)
		}
		return nil
	})
}
