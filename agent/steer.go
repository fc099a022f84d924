package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// ErrNoTurn is returned by Session.Steer when the session runs no turn: the
// message has nothing to join and should be sent as a prompt.
var ErrNoTurn = errors.New("agent: no turn is running")

// maxSteering bounds the steering messages waiting for a turn's next step.
const maxSteering = 16

// steeringSource is the source of a message the user put into a running
// turn: the user's, marked with how it arrived.
func steeringSource() sessionlog.MessageSource {
	src := sessionlog.UserSource()
	src.Extra = []sessionlog.Member{{Key: "delivery", Value: []byte(`"steering"`)}}
	return src
}

// Steer puts text the user sent while a turn runs into that turn. It goes
// through the session's inbox as a next-step message, the way a background
// child's report does (agent/inbox.go): it enters the turn at its next step
// boundary, logged there as a user/message before the step's model call, so
// a replay of the log sends the same requests; a turn that ends without
// another step hands it to a turn of its own before the prompt is answered.
// It returns the message's id. With no turn running it fails with an error
// matching ErrNoTurn (nothing is delivered); empty text, a closed session
// or too many messages already waiting fail with ErrInvalid or ErrBusy.
func (s *Session) Steer(texts []string) (string, error) {
	var parts []sessionlog.ContentPart
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			parts = append(parts, sessionlog.TextPart(t))
		}
	}
	if len(parts) == 0 {
		return "", invalid(fmt.Sprintf("session %s: a steering message needs text", s.id))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", invalid(fmt.Sprintf("session %s is closed", s.id))
	}
	if !s.ts.inTurn {
		return "", fmt.Errorf("session %s: %w", s.id, ErrNoTurn)
	}
	waiting := 0
	for _, it := range s.ts.inbox {
		if it.target == nextStep {
			waiting++
		}
	}
	if waiting >= maxSteering {
		return "", busy(fmt.Sprintf("session %s already has %d messages waiting for the running turn's next step; wait for it", s.id, waiting))
	}
	msg := sessionlog.UserMessage{Content: parts, Source: steeringSource(), ID: s.eng.newID()}
	if !s.deliverLocked(msg, nextStep, false) {
		return "", invalid(fmt.Sprintf("session %s is closed", s.id))
	}
	return msg.ID, nil
}
