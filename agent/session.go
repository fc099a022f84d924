package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// session is one live ACP session: its write-through log, its model and the
// state of its loop instance.
type session struct {
	id       string
	index    int
	cwd      string
	provider llm.Provider

	mu  sync.Mutex // guards log appends and the fields below
	log *sessionlog.Session
	// busy is set while a prompt runs.
	busy bool
	// firstOfInstance is true until this process's first step of the
	// session has written its header (initial or resume).
	firstOfInstance bool
	// newSeries is set when the next step begins a new message series.
	newSeries bool
	closed    bool
	// curMode and curApproval track the last sandbox/mode and
	// approval/policy events ("" until one is logged).
	curMode, curApproval string

	// jobs are the session's background processes.
	jobs jobs
	// spill caps the bytes the session's tool output may spill to disk.
	spill *tools.SpillBudget
}

// emit appends one event built from typ, data and surface fields, stamping
// seq and time. It is the only way the agent writes to a log.
func (s *session) emit(ctx context.Context, now int64, typ string, data []byte, op *sessionlog.SurfaceOp, sources []int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emitLocked(ctx, now, typ, data, op, sources)
}

func (s *session) emitLocked(ctx context.Context, now int64, typ string, data []byte, op *sessionlog.SurfaceOp, sources []int) (int, error) {
	if s.closed {
		return 0, fmt.Errorf("session %s is closed", s.id)
	}
	seq := s.log.Log().Len()
	e := sessionlog.Event{Type: typ, Seq: seq, Time: now, Data: data, SurfaceOp: op, SourceEventSeqs: sources}
	if err := s.log.Append(ctx, e); err != nil {
		return 0, fmt.Errorf("session %s: append %s: %w", s.id, typ, err)
	}
	s.track(&e)
	return seq, nil
}

// checkpoint makes the log durable.
func (s *session) checkpoint(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.log.Checkpoint(ctx); err != nil {
		return fmt.Errorf("session %s: checkpoint: %w", s.id, err)
	}
	return nil
}

// track keeps the effective mode and approval policy current as events
// are appended (and, through catchUp, for a loaded log).
func (s *session) track(e *sessionlog.Event) {
	switch e.Type {
	case sessionlog.TypeSandboxMode:
		if d, err := sessionlog.DecodeData[sessionlog.SandboxModeData](e); err == nil && d.Mode != "" {
			s.curMode = d.Mode
		}
	case sessionlog.TypeApprovalPolicy:
		if d, err := sessionlog.DecodeData[sessionlog.ApprovalPolicyData](e); err == nil && d.Policy != "" {
			s.curApproval = d.Policy
		}
	}
}

// catchUp reads the mode and policy of a loaded log.
func (s *session) catchUp() {
	evs := s.log.Log().Events()
	for i := range evs {
		s.track(&evs[i])
	}
}

// mode returns the effective sandbox mode: the last sandbox/mode event, else def.
func (s *session) mode(def string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.curMode != "" {
		return s.curMode
	}
	return def
}

// approval returns the effective approval policy.
func (s *session) approval(def string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.curApproval != "" {
		return s.curApproval
	}
	return def
}

// lastTurn is the highest turn number in the log.
func (s *session) lastTurn() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	evs := s.log.Log().Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == sessionlog.TypeTurnStart {
			d, _ := sessionlog.DecodeData[sessionlog.TurnData](&evs[i])
			return d.Turn
		}
	}
	return 0
}

// jsonObject builds a compact JSON object from ordered key/value pairs; a
// value is raw JSON ([]byte / json.RawMessage), a string, an int or a bool.
func jsonObject(kv ...any) []byte {
	b := []byte{'{'}
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = sessionlog.AppendString(b, kv[i].(string))
		b = append(b, ':')
		switch v := kv[i+1].(type) {
		case json.RawMessage:
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		case string:
			b = sessionlog.AppendString(b, v)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case bool:
			b = strconv.AppendBool(b, v)
		default:
			raw, _ := json.Marshal(v)
			b = append(b, raw...)
		}
	}
	return append(b, '}')
}

// jsonArray joins raw JSON values into an array.
func jsonArray(items [][]byte) []byte {
	b := []byte{'['}
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, ']')
}
