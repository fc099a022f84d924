package sessionlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Deleter is a Store that can delete a session's log (session/delete).
// Delete removes the log of session id, durably: ErrBadID for an id that
// cannot name a session, ErrNotFound for none stored, ErrInUse while a
// writer (in this process or another) holds the session. Nothing else is
// removed: the caller decides about the session's children and
// attachments.
type Deleter interface {
	Delete(ctx context.Context, id string) error
}

// Remove deletes the object of attachment id, which no stored session may
// still refer to (the caller checks; session/delete does). An object that
// is already gone is not an error.
func (s *Attachments) Remove(id string) error {
	digest, err := ImageAttachment{ID: id}.Digest()
	if err != nil {
		return err
	}
	if err := os.Remove(s.path(digest)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: remove %s: %w", ErrAttachment, id, err)
	}
	return nil
}
