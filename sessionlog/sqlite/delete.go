package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/internal/storage"
)

var _ sessionlog.Deleter = (*Store)(nil)

// Delete removes session id's rows (its events and its sessions row) in
// one transaction, under the session's lock so no writer holds it.
func (s *Store) Delete(ctx context.Context, id string) error {
	return storage.UnderLock(ctx, s.dir, id, func() error { return s.delete(ctx, id) })
}

func (s *Store) delete(ctx context.Context, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: session %s: %w", s.path, id, err)
	}
	defer func() { _ = tx.Rollback() }()
	var one int
	err = tx.QueryRowContext(ctx, "SELECT 1 FROM sessions WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: session %s: %w", s.path, id, sessionlog.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("%s: session %s: %w", s.path, id, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM events WHERE session_id = ?", id); err != nil {
		return fmt.Errorf("%s: session %s: delete events: %w", s.path, id, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE id = ?", id); err != nil {
		return fmt.Errorf("%s: session %s: delete: %w", s.path, id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: session %s: delete: %w", s.path, id, err)
	}
	return nil
}
