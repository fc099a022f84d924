package agent

import (
	"context"

	"github.com/reel-agent/reel/agent/askuser"
	"github.com/reel-agent/reel/agent/tools"
)

// WithQuestions offers the session's model the ask_user_question tool
// (package askuser): its client can show questions (Client.Questions). Its
// subagents are offered the tool too, and refused when they call it, as
// the reference refuses a child.
func WithQuestions() SessionOption {
	return func(o *sessionOptions) { o.questions = true }
}

// offerQuestions adds ask_user_question to the session's tool sets (before
// its MCP servers connect, whose tools join these).
func (s *Session) offerQuestions() error {
	extra := []tools.Tool{askuser.Tool{}}
	confined, err := toolSetWith(s.eng.cfg, true, extra)
	if err != nil {
		return err
	}
	full, err := toolSetWith(s.eng.cfg, false, extra)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.asks, s.confined, s.full = true, confined, full
	s.mu.Unlock()
	return nil
}

// questionTools are the tools the session adds to its MCP servers' tools.
func (s *Session) questionTools() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.asks {
		return nil
	}
	return []tools.Tool{askuser.Tool{}}
}

// askContext is ctx carrying who answers the run's ask_user_question
// calls: nobody for a subagent (refused as delegated), else the client's
// Questions (nil: nobody can be asked).
func (r *run) askContext(ctx context.Context) context.Context {
	if r.s.child {
		return askuser.NewContext(ctx, askuser.Delegated)
	}
	if r.c.Questions == nil {
		return ctx
	}
	return askuser.NewContext(ctx, r.c.Questions)
}
