package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/reel-agent/reel/sessionlog"
)

// ForkSession starts a new session from session id's history and opens it
// live (as LoadSession opens a stored one) in cwd. With at < 0 the whole
// history is kept: every event up to the last turn/end. Otherwise at must
// be a message id's seq of that session (agent.MessageMarker: a user
// message's user/message event, or a step's request/context event for the
// model's answer), and the fork keeps every event up to and including the
// turn/end of the turn that message belongs to; later turns are left out.
// The new log is that prefix then session/end-seed (sessionlog.ForkSeed),
// and loads like any other. An id that names no session, a session busy
// with a prompt, or an anchor that is not one of its message ids is
// refused with ErrInvalid.
func (e *Engine) ForkSession(ctx context.Context, id, cwd string, at int, opts ...SessionOption) (*Session, error) {
	if !filepath.IsAbs(cwd) {
		return nil, invalid(fmt.Sprintf("cwd %q must be an absolute path", cwd))
	}
	var events []sessionlog.Event
	e.mu.Lock()
	s, open := e.sessions[id]
	e.mu.Unlock()
	if open {
		s.mu.Lock()
		if s.busy {
			s.mu.Unlock()
			return nil, invalid(fmt.Sprintf("session %s is busy with a prompt: cancel it or wait, then fork", id))
		}
		events = append(events, s.log.Log().Events()...)
		s.mu.Unlock()
	} else {
		loaded, err := e.cfg.Store.Inspect(ctx, id)
		if err != nil {
			if errors.Is(err, sessionlog.ErrNotFound) || errors.Is(err, sessionlog.ErrBadID) {
				return nil, invalid(fmt.Sprintf("unknown session %q: %v", id, err))
			}
			return nil, fmt.Errorf("fork session %s: read its log: %w", id, err)
		}
		events = loaded.Log.Events()
	}
	end, err := forkEnd(events, at)
	if err != nil {
		return nil, invalid(fmt.Sprintf("session/fork of %s: %v", id, err))
	}
	e.mu.Lock()
	nid := e.nextIDLocked(false)
	e.mu.Unlock()
	h := sessionlog.NewHeader(nid, e.now(), cwd)
	w, err := e.cfg.Store.Create(ctx, h)
	if err != nil {
		return nil, fmt.Errorf("fork session %s: create the log of %s: %w", id, nid, err)
	}
	ls := sessionlog.NewSession(sessionlog.New(h), w)
	if err := ls.Append(ctx, sessionlog.ForkSeed(events, end)...); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("fork session %s: seed the log of %s: %w", id, nid, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("fork session %s: close the log of %s: %w", id, nid, err)
	}
	e.log.Info("session forked", "session", id, "fork", nid, "events", end+1)
	return e.LoadSession(ctx, nid, cwd, opts...)
}

// forkEnd is the index of the turn/end a fork at seq at keeps up to (see
// ForkSession).
func forkEnd(events []sessionlog.Event, at int) (int, error) {
	if at < 0 {
		for i := len(events) - 1; i >= 0; i-- {
			if events[i].Type == sessionlog.TypeTurnEnd {
				return i, nil
			}
		}
		return 0, errors.New("the session has no finished turn to fork")
	}
	if at >= len(events) || !isMessage(events[at]) {
		return 0, fmt.Errorf("%s is not a message id of this session", messageID(at))
	}
	for i := at + 1; i < len(events); i++ {
		if events[i].Type == sessionlog.TypeTurnEnd {
			return i, nil
		}
	}
	return 0, fmt.Errorf("the turn of message %s has not ended", messageID(at))
}

// isMessage reports whether e is an event a message id names: a step's
// request/context, or a user/message the user typed.
func isMessage(e sessionlog.Event) bool {
	switch e.Type {
	case sessionlog.TypeRequestContext:
		return true
	case sessionlog.TypeUserMessage:
		var m sessionlog.Message
		if json.Unmarshal(e.Data, &m) != nil {
			return false
		}
		var src struct {
			Kind string `json:"kind"`
		}
		_ = json.Unmarshal(m.Source, &src)
		return src.Kind == "user"
	}
	return false
}
