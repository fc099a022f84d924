package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// DefaultMaxSubagentDepth is how deep children may nest when
// Config.MaxSubagentDepth is 0: a session's children may not delegate
// further (the reference deployment's limit).
const DefaultMaxSubagentDepth = 1

// delegator is a run's tools.Delegator: the subagent tools' calls of one
// turn of a session.
type delegator struct{ r *run }

var _ tools.Delegator = delegator{}

// Delegate implements tools.Delegator. A child is a session of its own,
// with its own log (linked to the parent by its header), opened in the
// parent's store and cwd; it runs one turn on the prompt under the
// parent's effective sandbox mode with the approval policy never (it never
// asks anyone), never wider than its ancestors' current ones (see
// agent/submode.go), and is closed when the turn ends. The result is the child's
// final text, or an error result saying how the child's turn ended. A
// fork child starts from a copy of the parent's events up to its last
// completed turn.
func (d delegator) Delegate(ctx context.Context, del tools.Delegation) (tools.Result, error) {
	r := d.r
	parent, e := r.s, r.e
	fail := func(text string) (tools.Result, error) { return tools.Result{Text: text, IsError: true}, nil }
	if breakSubagents() {
		return tools.Result{Text: "ok"}, nil
	}
	depth := parent.depth + 1
	if limit := e.maxDepth(); depth > limit {
		return fail(fmt.Sprintf("Error: subagent depth %d exceeds maxDepth %d", depth, limit))
	}
	// The child's log starts with the parent's effective mode; a later
	// narrowing of the parent, or of any ancestor, still binds it
	// (Session.Mode reads its live parent's at every call).
	mode := parent.Mode()
	// Children of one step's parallel calls are created in call order.
	order, _ := ctx.Value(creationOrderKey{}).(*creationOrder)
	if err := order.wait(ctx); err != nil {
		return fail("Error: subagent run was cancelled")
	}
	if del.Background && !parent.kids.reserve() {
		// A model must not be able to start children without bound.
		order.created()
		return fail(limitRefusal())
	}
	child, err := e.openChild(ctx, parent, del, depth, mode)
	order.created()
	if err != nil && del.Background {
		parent.kids.n.Add(-1) // the reservation
	}
	if err != nil {
		e.log.Error("cannot start a subagent", "session", parent.id, "err", err)
		return fail("Error: subagent run failed: " + err.Error())
	}
	if e.cfg.FailSubagentStart {
		if del.Background {
			parent.kids.n.Add(-1) // the reservation
		}
		if err := e.CloseSession(child.id); err != nil {
			e.log.Warn("closing a subagent", "session", child.id, "err", err)
		}
		return fail("Error: subagent run failed: " + errInjectedStart.Error())
	}
	if del.Background {
		return e.startBackground(ctx, parent, del, depth, child), nil
	}
	defer func() {
		if err := e.CloseSession(child.id); err != nil {
			e.log.Warn("closing a subagent", "session", child.id, "err", err)
		}
	}()
	e.log.Info("subagent started", "session", parent.id, "child", child.id, "fork", del.Fork, "depth", depth)
	up := &childUpdates{parent: r.c.Updates, callID: del.CallID}
	if _, err := child.Prompt(ctx, []Content{{Text: del.Prompt}}, Client{Updates: up}); err != nil && ctx.Err() == nil {
		e.log.Warn("subagent run failed", "session", parent.id, "child", child.id, "err", err)
	}
	return childResult(child), nil
}

// The injected faults (Config.FailSubagentStart, FailSubagentTurn).
var (
	errInjectedStart = errors.New("injected fault: the subagent failed before its first turn (--debug-fail-subagent-start)")
	errInjectedTurn  = errors.New("injected fault: the subagent's turn failed before its first step (--debug-fail-subagent-turn)")
)

// maxDepth is the configured subagent depth limit.
func (e *Engine) maxDepth() int {
	if e.cfg.MaxSubagentDepth > 0 {
		return e.cfg.MaxSubagentDepth
	}
	return DefaultMaxSubagentDepth
}

