package agent

import (
	"context"
	"time"

	"github.com/reel-agent/reel/sessionlog"
)

// A session's inbox holds the messages that reach it from outside a
// prompt: a background child's report and settlement notice (in the
// parent), the parent's follow-ups (in a background child). A message is
// for the session's next step (it joins a running turn at its next step
// boundary) or for a turn of its own. Messages start turns when the
// session is idle; a prompt is answered only once the session is
// quiescent — no turn running and nothing its inbox would start a turn
// for — so a notice that arrives during a prompt's turn is answered
// before the prompt is. This is the reference system's inbox, whose
// recordings depend on it (docs/subagents-reference.md, sections 4-6).

// inboxTarget is when an inbox message is taken.
type inboxTarget int

const (
	// nextStep: at the next step of a running turn (or the next turn).
	nextStep inboxTarget = iota
	// nextTurn: as a turn of its own.
	nextTurn
)

// inboxItem is one message waiting in a session's inbox.
type inboxItem struct {
	msg    sessionlog.UserMessage
	target inboxTarget
}

// turnState is a session's inbox and the state of its turn loop; the
// session's mu guards it.
type turnState struct {
	inbox []inboxItem
	// turning is set while a turn loop (a prompt's, or one the inbox
	// started) holds the session; idle is closed when it ends.
	turning bool
	idle    chan struct{}
	// arrived is closed (then replaced) when a message arrives.
	arrived chan struct{}
	// inTurn is set between a turn's turn/start and turn/end; turnOver
	// is closed (then replaced) when a turn ends.
	inTurn   bool
	turnOver chan struct{}
	// idled counts the times the turn loop ran out of work: it let the
	// session go, or began holding it for its children. idleNow is
	// closed (then replaced) each time, and waiters, the background
	// children blocked until then (Config.ChildAfterTurn), reset.
	idled   uint64
	idleNow chan struct{}
	waiters int
	// answered, set when a prompt's loop let the session go, is closed
	// once that prompt's answer reached the client (Client.Answered):
	// the next turn loop the inbox starts waits for it.
	answered <-chan struct{}
	// gated is set while a turn loop the inbox started waits for such
	// an answer (read by lingerAnswer).
	gated bool
	// quiet is set when the user cancelled: arriving messages wait for
	// the next prompt instead of starting a turn.
	quiet bool
	// bg is the client of the turns the inbox starts (Session.SetClient);
	// bgCancel cancels such a turn loop and bgDone is closed when it
	// returns.
	bg       Client
	bgCancel context.CancelFunc
	bgDone   chan struct{}
	// settled, for a background child, is called when a turn loop the
	// inbox started ran out of work (agent/continuable.go).
	settled func()
}

// signal closes *ch (making it anew) to wake its waiters.
func signal(ch *chan struct{}) {
	if *ch != nil {
		close(*ch)
	}
	*ch = make(chan struct{})
}

// waitOn returns *ch, made when missing, to wait on (with s.mu held).
func waitOn(ch *chan struct{}) <-chan struct{} {
	if *ch == nil {
		*ch = make(chan struct{})
	}
	return *ch
}

// SetClient sets the client of the turns the session runs with no prompt
// pending: those its inbox starts (a background child's notice). The ACP
// adapter sets it for every session it opens; without it such turns
// report to no one (they are still logged).
func (s *Session) SetClient(c Client) {
	s.mu.Lock()
	s.ts.bg = c.withDefaults()
	s.mu.Unlock()
}

// deliver puts m in the session's inbox. With wake, an idle session starts
// a turn for it (unless the user cancelled since the last prompt, or the
// engine is closing). It reports false when the session is closed
// (nothing was delivered).
func (s *Session) deliver(m sessionlog.UserMessage, t inboxTarget, wake bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deliverLocked(m, t, wake)
}

// deliverLocked is deliver with s.mu held.
func (s *Session) deliverLocked(m sessionlog.UserMessage, t inboxTarget, wake bool) bool {
	if s.closed {
		return false
	}
	s.ts.inbox = append(s.ts.inbox, inboxItem{msg: m, target: t})
	signal(&s.ts.arrived)
	if wake && !s.ts.turning && !s.ts.quiet && !s.eng.shutting.Load() {
		s.startInboxLocked()
	}
	return true
}

