package agent

import (
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// history is a session's tools.History: its own log, read under its lock,
// for the session query tools (agent/sessionquery).
type history struct{ s *Session }

var _ tools.History = history{}

// SessionID implements tools.History.
func (h history) SessionID() string { return h.s.id }

// Title implements tools.History.
func (h history) Title() string {
	t, _ := h.s.Title()
	return t.Text
}

// Window implements tools.History: a copy of the events in [from, to]
// (their data is never modified once logged, so it is shared).
func (h history) Window(from, to int) ([]sessionlog.Event, int) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	evs := h.s.log.Log().Events()
	n := len(evs)
	from, to = max(from, 0), min(to, n-1)
	if from > to {
		return nil, n
	}
	return append([]sessionlog.Event(nil), evs[from:to+1]...), n
}
