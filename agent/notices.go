package agent

import "github.com/reel-agent/reel/sessionlog"

// notices are messages the session's own machinery queues for the model
// between steps (a background job that finished, …): the next step enters
// them first, before the engine's other context messages. They are not
// derived from the log; a message queued when no turn follows waits for
// the next prompt.
type notices struct {
	pending []sessionlog.UserMessage
	// late are notices for the step after the next: they join pending
	// when the next step took its notices.
	late []sessionlog.UserMessage
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

// queueNoticeLate queues m for the step after the next one: the order in
// which the reference agent learns of what a call only reports after it
// returned (a background process that could not be spawned is an
// asynchronous error event there, which arrives once the next step has
// claimed its messages).
func (s *Session) queueNoticeLate(m sessionlog.UserMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices.late = append(s.notices.late, m)
}

// takeNotices returns the queued notices, oldest first, and forgets them;
// the late ones become the next step's.
func (s *Session) takeNotices() []sessionlog.UserMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.notices.pending
	s.notices.pending, s.notices.late = s.notices.late, nil
	return out
}