// claimLocked takes the inbox messages a turn (atTurn) or a step takes:
// every next-step message, then, at a turn's start, one next-turn message.
// With holdSteps, next-step messages stay (a held parent waits for its
// children's settlement).
func (s *Session) claimLocked(atTurn, holdSteps bool) []sessionlog.UserMessage {
	var out []sessionlog.UserMessage
	keep := s.ts.inbox[:0]
	took := false
	for _, it := range s.ts.inbox {
		switch {
		case it.target == nextStep && !holdSteps:
			out = append(out, it.msg)
		case it.target == nextTurn && atTurn && !took:
			took = true
			out = append(out, it.msg)
		default:
			keep = append(keep, it)
		}
	}
	// Taken next-turn message last: next-step messages surface first.
	s.ts.inbox = keep
	return out
}

// claimStep takes the next-step messages for a running turn's next step.
func (s *Session) claimStep() []sessionlog.UserMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holdsFor() {
		return nil
	}
	return s.claimLocked(false, false)
}

// holdsFor reports whether the session holds its inbox's next-step
// messages: under Config.HoldForChildren while a background child it
// started is still running (with s.mu held; the child list's lock is
// taken after s.mu only through runningKids, which takes no session
// lock).
func (s *Session) holdsFor() bool {
	return s.eng.cfg.HoldForChildren && s.kids.running() > 0
}

// acquire waits until no turn loop holds the session, then holds it.
func (s *Session) acquire(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return invalid("session " + s.id + " is closed")
		}
		if !s.ts.turning {
			s.ts.turning = true
			s.mu.Unlock()
			return nil
		}
		ch := waitOn(&s.ts.idle)
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// nextInboxTurn is asked by a turn loop after each turn: it returns the
// messages of the next turn the inbox holds work for, or, when there is
// none, releases the session and returns false. A session held for its
// children (Config.HoldForChildren) waits here while one is running.
// answered is the prompt's Client.Answered for a prompt's loop (nil for
// one the inbox started): a turn loop the inbox starts once the session
// is let go waits for it.
func (s *Session) nextInboxTurn(ctx context.Context, answered <-chan struct{}) ([]sessionlog.UserMessage, bool) {
	for {
		s.mu.Lock()
		if s.closed || ctx.Err() != nil {
			s.releaseLocked(answered)
			s.mu.Unlock()
			return nil, false
		}
		hold := s.holdsFor()
		if msgs := s.claimLocked(true, hold); len(msgs) > 0 {
			s.mu.Unlock()
			return msgs, true
		}
		if hold {
			s.idledLocked()
			ch := waitOn(&s.ts.arrived)
			s.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
			}
			continue
		}
		s.releaseLocked(answered)
		s.mu.Unlock()
		return nil, false
	}
}

// releaseLocked ends the turn loop's hold on the session; answered is
// what the next turn loop the inbox starts waits for (nil: nothing).
func (s *Session) releaseLocked(answered <-chan struct{}) {
	s.ts.answered = answered
	s.idledLocked()
	if s.ts.turning {
		s.ts.turning = false
		signal(&s.ts.idle)
	}
}

// startInboxLocked starts a turn loop for the inbox's work (with s.mu
// held and the session idle): its turns report to the session's client.
func (s *Session) startInboxLocked() {
	s.ts.turning = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.ts.bgCancel, s.ts.bgDone = cancel, done
	c := s.ts.bg
	if c.Updates == nil {
		c = c.withDefaults()
	}
	// The prompt that let the session go is answered before this loop's
	// first update: the client sees the prompt end, then the new turn.
	answered := s.ts.answered
	s.ts.answered = nil
	go func() {
		defer close(done)
		defer cancel()
		if answered != nil {
			s.mu.Lock()
			s.ts.gated = true
			signal(&s.ts.arrived)
			s.mu.Unlock()
			select {
			case <-answered:
			case <-ctx.Done():
			}
			s.mu.Lock()
			s.ts.gated = false
			s.mu.Unlock()
		}
		s.inboxTurns(ctx, c)
	}()
}

