package storage

import (
	"context"
	"errors"
)

// UnderLock runs remove for session id in dir as a backend's Delete does:
// a done ctx or an id that could name a path outside the store (ErrBadID)
// stops it before anything is touched; otherwise remove runs holding the
// session's writer lock, so no writer in this process or another holds
// the session while it goes. The lock is released whatever remove
// returns, and a failure to release it is joined to remove's error.
func UnderLock(ctx context.Context, dir, id string, remove func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckID(id); err != nil {
		return err
	}
	lock, err := Acquire(dir, id)
	if err != nil {
		return err
	}
	if err := remove(); err != nil {
		return errors.Join(err, lock.Release())
	}
	return lock.Release()
}
