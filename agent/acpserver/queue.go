package acpserver

import (
	"context"
	"encoding/json"
	"fmt"

	acp "github.com/coder/acp-go-sdk"
)

// Prompt queueing. A session/prompt that arrives while its session has an
// unanswered prompt waits behind it instead of being refused, as the
// leading ACP agents do: prompts run one turn at a time in the order their
// frames were read, and each is answered when its own turn ends.
//
// The SDK cancels a session's running prompt when a second session/prompt
// for it arrives, so a queued prompt must not reach the SDK as one: the
// frame filter, which reads frames in order, records every prompt in its
// session's queue and renames a prompt that has to wait to the internal
// method queuedMethod (its params wrapped with its request id). The SDK
// hands it to HandleExtensionMethod, which waits until the prompt is at
// the head of its queue (everything read before it was answered) and runs
// it. A client can never send queuedMethod itself: the filter refuses it.
//
// session/cancel cancels the running turn and every prompt queued behind
// it on that session, as claude-agent-acp does: each queued prompt is
// answered with stopReason "cancelled" without running (nothing of it
// reaches the log), in its place in the queue (after the running prompt's
// answer), so answers always come in the order the prompts were sent. The cancel is applied when its frame is read, so it
// reaches exactly the prompts read before it; a prompt read after it is
// queued anew. At most maxQueued prompts wait behind the running one; one
// more is refused with invalid request (-32600) naming the bound.

// queuedMethod is the internal method a waiting session/prompt is renamed
// to between the frame filter and the SDK.
const queuedMethod = "_reel/queued_prompt"

// maxQueued bounds the prompts waiting behind a session's running prompt.
const maxQueued = 8

// queuedParams are the params of a queuedMethod frame.
type queuedParams struct {
	// RequestID is the prompt's request id (its in-flight key).
	RequestID string `json:"requestId"`
	// Request is the session/prompt's params as the client sent them.
	Request json.RawMessage `json:"request"`
}

// sessionPrompts is one session's unanswered prompts, in arrival order:
// order[0] runs (or is about to).
type sessionPrompts struct {
	order []*pendingPrompt
	// moved is closed (then replaced) when order changes or a prompt in
	// it is cancelled.
	moved chan struct{}
}

// pendingPrompt is one unanswered prompt.
type pendingPrompt struct {
	id string
	// queued marks a prompt that arrived behind another (renamed to
	// queuedMethod); the first of a session goes to the SDK as is.
	queued bool
	// cancelled is set by a session/cancel read after the prompt.
	cancelled bool
	// stop cancels the turn of a queued prompt while it runs.
	stop context.CancelFunc
}

// admit records prompt request id (key) of session sid, read in line. It
// returns the frame to pass to the SDK (line, or the renamed frame of a
// prompt that has to wait), or a JSON-RPC error code and message for a
// prompt refused because the session's queue is full.
func (f *inflight) admit(line []byte, id, sid string) ([]byte, int, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.queues == nil {
		f.queues = map[string]*sessionPrompts{}
	}
	q := f.queues[sid]
	if q == nil {
		q = &sessionPrompts{moved: make(chan struct{})}
		f.queues[sid] = q
	}
	if len(q.order) == 0 {
		q.order = append(q.order, &pendingPrompt{id: id})
		f.prompts[id] = sid
		return line, 0, ""
	}
	if waiting := len(q.order) - 1; waiting >= maxQueued {
		return nil, -32600, fmt.Sprintf("Invalid request: session %s already has %d prompts queued behind the running one, the most reel keeps; wait for a turn to end or send session/cancel", sid, waiting)
	}
	renamed, err := renameQueued(line, id)
	if err != nil {
		return nil, -32600, "Invalid request: " + err.Error()
	}
	q.order = append(q.order, &pendingPrompt{id: id, queued: true})
	f.prompts[id] = sid
	return renamed, 0, ""
}

// renameQueued rewrites a session/prompt frame as a queuedMethod request
// with the same id, its params wrapped with the request id.
func renameQueued(line []byte, id string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("session/prompt frame: %w", err)
	}
	params, err := json.Marshal(queuedParams{RequestID: id, Request: m["params"]})
	if err != nil {
		return nil, fmt.Errorf("session/prompt params: %w", err)
	}
	method, _ := json.Marshal(queuedMethod)
	m["method"], m["params"] = method, params
	return json.Marshal(m)
}

// leaveLocked removes answered request id from its session's queue (with
// f.mu held).
func (f *inflight) leaveLocked(id, sid string) {
	q := f.queues[sid]
	if q == nil {
		return
	}
	for i, p := range q.order {
		if p.id == id {
			q.order = append(q.order[:i], q.order[i+1:]...)
			break
		}
	}
	if len(q.order) == 0 {
		delete(f.queues, sid)
	}
	close(q.moved)
	q.moved = make(chan struct{})
}

// cancelQueued applies a session/cancel of session sid read now: every
// queued prompt of the session is cancelled, a running one's turn too.
// The first prompt of a session is the SDK's to cancel.
func (f *inflight) cancelQueued(sid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.queues[sid]
	if q == nil {
		return
	}
	for _, p := range q.order {
		if !p.queued || p.cancelled {
			continue
		}
		p.cancelled = true
		if p.stop != nil {
			p.stop()
		}
	}
	close(q.moved)
	q.moved = make(chan struct{})
}

// headOf is the request id of the session's running prompt ("" when none).
func (f *inflight) headOf(sid string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if q := f.queues[sid]; q != nil && len(q.order) > 0 {
		return q.order[0].id
	}
	return ""
}

// waitTurn waits until queued prompt id of session sid is at the head of
// its queue (every prompt read before it was answered), then records stop
// as its turn's cancel. It reports false when the prompt was cancelled
// (it is then answered in its place in the queue, after the prompts
// before it, so answers keep the order prompts were sent in) or ctx
// ended.
func (f *inflight) waitTurn(ctx context.Context, sid, id string, stop context.CancelFunc) bool {
	for {
		f.mu.Lock()
		q := f.queues[sid]
		var me *pendingPrompt
		if q != nil {
			for _, p := range q.order {
				if p.id == id {
					me = p
					break
				}
			}
		}
		switch {
		case me == nil:
			f.mu.Unlock()
			return false
		case q.order[0] == me:
			if me.cancelled {
				f.mu.Unlock()
				return false
			}
			me.stop = stop
			f.mu.Unlock()
			return true
		}
		moved := q.moved
		f.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
			return false
		}
	}
}

// queuedPrompt runs a prompt that waited behind another on its session:
// once every prompt read before it was answered it runs as session/prompt
// does; cancelled before its turn began, it answers "cancelled".
func (srv *Server) queuedPrompt(ctx context.Context, raw json.RawMessage) (acp.PromptResponse, error) {
	var qp queuedParams
	if err := json.Unmarshal(raw, &qp); err != nil {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	var p acp.PromptRequest
	if err := json.Unmarshal(qp.Request, &p); err != nil {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := p.Validate(); err != nil {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if !srv.inflight.waitTurn(ctx, string(p.SessionId), qp.RequestID, stop) {
		srv.log.Debug("a queued prompt was cancelled before its turn", "session", p.SessionId)
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	return srv.Prompt(ctx, p)
}

// cancelSession is the session id of a session/cancel frame ("" when it
// has none).
func cancelSession(line []byte) string {
	var f struct {
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	_ = json.Unmarshal(line, &f)
	return f.Params.SessionID
}
