package agent

import "github.com/reel-agent/reel/sessionlog"

// notices are messages the session's own machinery queues for the model
// between steps (a background job that finished, …): the next step enters
// them first, before the engine's other context messages. They are not
// derived from the log; a message queued when no turn follows waits for
// the next prompt.
type notices struct {
	pending []sessionlog.UserMessage
	// invoked are the skills the running prompt named (/name), for its
	// first step.
	invoked []sessionlog.UserMessage
}

// queueNotice queues m for the session's next step. Safe for concurrent
// use (a background job ends on its own goroutine).
func (s *Session) queueNotice(m sessionlog.UserMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices.pending = append(s.notices.pending, m)
}

// setInvoked keeps the skill messages a prompt invoked for its first
// step, which enters them after its other messages.
func (s *Session) setInvoked(ms []sessionlog.UserMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices.invoked = ms
}

// takeInvoked returns the invoked skill messages and forgets them.
func (s *Session) takeInvoked() []sessionlog.UserMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.notices.invoked
	s.notices.invoked = nil
	return out
}

// takeNotices returns the queued notices, oldest first, and forgets them.
func (s *Session) takeNotices() []sessionlog.UserMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.notices.pending
	s.notices.pending = nil
	return out
}