// openChild creates the child session of a delegation: its header names
// the parent, its depth and (a fork) how many parent events it copied;
// then the copy and session/end-seed, the approval policy never and the
// parent's mode, both with source "delegation". Its descriptor is written
// when its first step starts. A background child's log begins, as dsh's
// does, with its descriptor and session/end-seed, then the parent's mode
// and the approval policy; it is offered the report tool.
func (e *Engine) openChild(ctx context.Context, parent *Session, del tools.Delegation, depth int, mode sandbox.Mode) (*Session, error) {
	var seed []sessionlog.Event
	if del.Fork {
		parent.mu.Lock()
		evs := parent.log.Log().Events()
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i].Type == sessionlog.TypeTurnEnd {
				seed = append([]sessionlog.Event(nil), evs[:i+1]...)
				break
			}
		}
		parent.mu.Unlock()
	}
	id := e.childID()
	h := sessionlog.NewChildHeader(id, e.childCreatedAt(), parent.cwd, sessionlog.ChildHeader{Parent: parent.id, SeedLength: len(seed), Depth: depth})
	w, err := e.cfg.Store.Create(ctx, h)
	if err != nil {
		return nil, fmt.Errorf("create the child's log: %w", err)
	}
	ls := sessionlog.NewSession(sessionlog.New(h), w)
	if len(seed) > 0 {
		if err := ls.Append(ctx, seed...); err != nil {
			_ = w.Close()
			return nil, fmt.Errorf("copy the parent's turns into the child's log: %w", err)
		}
	}
	// The child's replay position skips the model calls its copy holds.
	script, derr := replay.Derive(seed)
	if derr != nil {
		e.log.Warn("cannot count the model calls a fork copied", "session", parent.id, "err", derr)
	}
	child, _, err := e.register(ls, id, parent.cwd, len(script), nil)
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	child.depth, child.child = depth, true
	// The child is offered the parent's tools, its MCP servers' included
	// (the connection stays the parent's: the child does not close it).
	parent.mu.Lock()
	confined, full := parent.confined, parent.full
	parent.mu.Unlock()
	child.mu.Lock()
	child.confined, child.full, child.up = confined, full, parent
	child.mu.Unlock()
	provider := sessionlog.SubagentSpawn
	if del.Fork {
		provider = sessionlog.SubagentFork
	}
	now := e.now()
	if del.Background {
		return child, e.openBackground(ctx, parent, child, del, mode, now)
	}
	child.descriptor = &sessionlog.SubagentDescriptorData{Version: 2, Mode: sessionlog.SubagentOneShot, Provider: provider, Label: del.Description}
	if len(seed) > 0 {
		if _, err := child.emit(ctx, now, sessionlog.TypeEndSeed, sessionlog.EndSeedData{}, nil, nil); err != nil {
			return nil, e.abandon(child, err)
		}
		// The copied turns' headers were the parent's process's: the
		// child's first step writes a resume header.
	}
	if _, err := child.emit(ctx, now, sessionlog.TypeApprovalPolicy, sessionlog.ApprovalPolicyData{Policy: ApprovalNever, Source: "delegation"}, nil, nil); err != nil {
		return nil, e.abandon(child, err)
	}
	if _, err := child.emit(ctx, now, sessionlog.TypeSandboxMode, sessionlog.SandboxModeData{Mode: string(mode), Source: "delegation"}, nil, nil); err != nil {
		return nil, e.abandon(child, err)
	}
	if err := child.checkpoint(ctx); err != nil {
		return nil, e.abandon(child, err)
	}
	child.started = closedChan()
	return child, nil
}

// openBackground writes the creation seed of a background child: its
// descriptor, session/end-seed, the delegated mode and approval policy.
func (e *Engine) openBackground(ctx context.Context, parent, child *Session, del tools.Delegation, mode sandbox.Mode, now int64) error {
	d := sessionlog.SubagentDescriptorData{Version: 2, Mode: sessionlog.SubagentContinuable, Provider: sessionlog.SubagentSpawn,
		Label: del.Description, AgentProvider: e.cfg.Provider, AgentModel: parent.model()}
	for _, ev := range []struct {
		typ string
		p   sessionlog.Payload
	}{
		{sessionlog.TypeSubagentDescriptor, d},
		{sessionlog.TypeEndSeed, sessionlog.EndSeedData{}},
		{sessionlog.TypeSandboxMode, sessionlog.SandboxModeData{Mode: string(mode), Source: "delegation"}},
		{sessionlog.TypeApprovalPolicy, sessionlog.ApprovalPolicyData{Policy: ApprovalNever, Source: "delegation"}},
	} {
		if _, err := child.emit(ctx, now, ev.typ, ev.p, nil, nil); err != nil {
			return e.abandon(child, err)
		}
	}
	if err := child.checkpoint(ctx); err != nil {
		return e.abandon(child, err)
	}
	if err := e.asBackgroundChild(child, parent); err != nil {
		return e.abandon(child, err)
	}
	child.started = closedChan()
	return nil
}

// recordedIDs is implemented by Models that replay recorded sessions:
// the id the index-th session opened in this process had when recorded.
// (child: for a child session).
type recordedIDs interface {
	RecordedID(index int, child bool) string
}

// childID is a new child's id: its recording's under replay, so that the
// recorded texts naming it (started subagent <id>) and the model's
// arguments (send_message) hold; else a new one.
func (e *Engine) childID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nextIDLocked(true)
}

