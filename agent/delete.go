package agent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/reel-agent/reel/sessionlog"
)

// CanDelete reports whether the store can delete sessions
// (DeleteSession works).
func (e *Engine) CanDelete() bool {
	_, ok := e.cfg.Store.(sessionlog.Deleter)
	return ok
}

// attachmentRef finds the attachment ids an event's data refers to (an
// image part's reference, wherever the part sits).
var attachmentRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"attachmentId":"(sha256:[0-9a-f]{64})"`) })

// DeleteSession removes stored session id: its log, the logs of the
// subagent sessions it started (and theirs), and the attachments only
// those logs referred to. The id is the caller's and may be hostile: one
// that cannot name a session, names none, names a subagent's session, or
// names a session open in this process (close it first) or held by
// another process is refused with ErrInvalid and nothing is removed.
func (e *Engine) DeleteSession(ctx context.Context, id string) error {
	del, ok := e.cfg.Store.(sessionlog.Deleter)
	if !ok {
		return fmt.Errorf("delete session %s: the session store cannot delete", id)
	}
	e.mu.Lock()
	_, open := e.sessions[id]
	e.mu.Unlock()
	if open {
		return invalid(fmt.Sprintf("session %s is open in this process: close it first (session/close), then delete it", id))
	}
	loaded, err := e.cfg.Store.Inspect(ctx, id)
	if err != nil {
		if errors.Is(err, sessionlog.ErrNotFound) || errors.Is(err, sessionlog.ErrBadID) {
			return invalid(fmt.Sprintf("unknown session %q: %v", id, err))
		}
		return fmt.Errorf("delete session %s: read its log: %w", id, err)
	}
	if c, child := loaded.Log.Header().Child(); child {
		return invalid(fmt.Sprintf("session %s is a subagent's session of %s: delete %s instead", id, c.Parent, c.Parent))
	}
	// The session and its descendants, parents first.
	doomed := []string{id}
	children := map[string][]string{}
	var others []string
	for info, err := range e.cfg.Store.List(ctx) {
		if err != nil {
			return fmt.Errorf("delete session %s: list sessions: %w", id, err)
		}
		if info.Parent != "" {
			children[info.Parent] = append(children[info.Parent], info.ID)
		}
		others = append(others, info.ID)
	}
	gone := map[string]bool{id: true}
	for i := 0; i < len(doomed); i++ {
		for _, c := range children[doomed[i]] {
			if !gone[c] {
				gone[c] = true
				doomed = append(doomed, c)
			}
		}
	}
	e.mu.Lock()
	for _, d := range doomed[1:] {
		if _, open := e.sessions[d]; open {
			e.mu.Unlock()
			return invalid(fmt.Sprintf("session %s has a subagent session %s open in this process: close %s first", id, d, id))
		}
	}
	e.mu.Unlock()
	refs := map[string]bool{}
	for _, d := range doomed {
		if err := e.refsOf(ctx, d, refs); err != nil {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
	}
	// Children first: an interrupted delete leaves a parent that still
	// lists, never an orphan that does not.
	for i := len(doomed) - 1; i >= 0; i-- {
		if err := del.Delete(ctx, doomed[i]); err != nil {
			if errors.Is(err, sessionlog.ErrInUse) {
				return invalid(fmt.Sprintf("session %s is in use by another process: %v", doomed[i], err))
			}
			return fmt.Errorf("delete session %s: %w", id, err)
		}
	}
	if len(refs) == 0 || e.cfg.Attachments == nil {
		return nil
	}
	// Objects are shared by content: keep those another session refers to.
	for _, o := range others {
		if gone[o] || len(refs) == 0 {
			continue
		}
		kept := map[string]bool{}
		if err := e.refsOf(ctx, o, kept); err != nil {
			if errors.Is(err, sessionlog.ErrNotFound) {
				continue // deleted meanwhile
			}
			return fmt.Errorf("delete session %s: the attachments are kept: %w", id, err)
		}
		for r := range kept {
			delete(refs, r)
		}
	}
	for r := range refs {
		if err := e.cfg.Attachments.Remove(r); err != nil {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
	}
	return nil
}

// refsOf adds the attachment ids stored session id refers to to refs.
func (e *Engine) refsOf(ctx context.Context, id string, refs map[string]bool) error {
	l, err := e.cfg.Store.Inspect(ctx, id)
	if err != nil {
		return fmt.Errorf("read session %s: %w", id, err)
	}
	for _, ev := range l.Log.Events() {
		for _, m := range attachmentRef().FindAllSubmatch(ev.Data, -1) {
			refs[string(m[1])] = true
		}
	}
	return nil
}
