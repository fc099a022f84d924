package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/reel-agent/reel/sessionlog"
)

// ListFile lists the sessions of a database file (a store's sessions.db or
// a file WriteFile made), ordered by id, reading the sessions table only.
// The file is checked like a store's database and opened without creating
// or converting anything.
func ListFile(path string) (infos []sessionlog.Info, err error) {
	ctx := context.Background()
	db, err := openDB(ctx, path, false)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	rows, err := db.QueryContext(ctx, "SELECT id, created_at, cwd FROM sessions ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("%s: list: %w", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		info := sessionlog.Info{Location: path}
		var cwd sql.NullString
		if err := rows.Scan(&info.ID, &info.CreatedAt, &cwd); err != nil {
			return nil, fmt.Errorf("%s: list: %w", path, err)
		}
		info.Cwd = cwd.String
		infos = append(infos, info)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: list: %w", path, err)
	}
	return infos, nil
}

// ReadSession reads session id of a database file holding any number of
// sessions. A missing session wraps sessionlog.ErrNotFound. Like ReadFile,
// the events are decoded, not validated against the log rules.
func ReadSession(path, id string) (h sessionlog.Header, events []sessionlog.Event, err error) {
	ctx := context.Background()
	db, err := openDB(ctx, path, false)
	if err != nil {
		return sessionlog.Header{}, nil, err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	return readSession(ctx, db, path, id)
}

// AppendFile appends events to session id of a database file in one
// transaction, which first asserts that they continue the stored log
// contiguously. It neither takes the session's lock nor checks the log
// rules: the caller holds the lock and validated the events.
func AppendFile(path, id string, events []sessionlog.Event) (err error) {
	if len(events) == 0 {
		return nil
	}
	ctx := context.Background()
	db, err := openDB(ctx, path, false)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	return insertEvents(ctx, db, path, id, events)
}
