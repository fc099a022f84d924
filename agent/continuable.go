package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// Background (continuable) children: subagent with run_in_background
// true. The call creates the child — its log starts with its descriptor,
// session/end-seed and the delegated policy — puts the prompt in its inbox
// and answers "started subagent <id>" at once. The child then runs turns
// while its inbox has work (its prompt, then each send_message, first in
// first out); when it runs out of work its activation settles: the child
// is released (closed; list_agents shows it "ready") and its parent gets
// one notice saying how it ended, with its closing message. report hands
// a result to the parent at its next step. A later send_message loads a
// released child again and starts a new activation. The texts are the
// reference system's (docs/subagents-reference.md, sections 2-5).

// maxBackgroundSubagents bounds the background children of one session
// running at a time; maxReportBytes bounds one report's output.
const (
	maxBackgroundSubagents = 4
	maxReportBytes         = 64 << 10
)

// kids are a session's background children; mu guards the list and the
// kids' fields. Lock order: a session's kids.mu before any session's mu.
type kids struct {
	mu   sync.Mutex
	list []*kid
	// n counts the running kids (read under a session's mu, which the
	// kids' lock must not be taken under).
	n atomic.Int32
}

// kid is one background child.
type kid struct {
	id, label string
	createdAt int64
	// sess is the live child (nil: released, only in the store).
	sess *Session
	// running is set from the start of an activation to its settlement;
	// from is the child's log length when the activation began.
	running bool
	from    int
	// stopping is set when the user's cancel interrupted the kid, until
	// it settles: the next prompt waits for its notice.
	stopping bool
	// provider is a released child's model, for its next activation in
	// this process.
	provider llm.Provider
}

// running is the number of running kids.
func (k *kids) running() int { return int(k.n.Load()) }