// nextIDLocked is the id of the next session opened (with e.mu held): the
// recorded one under replay, else a new one.
func (e *Engine) nextIDLocked(child bool) string {
	if r, ok := e.cfg.Models.(recordedIDs); ok {
		if id := r.RecordedID(e.opened, child); id != "" {
			return id
		}
	}
	return e.newID()
}

// closedChan is a closed channel: a child runs no SessionStart hooks.
func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// childResult is what the parent's model reads of a child's turn: its
// final text when the turn completed, else an error naming how it ended,
// with the text it had written.
func childResult(child *Session) tools.Result {
	child.mu.Lock()
	lg := child.log.Log()
	evs := lg.Events()
	// The copied turns of a fork (and its session/end-seed) are the
	// parent's, not the child's output.
	own := 0
	if c, _ := lg.Header().Child(); c.SeedLength > 0 {
		own = c.SeedLength + 1
	}
	kind, parts := childOutcome(evs, own)
	text := strings.Join(parts, "")
	child.mu.Unlock()
	if kind == sessionlog.EndCompleted {
		return tools.Result{Text: text}
	}
	var headline string
	switch kind {
	case sessionlog.EndAborted:
		headline = "subagent run was cancelled"
	case sessionlog.EndMaxTokens:
		headline = "subagent run hit its token limit before finishing"
	case sessionlog.EndBlocked:
		headline = "subagent declined the task"
	case sessionlog.EndError, sessionlog.EndInterrupted, "":
		headline = "subagent run failed"
	default:
		headline = fmt.Sprintf("subagent run ended abnormally (%s)", kind)
	}
	msg := "Error: " + headline
	if text != "" {
		msg += "\nPartial output before the run ended:\n" + text
	}
	return tools.Result{Text: msg, IsError: true}
}

// childUpdates shows a child's turn as the progress of the parent's
// subagent call: the child's answer so far and the tools it calls.
type childUpdates struct {
	parent Updates
	callID string
	shown  strings.Builder
}

var _ Updates = (*childUpdates)(nil)

// show sends what the child did so far, its last few KiB.
func (c *childUpdates) show(ctx context.Context) {
	s := c.shown.String()
	if len(s) > tools.ProgressBytes {
		s = "…" + s[len(s)-tools.ProgressBytes:]
	}
	c.parent.ToolProgress(ctx, c.callID, s)
}

// UserText implements Updates (history only: not sent).
func (c *childUpdates) UserText(context.Context, string) {}

// Text implements Updates.
func (c *childUpdates) Text(ctx context.Context, text string) {
	c.shown.WriteString(text)
	c.show(ctx)
}

// Thought implements Updates: a child's reasoning is its own.
func (c *childUpdates) Thought(context.Context, string) {}

// ToolStart implements Updates.
func (c *childUpdates) ToolStart(ctx context.Context, call ToolCall) {
	if c.shown.Len() > 0 && !strings.HasSuffix(c.shown.String(), "\n") {
		c.shown.WriteString("\n")
	}
	c.shown.WriteString("→ " + call.Title + "\n")
	c.show(ctx)
}

// ToolRunning implements Updates.
func (c *childUpdates) ToolRunning(context.Context, string) {}

// ToolProgress implements Updates: a child command's output stays its own.
func (c *childUpdates) ToolProgress(context.Context, string, string) {}

// ToolEnd implements Updates.
func (c *childUpdates) ToolEnd(context.Context, string, tools.Result) {}

// Plan implements Updates.
func (c *childUpdates) Plan(context.Context, []tools.Todo) {}

// Usage implements Updates.
func (c *childUpdates) Usage(context.Context, ContextUsage) {}

// Title implements Updates: a child's title is not the editor's.
func (c *childUpdates) Title(context.Context, Title) {}

// creationOrder makes the children of parallel subagent calls be created
// in the calls' order, so their logs (and a replay's scripts) are numbered
// as the model ordered the calls: a call waits for after (the previous
// call's done) before creating its child, then closes done.
type creationOrder struct {
	after <-chan struct{}
	done  chan struct{}
	once  sync.Once
}

// creationOrderKey is the context key of a call's creationOrder.
type creationOrderKey struct{}

// wait blocks until the previous call created its child (nil o: at once).
func (o *creationOrder) wait(ctx context.Context) error {
	if o == nil || o.after == nil {
		return nil
	}
	select {
	case <-o.after:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// created lets the next call go on; it may be called more than once.
func (o *creationOrder) created() {
	if o != nil {
		o.once.Do(func() { close(o.done) })
	}
}

// childCreatedAt is the creation time of a new child: now, but always after
// the previous child's, so that ordering children by createdAt (as dsh
// numbers them, and the harness pairs them) is their creation order even
// when several are created within a millisecond.
func (e *Engine) childCreatedAt() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := max(e.now(), e.lastChild+1)
	e.lastChild = t
	return t
}
