package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog"
)

// A subagent never runs wider than every ancestor's current sandbox mode
// and approval policy. Its mode is not a copy taken when it was created:
// Session.Mode and Session.approval narrow the session's own (its log's)
// by its live parent's effective one, recursively, at every call — so a
// set_mode anywhere up the tree reaches the next tool call of every
// descendant, and a child loaded again (send_message after a restart) is
// bound by the parent that loads it. A child loaded with no live parent
// is bound by its stored ancestors' logged mode and policy instead. When
// an ancestor narrows, the background jobs its live descendants started
// under a wider mode are stopped, as its own are; and a child's next step
// logs the narrowing (sandbox/mode, approval/policy with source
// "ancestor"), so its log and its system prompt state the mode it runs
// under.

// sourceAncestor is the source of a sandbox/mode or approval/policy a
// child logs when an ancestor's narrower one binds it.
const sourceAncestor = "ancestor"

// narrowerMode is the narrower of two modes (an unknown one is narrowest).
func narrowerMode(a, b sandbox.Mode) sandbox.Mode {
	if a.Wider(b) {
		return b
	}
	return a
}

// narrowerPolicy is the narrower of two approval policies: never, when
// either is.
func narrowerPolicy(a, b string) string {
	if a == ApprovalNever || b == ApprovalNever {
		return ApprovalNever
	}
	return a
}

// ancestorsMode is the narrowest current mode of the session's ancestors
// (danger-full-access for a top-level session): what no escalation of
// the session may exceed, whoever approves it.
func (s *Session) ancestorsMode() sandbox.Mode {
	s.mu.Lock()
	ceiling := s.ceilingMode
	s.mu.Unlock()
	mode := sandbox.DangerFullAccess
	if ceiling != "" {
		mode = narrowerMode(mode, ceiling)
	}
	if up := s.upSession(0); up != nil {
		mode = narrowerMode(mode, up.Mode())
	}
	return mode
}

// maxAncestors bounds the walks up a session's ancestors (a cycle of
// parent ids in damaged logs must not loop forever).
const maxAncestors = 64

// upSession is the session's live parent: the one that started or loaded
// it, else — for a child loaded alone — its parent by id, once that has
// been loaded into this engine too (so its set_mode binds the child
// already loaded); nil when none is live or hops reached maxAncestors.
func (s *Session) upSession(hops int) *Session {
	if hops >= maxAncestors {
		return nil
	}
	s.mu.Lock()
	up, id := s.up, s.upID
	s.mu.Unlock()
	if up != nil || id == "" || id == s.id {
		return up
	}
	s.eng.mu.Lock()
	p := s.eng.sessions[id]
	s.eng.mu.Unlock()
	return p
}

// descendsFrom reports whether the live session s is a descendant of
// ancestor through its live parents.
func (s *Session) descendsFrom(ancestor *Session) bool {
	cur := s
	for hops := 0; hops < maxAncestors; hops++ {
		up := cur.upSession(hops)
		if up == nil {
			return false
		}
		if up == ancestor {
			return true
		}
		cur = up
	}
	return false
}

// stopWiderJobs stops the background jobs of s and of its live
// descendants that were started under a mode wider than their session's
// effective mode now (after s was narrowed), and the language servers
// they keep (started again under the new mode on their next use).
func (e *Engine) stopWiderJobs(s *Session) {
	e.mu.Lock()
	live := make([]*Session, 0, len(e.sessions))
	for _, d := range e.sessions {
		live = append(live, d)
	}
	e.mu.Unlock()
	for _, d := range live {
		if d != s && !d.descendsFrom(s) {
			continue
		}
		mode := d.Mode()
		if n := d.jobs.stopWiderThan(mode); n > 0 {
			e.log.Info("stopped background jobs started under a wider mode", "session", d.id, "narrowed", s.id, "mode", mode, "jobs", n)
		}
		if n := d.terms.CloseWider(mode); n > 0 {
			e.log.Info("closed terminals opened under a wider mode", "session", d.id, "narrowed", s.id, "mode", mode, "terminals", n)
		}
		// What tools keep (language servers) runs under the mode it was
		// started in: it is stopped, and started again under the new one
		// on its next use.
		if err := d.keep.Reset(); err != nil {
			e.log.Warn("stopping the session's language servers", "session", d.id, "err", err)
		}
	}
}

// logNarrowing appends, to a child's log, the mode and policy its
// ancestors narrowed it to when its own are wider, so that the log (and
// the header the step writes next) states what it runs under.
func (s *Session) logNarrowing(ctx context.Context) error {
	mode, policy := s.Mode(), s.approval()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.eng.now()
	if s.ownModeLocked().Wider(mode) {
		if _, err := s.emitLocked(ctx, now, sessionlog.TypeSandboxMode, sessionlog.SandboxModeData{Mode: string(mode), Source: sourceAncestor}, nil, nil); err != nil {
			return err
		}
	}
	if s.ownApprovalLocked() != policy {
		if _, err := s.emitLocked(ctx, now, sessionlog.TypeApprovalPolicy, sessionlog.ApprovalPolicyData{Policy: policy, Source: sourceAncestor}, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

// storedCeiling is the narrowest mode and approval policy logged by the
// stored ancestors of a child whose parent is parent (for a child loaded
// with no live parent).
func (e *Engine) storedCeiling(ctx context.Context, parent string) (sandbox.Mode, string, error) {
	mode, policy := sandbox.DangerFullAccess, ApprovalOnRequest
	for hops := 0; parent != "" && hops < 64; hops++ {
		l, err := e.cfg.Store.Inspect(ctx, parent)
		if errors.Is(err, sessionlog.ErrNotFound) {
			break // deleted: no ancestor above binds it
		}
		if err != nil {
			return "", "", fmt.Errorf("ancestor %s: %w", parent, err)
		}
		m, p := sandbox.Mode(e.cfg.Mode), e.cfg.Approval
		for _, ev := range l.Log.Events() {
			switch ev.Type {
			case sessionlog.TypeSandboxMode:
				if d, err := sessionlog.DecodeData[sessionlog.SandboxModeData](&ev); err == nil && d.Mode != "" {
					m = sandbox.Mode(d.Mode)
				}
			case sessionlog.TypeApprovalPolicy:
				if d, err := sessionlog.DecodeData[sessionlog.ApprovalPolicyData](&ev); err == nil && d.Policy != "" {
					p = d.Policy
				}
			}
		}
		mode, policy = narrowerMode(mode, m), narrowerPolicy(policy, p)
		c, _ := l.Log.Header().Child()
		parent = c.Parent
	}
	return mode, policy, nil
}