// reserve counts a new running kid unless maxBackgroundSubagents are
// running; startBackground then adds it already running.
func (k *kids) reserve() bool {
	for {
		n := k.n.Load()
		if n >= maxBackgroundSubagents {
			return false
		}
		if k.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// setRunning marks k running or not (with kids.mu held).
func (k *kids) setRunning(c *kid, on bool) {
	if c.running != on {
		c.running = on
		if on {
			k.n.Add(1)
		} else {
			k.n.Add(-1)
		}
	}
}

// find returns the kid id, or nil (with kids.mu held).
func (k *kids) find(id string) *kid {
	for _, c := range k.list {
		if c.id == id {
			return c
		}
	}
	return nil
}

// startBackground creates a background child for d and hands it its
// prompt (Delegate's background path).
func (e *Engine) startBackground(ctx context.Context, parent *Session, del tools.Delegation, depth int, child *Session) tools.Result {
	// Running already: Delegate reserved it (kids.reserve).
	k := &kid{id: child.id, label: del.Description, createdAt: child.log.Log().Header().CreatedAt, sess: child, running: true}
	parent.kids.mu.Lock()
	defer parent.kids.mu.Unlock()
	parent.kids.list = append(parent.kids.list, k)
	e.adopt(parent, k, child)
	if e.cfg.ChildAfterTurn {
		child.waitFor(parent)
	}
	prompt := sessionlog.NewUserMessage(e.newID(), sessionlog.TextPart(del.Prompt))
	if !child.deliver(prompt, nextTurn, true) {
		parent.kids.setRunning(k, false)
		return tools.Result{Text: "Error: subagent run failed: the subagent closed before it started", IsError: true}
	}
	e.log.Info("background subagent started", "session", parent.id, "child", child.id, "depth", depth)
	return tools.Result{Text: "started subagent " + child.id}
}

// adopt links the live child of k to parent: the report tool's target and
// the settlement of its activations (with parent.kids.mu held).
func (e *Engine) adopt(parent *Session, k *kid, child *Session) {
	child.mu.Lock()
	child.parentSess, child.up = parent, parent
	child.ts.settled = func() { parent.settle(k) }
	child.mu.Unlock()
}

// waitFor makes the child's next activation wait until parent, now in
// a turn, ran out of work (Config.ChildAfterTurn).
func (s *Session) waitFor(parent *Session) {
	parent.mu.Lock()
	mark := parent.ts.idled
	parent.mu.Unlock()
	s.mu.Lock()
	s.afterTurnOf, s.afterIdle = parent, mark
	s.mu.Unlock()
}

// waitForParentTurn holds a background child's activation until the
// parent whose turn started it ran out of work (Config.ChildAfterTurn):
// its turn ended and its turn loop let the session go — its prompt is
// answered — or holds it for its children. Waiting for the turn's end
// only, the child could settle before the parent's loop looked at its
// inbox again, and the notice's turn would run inside the prompt, before
// its answer (the reference answers first: its recordings pin that).
func (s *Session) waitForParentTurn(ctx context.Context) {
	s.mu.Lock()
	p, mark := s.afterTurnOf, s.afterIdle
	s.afterTurnOf = nil
	s.mu.Unlock()
	if p != nil {
		p.waitIdled(ctx, mark)
	}
}

// settle ends an activation of the kid k: unless a message started
// another one meanwhile, the child is released and the parent gets the
// notice, as a turn of its own when it is idle, else at its next step.
func (s *Session) settle(k *kid) {
	e := s.eng
	s.kids.mu.Lock()
	defer s.kids.mu.Unlock()
	child := k.sess
	if child == nil {
		return
	}
	child.mu.Lock()
	again := child.ts.turning
	child.mu.Unlock()
	if again {
		return
	}
	notice := e.settlementNotice(child, k.from)
	k.sess, k.provider, k.stopping = nil, child.provider, false
	e.forget(child)
	e.log.Info("background subagent settled", "session", s.id, "child", k.id, "notice", notice.Content[0].Text)
	s.mu.Lock()
	defer s.mu.Unlock()
	// Under s.mu with the delivery: a held parent (Config.HoldForChildren)
	// never sees the child stopped without its notice.
	s.kids.setRunning(k, false)
	// A busy parent takes it at its next step; so does one the user
	// cancelled (quiet): the notice joins the next prompt's first step
	// instead of starting a turn of its own.
	t := nextTurn
	if s.ts.turning || s.ts.quiet {
		t = nextStep
	}
	s.deliverLocked(notice, t, true)
}

// forget closes a released child's log and drops it from the live
// sessions (called from its own turn loop: its loop is ending).
func (e *Engine) forget(child *Session) {
	if err := child.close(false); err != nil {
		e.log.Warn("closing a background subagent", "session", child.id, "err", err)
	}
	e.mu.Lock()
	if e.sessions[child.id] == child {
		delete(e.sessions, child.id)
	}
	e.mu.Unlock()
}

// settlementNotice is the parent's message when a child's activation (its
// events from seq from on) ended: how its last turn ended, and its
// closing message (the last assistant text of the activation).
func (e *Engine) settlementNotice(child *Session, from int) sessionlog.UserMessage {
	child.mu.Lock()
	kind, closing := childOutcome(child.log.Log().Events(), from)
	child.mu.Unlock()
	if breakClosing() {
		closing = nil
	}
	var how string
	switch kind {
	case sessionlog.EndCompleted:
		how = "finished and will do no further work unless you send it more."
	case sessionlog.EndAborted:
		how = "was stopped before it finished."
	case sessionlog.EndMaxTokens:
		how = "ran out of room before it finished."
	case sessionlog.EndBlocked:
		how = "declined the task."
	default:
		how = "failed before it finished."
	}
	headline := fmt.Sprintf("Background subagent %s %s", child.id, how)
	parts := []sessionlog.ContentPart{sessionlog.TextPart(headline)}
	if len(closing) > 0 {
		parts = append(parts, sessionlog.TextPart("Its closing message:"))
		for _, t := range closing {
			parts = append(parts, sessionlog.TextPart(t))
		}
	} else {
		parts = append(parts, sessionlog.TextPart("It left no closing message."))
	}
	return sessionlog.UserMessage{Content: parts, Source: relaySource("subagent-settled", "notice", headline, child.id), ID: e.newID()}
}

// childOutcome reads, in events[from:], how the last turn ended (its turn/end
// reason's kind, "" without one) and the text parts of the last assistant
// message that has text (nil: none).
func childOutcome(evs []sessionlog.Event, from int) (kind string, text []string) {
	for i := len(evs) - 1; i >= from && (kind == "" || text == nil); i-- {
		ev := &evs[i]
		switch ev.Type {
		case sessionlog.TypeTurnEnd:
			if kind == "" {
				if d, err := sessionlog.DecodeData[sessionlog.TurnEndData](ev); err == nil {
					kind = d.Reason.Kind
				}
			}
		case sessionlog.TypeAssistantMessage:
			if text != nil {
				continue
			}
			if d, err := sessionlog.DecodeData[sessionlog.MessageData](ev); err == nil {
				if m, err := sessionlog.ParseMessage(d.Message); err == nil {
					text = textParts(m.Content)
				}
			}
		}
	}
	return kind, text
}

// textParts are the non-empty text parts of a message (nil: none).
func textParts(parts []sessionlog.Part) []string {
	var out []string
	for _, p := range parts {
		if p.Type == sessionlog.PartText && p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return out
}

// relaySource is the source of a message one session hands another:
// {"kind","form","summary"?,"senderSessionId"}, dsh's members.
func relaySource(kind, form, summary, sender string) sessionlog.MessageSource {
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	src := sessionlog.MessageSource{Kind: kind, Extra: []sessionlog.Member{{Key: "form", Value: str(form)}}}
	if summary != "" {
		src.Extra = append(src.Extra, sessionlog.Member{Key: "summary", Value: str(summary)})
	}
	src.Extra = append(src.Extra, sessionlog.Member{Key: "senderSessionId", Value: str(sender)})
	return src
}

// coordinator is a run's tools.Coordinator: the control tools' calls of
// one turn of a session.
type coordinator struct{ r *run }

var _ tools.Coordinator = coordinator{}

// limitRefusal is the answer to a background subagent over the limit.
func limitRefusal() string {
	return fmt.Sprintf("Error: %d background subagents of this session are already running; "+
		"wait for one to finish (you receive a message when it does) or stop one with interrupt_agent", maxBackgroundSubagents)
}

// unavailableKid is the refusal for an id that is not a background child
// of the caller (the reference's text).
func unavailableKid(id string) tools.Result {
	return tools.Result{Text: fmt.Sprintf("Error: subagent %q is unavailable", id), IsError: true}
}

// Send implements tools.Coordinator: message becomes the next turn of the
// caller's background child id; a released child is loaded again.
func (c coordinator) Send(ctx context.Context, id, message string) (tools.Result, error) {
	s, e := c.r.s, c.r.e
	s.kids.mu.Lock()
	defer s.kids.mu.Unlock()
	k := s.kids.find(id)
	if k == nil {
		var err error
		if k, err = e.storedKid(ctx, s, id); err != nil || k == nil {
			if err != nil {
				e.log.Warn("send_message: cannot read a stored subagent", "session", s.id, "child", id, "err", err)
			}
			return unavailableKid(id), nil
		}
		s.kids.list = append(s.kids.list, k)
	}
	if !k.running {
		// A new activation counts against the limit, as a new child does.
		if !s.kids.reserve() {
			return tools.Result{Text: limitRefusal(), IsError: true}, nil
		}
		k.running = true
	}
	release := func() { s.kids.setRunning(k, false) }
	if k.sess == nil {
		// The child is bound by s from its load on: its mode and policy
		// are never wider than s's current ones.
		opts := []SessionOption{withParent(s)}
		if k.provider != nil {
			opts = append(opts, withProvider(k.provider))
		}
		child, err := e.LoadSession(ctx, id, s.cwd, opts...)
		if err != nil {
			e.log.Warn("send_message: cannot load a released subagent", "session", s.id, "child", id, "err", err)
			release()
			return unavailableKid(id), nil
		}
		if err := e.asBackgroundChild(child, s); err != nil {
			e.forget(child)
			release()
			return unavailableKid(id), nil
		}
		k.sess = child
		child.mu.Lock()
		k.from = child.log.Log().Len()
		child.mu.Unlock()
		e.adopt(s, k, child)
	}
	msg := sessionlog.UserMessage{
		Content: []sessionlog.ContentPart{sessionlog.TextPart(message)},
		Source:  relaySource("coordinator", "relay", "", s.id),
		ID:      e.newID(),
	}
	if e.cfg.ChildAfterTurn {
		// A new activation waits for the sender's turn, as the first did.
		k.sess.mu.Lock()
		idle := !k.sess.ts.turning
		k.sess.mu.Unlock()
		if idle {
			k.sess.waitFor(s)
		}
	}
	if !k.sess.deliver(msg, nextTurn, true) {
		release()
		return unavailableKid(id), nil
	}
	return tools.Result{Text: "message queued as the next turn for subagent " + id}, nil
}

// storedKid finds id among the background children the store holds for
// s (a session loaded in a new process knows its children from there).
func (e *Engine) storedKid(ctx context.Context, s *Session, id string) (*kid, error) {
	list, err := e.storedKids(ctx, s.id)
	if err != nil {
		return nil, err
	}
	for _, k := range list {
		if k.id == id {
			return k, nil
		}
	}
	return nil, nil
}

// storedKids lists the background children of parent in the store, by
// creation; a child whose log cannot be read is listed with its error.
func (e *Engine) storedKids(ctx context.Context, parent string) ([]*kid, error) {
	var out []*kid
	for info, err := range e.cfg.Store.List(ctx) {
		if err != nil {
			return nil, err
		}
		if info.Parent != parent {
			continue
		}
		l, err := e.cfg.Store.Inspect(ctx, info.ID)
		if err != nil {
			return nil, fmt.Errorf("subagent %s: %w", info.ID, err)
		}
		d, ok := descriptorOf(l.Log)
		if !ok || d.Mode != sessionlog.SubagentContinuable {
			continue
		}
		out = append(out, &kid{id: info.ID, label: d.Label, createdAt: info.CreatedAt})
	}
	slices.SortFunc(out, func(a, b *kid) int { return cmp.Or(cmp.Compare(a.createdAt, b.createdAt), cmp.Compare(a.id, b.id)) })
	return out, nil
}

// descriptorOf is the subagent descriptor of a child's log.
func descriptorOf(l *sessionlog.Log) (sessionlog.SubagentDescriptorData, bool) {
	for _, ev := range l.Events() {
		if ev.Type == sessionlog.TypeSubagentDescriptor {
			d, err := sessionlog.DecodeData[sessionlog.SubagentDescriptorData](&ev)
			return d, err == nil
		}
	}
	return sessionlog.SubagentDescriptorData{}, false
}

// asBackgroundChild makes a loaded session a background child of parent:
// the parent's tools plus report, and the report section.
func (e *Engine) asBackgroundChild(child, parent *Session) error {
	parent.mu.Lock()
	confined, full := parent.confined, parent.full
	parent.mu.Unlock()
	if confined == nil {
		confined, full = e.confined, e.full
	}
	withReport := func(set *tools.Set) (*tools.Set, error) {
		return tools.NewSet(append(set.Tools(), tools.Report{})...)
	}
	c, err := withReport(confined)
	if err != nil {
		return err
	}
	f, err := withReport(full)
	if err != nil {
		return err
	}
	child.mu.Lock()
	child.confined, child.full, child.background = c, f, true
	child.mu.Unlock()
	return nil
}

// List implements tools.Coordinator: the caller's background children,
// one line each, or with scope descendants the whole tree below it.
func (c coordinator) List(ctx context.Context, scope string) (tools.Result, error) {
	s, e := c.r.s, c.r.e
	var lines []string
	var walk func(parent string, depth int) error
	walk = func(parent string, depth int) error {
		list, err := e.storedKids(ctx, parent)
		if err != nil {
			return err
		}
		for _, k := range list {
			where := ""
			if scope == "descendants" {
				where = fmt.Sprintf(" parent=%s depth=%d", parent, depth)
			}
			lines = append(lines, fmt.Sprintf("%s [%s]%s — %s", k.id, e.kidStatus(k.id), where, k.label))
			if scope == "descendants" {
				if err := walk(k.id, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(s.id, s.depth+1); err != nil {
		return tools.Result{Text: "Error: cannot list the subagents: " + err.Error(), IsError: true}, nil
	}
	if len(lines) == 0 {
		return tools.Result{Text: "(no subagents)"}, nil
	}
	return tools.Result{Text: strings.Join(lines, "\n")}, nil
}

// kidStatus is a background child's status: running (a turn in
// progress or queued), idle (live, waiting) or ready (released).
func (e *Engine) kidStatus(id string) string {
	e.mu.Lock()
	child, live := e.sessions[id]
	e.mu.Unlock()
	if !live {
		return "ready"
	}
	child.mu.Lock()
	defer child.mu.Unlock()
	if child.ts.turning || child.ts.inTurn || len(child.ts.inbox) > 0 {
		return "running"
	}
	return "idle"
}

// Interrupt implements tools.Coordinator: the current turn of a
// background descendant of the caller is cancelled.
func (c coordinator) Interrupt(ctx context.Context, id string) (tools.Result, error) {
	s, e := c.r.s, c.r.e
	if !e.descends(ctx, id, s.id) {
		return unavailableKid(id), nil
	}
	e.mu.Lock()
	child, live := e.sessions[id]
	e.mu.Unlock()
	if live {
		child.mu.Lock()
		cancel := child.ts.bgCancel
		child.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
	return tools.Result{Text: "interrupt requested for agent " + id}, nil
}

// descends reports whether the stored session id is a background
// descendant of ancestor.
func (e *Engine) descends(ctx context.Context, id, ancestor string) bool {
	parents := map[string]string{}
	for info, err := range e.cfg.Store.List(ctx) {
		if err == nil && info.Parent != "" {
			parents[info.ID] = info.Parent
		}
	}
	for cur, hops := id, 0; hops < 64; hops++ {
		p, ok := parents[cur]
		if !ok {
			return false
		}
		if p == ancestor {
			return true
		}
		cur = p
	}
	return false
}

// Report implements tools.Coordinator: a background child's output is
// handed to its parent at its next step (waking it when idle).
func (c coordinator) Report(_ context.Context, output string) (tools.Result, error) {
	s, e := c.r.s, c.r.e
	s.mu.Lock()
	parent := s.parentSess
	s.mu.Unlock()
	fail := tools.Result{Text: "Error: direct parent is not live; report was not delivered", IsError: true}
	if parent == nil {
		return fail, nil
	}
	if len(output) > maxReportBytes {
		// A child's report is a message in its parent's context: bounded.
		cut := maxReportBytes
		for cut > 0 && !utf8.RuneStart(output[cut]) {
			cut--
		}
		output = output[:cut] + fmt.Sprintf("\n[report cut: %d more bytes were not delivered]", len(output)-cut)
	}
	msg := sessionlog.UserMessage{
		Content: []sessionlog.ContentPart{sessionlog.TextPart(fmt.Sprintf("Background subagent %s reported:", s.id)), sessionlog.TextPart(output)},
		Source:  relaySource("subagent-report", "relay", "", s.id),
		ID:      e.newID(),
	}
	if !parent.deliver(msg, nextStep, !e.shutting.Load()) {
		return fail, nil
	}
	return tools.Result{Text: "report accepted by the agent that started you as message " + msg.ID}, nil
}

// interruptKids cancels the running turns of the session's background
// children (the user cancelled the session); the next prompt waits for
// their notices (waitStopped).
func (s *Session) interruptKids() {
	s.kids.mu.Lock()
	defer s.kids.mu.Unlock()
	for _, k := range s.kids.list {
		if k.sess == nil || !k.running {
			continue
		}
		k.stopping = true
		k.sess.mu.Lock()
		cancel := k.sess.ts.bgCancel
		k.sess.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
}

// waitStopped waits (at most closeTimeout) until the background children
// the user's cancel interrupted have settled, so that their notices reach
// the prompt that follows the cancel.
func (s *Session) waitStopped(ctx context.Context) {
	deadline := time.After(closeTimeout)
	for {
		s.mu.Lock()
		ch := waitOn(&s.ts.arrived)
		s.mu.Unlock()
		s.kids.mu.Lock()
		stopping := slices.ContainsFunc(s.kids.list, func(k *kid) bool { return k.stopping })
		s.kids.mu.Unlock()
		if !stopping {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			s.eng.log.Warn("interrupted background subagents did not settle in time", "session", s.id)
			return
		case <-ctx.Done():
			return
		}
	}
}

// liveKids are the session's background children that are live.
func (s *Session) liveKids() []*Session {
	s.kids.mu.Lock()
	defer s.kids.mu.Unlock()
	var out []*Session
	for _, k := range s.kids.list {
		if k.sess != nil {
			out = append(out, k.sess)
		}
	}
	return out
}

// drainKids ends the session's background children, children first,
// before the session itself closes: their turns are cancelled and their
// logs closed.
func (e *Engine) drainKids(s *Session) {
	for _, child := range s.liveKids() {
		e.drainKids(child)
		child.stopInbox()
		e.forget(child)
	}
}