// inboxTurns runs the turns the inbox holds work for, then, for a
// background child, settles.
func (s *Session) inboxTurns(ctx context.Context, c Client) {
	s.waitForParentTurn(ctx)
	for {
		s.linger(ctx)
		msgs, ok := s.nextInboxTurn(ctx, nil)
		if !ok {
			break
		}
		s.settleTitle(titleDeadline())
		if _, err := s.turn(ctx, c, nil, msgs); err != nil {
			s.eng.log.Warn("a turn the inbox started failed", "session", s.id, "err", err)
		}
	}
	s.mu.Lock()
	settled := s.ts.settled
	s.mu.Unlock()
	if settled != nil {
		settled()
	}
}

// turnStarted and turnEnded track whether a turn is in progress.
func (s *Session) turnStarted() {
	s.mu.Lock()
	s.ts.inTurn = true
	s.mu.Unlock()
}

func (s *Session) turnEnded() {
	s.mu.Lock()
	s.ts.inTurn = false
	signal(&s.ts.turnOver)
	s.mu.Unlock()
}

// waitIdled waits until the session's turn loop ran out of work after
// the count mark (idled > mark), or the session closed.
func (s *Session) waitIdled(ctx context.Context, mark uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.ts.idled <= mark && !s.closed {
		ch := waitOn(&s.ts.idleNow)
		s.ts.waiters++
		signal(&s.ts.arrived)
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		s.mu.Lock()
		if ctx.Err() != nil {
			if s.ts.idled <= mark && s.ts.waiters > 0 {
				s.ts.waiters--
			}
			return
		}
	}
}

// idledLocked records that the turn loop ran out of work (with s.mu
// held): the children waiting for it go.
func (s *Session) idledLocked() {
	s.ts.idled++
	s.ts.waiters = 0
	signal(&s.ts.idleNow)
}

// linger holds a turn loop after a turn, before it takes its inbox's
// work or lets the session go, until no background child it started is
// running (the last one's notice is in the inbox) or one waits for this
// session (Config.LingerAfterTurn): a settlement then reaches the
// session between its turns, whatever the timing.
func (s *Session) linger(ctx context.Context) {
	if !s.eng.cfg.LingerAfterTurn {
		return
	}
	for {
		s.mu.Lock()
		if s.closed || s.kids.running() == 0 || s.ts.waiters > 0 {
			s.mu.Unlock()
			return
		}
		ch := waitOn(&s.ts.arrived)
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// Cancel cancels the turn the session runs with no prompt pending (one
// its inbox started), and interrupts its background children: after a
// cancel, arriving messages wait for the next prompt. A prompt's turn is
// cancelled through its context.
func (s *Session) Cancel() {
	s.mu.Lock()
	s.ts.quiet = true
	cancel := s.ts.bgCancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.interruptKids()
}

// lingerAnswer holds a prompt that let the session go, before it
// returns (is answered), until none of the session's background
// children is running and a turn loop its inbox started meanwhile either
// waits for the answer or is done (Config.LingerAfterTurn): a
// settlement's turn then races the answer, whatever the timing.
func (s *Session) lingerAnswer(ctx context.Context) {
	if !s.eng.cfg.LingerAfterTurn {
		return
	}
	for {
		s.mu.Lock()
		if s.closed || (s.kids.running() == 0 && (!s.ts.turning || s.ts.gated)) {
			s.mu.Unlock()
			return
		}
		arrived, idle := waitOn(&s.ts.arrived), waitOn(&s.ts.idle)
		s.mu.Unlock()
		select {
		case <-arrived:
		case <-idle:
		case <-ctx.Done():
			return
		}
	}
}

// stopInbox cancels a turn loop the inbox started and waits (bounded) for
// it to write its turn's end.
func (s *Session) stopInbox() {
	s.mu.Lock()
	cancel, done := s.ts.bgCancel, s.ts.bgDone
	s.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	select {
	case <-done:
	case <-time.After(closeTimeout):
		s.eng.log.Warn("a background turn did not end in time", "session", s.id)
	}
}
