package acpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
)

// ErrStalled reports a client that stopped reading: a frame could not be
// written to it within the write timeout. The connection is then treated as
// dead: every later write fails at once with this error and Serve cancels
// the running work and returns it.
var ErrStalled = errors.New("agent: the client stopped reading stdout")

// DefaultWriteTimeout is how long one frame may take to be written before
// the client is treated as gone (Config.WriteTimeout 0).
const DefaultWriteTimeout = 30 * time.Second

// shutdownGrace bounds a frame's write once shutdown began (SIGTERM): a
// reading client takes microseconds, so only a stalled one hits it.
const shutdownGrace = time.Second

// lockedWriter serializes whole-frame writes from the SDK and from the
// frame filter onto stdout, and tells the in-flight tracker which requests
// were answered. A frame is written by a helper goroutine while Write
// waits at most the write timeout (or the shutdown grace once hurry is
// closed); a write that does not finish in time kills the writer: the
// stuck goroutine is abandoned (it holds its own copy of the frame) and
// every later Write fails with ErrStalled.
type lockedWriter struct {
	w        io.Writer
	inflight *inflight
	timeout  time.Duration
	// turn is a one-slot semaphore: one frame at a time, in order.
	turn chan struct{}
	// dead is closed once the writer is killed; err says why.
	dead     chan struct{}
	hurry    chan struct{}
	once     sync.Once
	hurryOne sync.Once
	mu       sync.Mutex
	err      error
	// nudged is closed by nudge while a frame is being written (nil
	// between frames).
	nudged    chan struct{}
	nudgedOne *sync.Once
}

func newLockedWriter(w io.Writer, fl *inflight, timeout time.Duration) *lockedWriter {
	if timeout <= 0 {
		timeout = DefaultWriteTimeout
	}
	return &lockedWriter{w: w, inflight: fl, timeout: timeout,
		turn: make(chan struct{}, 1), dead: make(chan struct{}), hurry: make(chan struct{})}
}

// kill makes every pending and later write fail with err (the first cause
// wins).
func (l *lockedWriter) kill(err error) {
	l.once.Do(func() {
		l.mu.Lock()
		l.err = err
		l.mu.Unlock()
		close(l.dead)
	})
}

// cause is why the writer died (nil while it lives).
func (l *lockedWriter) cause() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// hasten bounds the current and every later write by shutdownGrace.
func (l *lockedWriter) hasten() { l.hurryOne.Do(func() { close(l.hurry) }) }

// nudge bounds the frame being written now, if any, by shutdownGrace: the
// client asked for a cancel while reel's output to it is stuck, so the
// cancel takes effect within the grace instead of the write timeout.
// Later frames keep the full timeout.
func (l *lockedWriter) nudge() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nudged != nil {
		ch := l.nudged
		l.nudgedOne.Do(func() { close(ch) })
	}
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	select {
	case l.turn <- struct{}{}:
	case <-l.dead:
		return 0, l.cause()
	}
	defer func() { <-l.turn }()
	select {
	case <-l.dead:
		return 0, l.cause()
	default:
	}
	answered := ""
	if l.inflight != nil {
		var f struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(p, &f) == nil && f.Method == "" && len(f.ID) > 0 {
			answered = idKey(f.ID)
			// The client may send its next prompt as soon as it reads
			// this answer: the session stops being busy first.
			l.inflight.answering(answered)
		}
	}
	n, err := l.write(p)
	if answered != "" {
		if err == nil {
			l.writeTrailing(answered)
		}
		l.inflight.done(answered)
	}
	return n, err
}

// writeNotifications writes p, whole notification frames (no answer
// among them to track), as one write.
func (l *lockedWriter) writeNotifications(p []byte) error {
	select {
	case l.turn <- struct{}{}:
	case <-l.dead:
		return l.cause()
	}
	defer func() { <-l.turn }()
	select {
	case <-l.dead:
		return l.cause()
	default:
	}
	_, err := l.write(p)
	return err
}

type writeResult struct {
	n   int
	err error
}

// write writes one frame, waiting at most the timeout (the shutdown grace
// once shutdown began, if shorter).
func (l *lockedWriter) write(p []byte) (int, error) {
	frame := append([]byte(nil), p...) // the goroutine may outlive this call
	done := make(chan writeResult, 1)
	go func() {
		n, err := l.w.Write(frame)
		done <- writeResult{n, err}
	}()
	nudged := make(chan struct{})
	l.mu.Lock()
	l.nudged, l.nudgedOne = nudged, &sync.Once{}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.nudged, l.nudgedOne = nil, nil
		l.mu.Unlock()
	}()
	limit, what := l.timeout, ""
	hurry := l.hurry
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case r := <-done:
			return r.n, r.err
		case <-hurry:
			hurry = nil
			if shutdownGrace < limit {
				limit, what = shutdownGrace, " of shutdown"
				timer.Reset(limit)
			}
		case <-nudged:
			nudged = nil
			if shutdownGrace < limit {
				limit, what = shutdownGrace, " of session/cancel"
				timer.Reset(limit)
			}
		case <-timer.C:
			l.kill(fmt.Errorf("%w: a %d-byte frame could not be written within %s%s", ErrStalled, len(p), limit, what))
			return 0, l.cause()
		case <-l.dead:
			return 0, l.cause()
		}
	}
}

// inflight counts client requests not yet answered, so that the end of
// stdin (the client is done sending) lets running requests finish before
// the connection shuts down and cancels them. It also knows which sessions
// have a prompt not yet answered.
type inflight struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending map[string]int
	prompts map[string]string // request id → session of an unanswered prompt
	// queues holds each session's unanswered prompts in arrival order
	// (queue.go).
	queues map[string]*sessionPrompts
	// trailing holds, per session-establishing request, the frames
	// written right after its answer (after.go).
	trailing     map[string][][]byte
	establishing string
	// watched holds, per prompt request id, the channels closed once its
	// answer was written (agent.Client.Answered).
	watched map[string][]chan struct{}
}

func newInflight() *inflight {
	f := &inflight{pending: map[string]int{}, prompts: map[string]string{}, queues: map[string]*sessionPrompts{}}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *inflight) start(id string) {
	f.mu.Lock()
	f.pending[id]++
	f.mu.Unlock()
}

// answering takes prompt id, about to be answered, off its session's
// queue: the next prompt there may run.
func (f *inflight) answering(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.prompts[id]; ok {
		delete(f.prompts, id)
		f.leaveLocked(id, s)
	}
}

func (f *inflight) done(id string) {
	f.mu.Lock()
	for _, ch := range f.watched[id] {
		close(ch)
	}
	delete(f.watched, id)
	if f.pending[id] > 0 {
		f.pending[id]--
		if f.pending[id] == 0 {
			delete(f.pending, id)
		}
	}
	f.cond.Broadcast()
	f.mu.Unlock()
}

// watchAnswer returns a channel closed once the answer to request id
// was written (or its write failed).
func (f *inflight) watchAnswer(id string) <-chan struct{} {
	ch := make(chan struct{})
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.watched == nil {
		f.watched = map[string][]chan struct{}{}
	}
	f.watched[id] = append(f.watched[id], ch)
	return ch
}

// wait blocks until request id was answered.
func (f *inflight) wait(id string) {
	f.mu.Lock()
	for f.pending[id] > 0 {
		f.cond.Wait()
	}
	f.mu.Unlock()
}

// drain waits until every request was answered.
func (f *inflight) drain() {
	f.mu.Lock()
	for len(f.pending) > 0 {
		f.cond.Wait()
	}
	f.mu.Unlock()
}

// frameFilter passes well-formed JSON-RPC frames (one JSON object per line)
// through to the SDK and answers malformed ones itself, so a bad frame gets a
// JSON-RPC error instead of silence and the connection keeps serving.
type frameFilter struct {
	in       *bufio.Reader
	out      io.Writer
	log      *slog.Logger
	inflight *inflight
	buf      []byte
	err      error
	// barrier is the id of a session-establishing request (initialize,
	// session/new, session/load) that must be answered before the next
	// frame is read, so a scripted client may pipeline a prompt after it.
	barrier string
	// ready is closed once the connection is set up; nothing is read
	// before.
	ready chan struct{}
	// methods answers the requests acp-go-sdk has no method for
	// (extra.go); nil: all go to the SDK.
	methods map[string]extraMethod
	// calls takes the responses to the adapter's own requests (calls.go).
	calls *calls
}

func newFrameFilter(in io.Reader, out io.Writer, log *slog.Logger, fl *inflight) *frameFilter {
	return &frameFilter{in: bufio.NewReaderSize(in, 64<<10), out: out, log: log, inflight: fl, ready: make(chan struct{})}
}

// maxFrame bounds one frame (the SDK's own scanner limit is 10 MiB).
const maxFrame = 8 << 20

func (f *frameFilter) Read(p []byte) (int, error) {
	<-f.ready
	for len(f.buf) == 0 {
		if f.barrier != "" {
			f.inflight.wait(f.barrier)
			f.barrier = ""
		}
		if f.err != nil {
			// The client closed its side: let answered-to-be requests finish
			// before the SDK sees the end of input.
			f.inflight.drain()
			return 0, f.err
		}
		line, tooLarge, bigID, err := f.readLine()
		if err != nil {
			f.err = err
		}
		if tooLarge {
			f.reject(bigID, nil, -32600, "Invalid request: frame larger than 8 MiB")
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if code, msg := check(line); code != 0 {
			f.reject(rejectedID(line, code), line, code, msg)
			continue
		}
		if f.calls != nil && f.calls.deliver(line) {
			continue
		}
		if isCancel(line) {
			// A cancel while a frame to the client is stuck: the client
			// is not reading, so the write gets only the grace.
			if lw, ok := f.out.(*lockedWriter); ok {
				lw.nudge()
			}
			// The prompts queued before it are cancelled now, in frame
			// order (queue.go).
			f.inflight.cancelQueued(cancelSession(line))
		}
		if id, method, ok := requestID(line); ok {
			if method == queuedMethod {
				f.reject(rejectedID(line, -32601), line, -32601, "Method not found: "+queuedMethod+" is internal to reel")
				continue
			}
			// A prompt behind another on its session must not reach the
			// SDK as session/prompt: it would cancel the running one. It
			// is queued (queue.go).
			if sid := promptSession(line, method); sid != "" {
				admitted, code, msg := f.inflight.admit(line, id, sid)
				if code != 0 {
					f.reject(rejectedID(line, code), line, code, msg)
					continue
				}
				line = admitted
			}
			f.inflight.start(id)
			switch method {
			case "initialize", "session/new", "session/load", "session/resume":
				f.barrier = id
				f.inflight.establish(id)
			}
			if h, ok := f.methods[method]; ok {
				go f.answer(line, h)
				continue
			}
		}
		f.buf = append(line, '\n')
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

// readLine reads one line; an over-long line is consumed but not kept,
// and reported with tooLarge and its top-level id (nil when none can be
// read), which is scanned as the line streams by.
func (f *frameFilter) readLine() (line []byte, tooLarge bool, id json.RawMessage, err error) {
	var scan *idScanner
	for {
		chunk, err := f.in.ReadSlice('\n')
		switch {
		case tooLarge:
			scan.feed(chunk)
		case len(line)+len(chunk) > maxFrame:
			scan = &idScanner{}
			scan.feed(line)
			scan.feed(chunk)
			tooLarge, line = true, nil
		default:
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLarge {
			id = scan.id
		}
		return bytes.TrimRight(line, "\r\n"), tooLarge, id, err
	}
}

// check classifies a frame: 0 when the SDK may have it, else a JSON-RPC
// error code and message.
func check(line []byte) (int, string) {
	if !json.Valid(line) {
		return -32700, "Parse error"
	}
	var probe struct {
		JSONRPC string           `json:"jsonrpc"`
		ID      *json.RawMessage `json:"id"`
		Method  *string          `json:"method"`
		Result  *json.RawMessage `json:"result"`
		Error   *json.RawMessage `json:"error"`
	}
	if t := bytes.TrimSpace(line); t[0] != '{' || json.Unmarshal(line, &probe) != nil {
		return -32600, "Invalid request: a frame must be one JSON-RPC object"
	}
	if probe.JSONRPC != "2.0" {
		return -32600, `Invalid request: "jsonrpc" must be "2.0"`
	}
	if probe.Method == nil && probe.Result == nil && probe.Error == nil {
		return -32600, "Invalid request: no method"
	}
	if probe.ID != nil {
		if id := *probe.ID; len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') && string(id) != "null" {
			return -32600, "Invalid request: \"id\" must be a string, a number or null"
		}
	}
	return 0, ""
}

// rejectedID is the id to answer a frame refused with code: the frame's own
// id when it can be read, else nil (answered with null). A parse error
// keeps null (JSON-RPC: the id of a frame that is not JSON is unknown),
// except for a frame refused only for nesting deeper than encoding/json
// accepts, whose id the scanner reads.
func rejectedID(line []byte, code int) json.RawMessage {
	if code == -32700 {
		var s idScanner
		s.feed(line)
		if s.maxDepth > maxJSONDepth {
			return s.id
		}
		return nil
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(line, &probe)
	return probe.ID
}

// reject answers a refused frame with a JSON-RPC error on id (null unless
// id is a string or a number).
func (f *frameFilter) reject(id json.RawMessage, line []byte, code int, msg string) {
	if len(id) == 0 || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') {
		id = json.RawMessage("null")
	}
	preview := line
	if len(preview) > 200 {
		preview = preview[:200]
	}
	f.log.Warn("rejected malformed frame", "code", code, "frame", string(preview))
	resp, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	_, _ = f.out.Write(append(resp, '\n'))
}

// requestID returns the id and method of a request frame (one with a
// method and an id).
func requestID(line []byte) (string, string, bool) {
	var f struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &f) != nil || f.Method == "" || len(f.ID) == 0 || string(f.ID) == "null" {
		return "", "", false
	}
	return idKey(f.ID), f.Method, true
}

// isCancel reports whether a frame is a session/cancel notification.
func isCancel(line []byte) bool {
	if !bytes.Contains(line, []byte("session/cancel")) {
		return false
	}
	var f struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(line, &f) == nil && f.Method == "session/cancel" && len(f.ID) == 0
}

// idKey is the key of a request id in the in-flight tracker. The SDK
// re-encodes the id in its answer (escaping <, > and & in strings), so a
// string id is keyed by its value, not by its bytes.
func idKey(id json.RawMessage) string {
	var s string
	if len(id) > 0 && id[0] == '"' && json.Unmarshal(id, &s) == nil {
		return strconv.Quote(s)
	}
	return string(id)
}

// promptSession returns the session id of a session/prompt request frame.
func promptSession(line []byte, method string) string {
	if method != "session/prompt" {
		return ""
	}
	var f struct {
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	_ = json.Unmarshal(line, &f)
	return f.Params.SessionID
}

// maxJSONDepth is encoding/json's nesting limit: a deeper frame is not
// valid to it, though it may be well-formed.
const maxJSONDepth = 10000

// idScanner finds the top-level "id" member of a JSON object frame without
// decoding it: it is fed the frame's bytes in pieces (an over-long frame is
// never held whole), keeps constant state (the nesting depth is a counter),
// and does work linear in the bytes fed. The last "id" member wins, as in
// encoding/json. Only a string, a number or null is an id; anything else,
// or a frame that is not an object, leaves none.
type idScanner struct {
	state    int
	depth    int  // nesting inside a skipped member value
	maxDepth int  // deepest nesting seen, the top-level object being 1
	inStr    bool // inside a string of a skipped value
	esc      bool // after a backslash inside a string
	key      []byte
	keyLong  bool
	val      []byte
	valLong  bool
	isID     bool
	id       json.RawMessage
}

const (
	scanStart = iota
	scanKeyOrEnd
	scanKey
	scanColon
	scanValue
	scanIDString
	scanIDScalar
	scanSkipString
	scanSkipNested
	scanSkipScalar
	scanAfterValue
	scanDone
)

// maxIDBytes bounds a key or an id value the scanner keeps.
const maxIDBytes = 4096

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// feed scans the next bytes of the frame.
func (s *idScanner) feed(b []byte) {
	for i := 0; i < len(b) && s.state != scanDone; i++ {
		c := b[i]
		switch s.state {
		case scanStart:
			switch {
			case isJSONSpace(c):
			case c == '{':
				s.state, s.maxDepth = scanKeyOrEnd, 1
			default:
				s.state = scanDone
			}
		case scanKeyOrEnd:
			switch {
			case isJSONSpace(c):
			case c == '"':
				s.state, s.key, s.keyLong = scanKey, append(s.key[:0], '"'), false
			default: // '}' ends the object; anything else is malformed
				s.state = scanDone
			}
		case scanKey:
			s.key, s.keyLong = keep(s.key, s.keyLong, c)
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				var k string
				s.isID = !s.keyLong && json.Unmarshal(s.key, &k) == nil && k == "id"
				s.state = scanColon
			}
		case scanColon:
			switch {
			case isJSONSpace(c):
			case c == ':':
				s.state = scanValue
			default:
				s.state = scanDone
			}
		case scanValue:
			if isJSONSpace(c) {
				continue
			}
			s.val, s.valLong = append(s.val[:0], c), false
			switch {
			case s.isID && c == '"':
				s.state = scanIDString
			case s.isID && (c == '-' || c == 'n' || (c >= '0' && c <= '9')):
				s.state = scanIDScalar
			case c == '"':
				if s.isID {
					s.id = nil // not an id a client can match
				}
				s.state = scanSkipString
			case c == '{' || c == '[':
				if s.isID {
					s.id = nil
				}
				s.state, s.depth = scanSkipNested, 1
				s.maxDepth = max(s.maxDepth, 2)
			default:
				if s.isID {
					s.id = nil
				}
				s.state = scanSkipScalar
			}
		case scanIDString:
			s.val, s.valLong = keep(s.val, s.valLong, c)
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.setID()
				s.state = scanAfterValue
			}
		case scanIDScalar, scanSkipScalar:
			if isJSONSpace(c) || c == ',' || c == '}' {
				if s.state == scanIDScalar {
					s.setID()
				}
				s.state = scanAfterValue
				i-- // the delimiter belongs to what follows
				continue
			}
			if s.state == scanIDScalar {
				s.val, s.valLong = keep(s.val, s.valLong, c)
			}
		case scanSkipString:
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.state = scanAfterValue
			}
		case scanSkipNested:
			switch {
			case s.inStr && s.esc:
				s.esc = false
			case s.inStr && c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = !s.inStr
			case s.inStr:
			case c == '{' || c == '[':
				s.depth++
				s.maxDepth = max(s.maxDepth, s.depth+1)
			case c == '}' || c == ']':
				s.depth--
				if s.depth == 0 {
					s.state = scanAfterValue
				}
			}
		case scanAfterValue:
			switch {
			case isJSONSpace(c):
			case c == ',':
				s.state = scanKeyOrEnd
			default:
				s.state = scanDone
			}
		}
	}
}

// keep appends c to buf unless buf is already at its bound.
func keep(buf []byte, long bool, c byte) ([]byte, bool) {
	if long || len(buf) >= maxIDBytes {
		return buf, true
	}
	return append(buf, c), false
}

// setID records the scanned id value when it is a valid id token.
func (s *idScanner) setID() {
	s.id = nil
	if s.valLong || !json.Valid(s.val) {
		return
	}
	if v := s.val; v[0] == '"' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9') {
		s.id = append(json.RawMessage(nil), v...)
	}
}

// Title implements agent.Updates: the session's title as ACP's
// session_info_update, with the time it was accepted. A late title (one
// made after its turn ended) is sent after the answer to that turn's
// prompt, so the client sees the turn end first, whatever the timing.
func (u updates) Title(ctx context.Context, t agent.Title) {
	if t.Late && u.prompt != "" && u.srv.inflight != nil {
		u.srv.inflight.waitAnswered(ctx, u.prompt)
	}
	u.send(ctx, titleUpdate(t))
}

// promptOf is the id of session's running prompt ("" when none).
func (f *inflight) promptOf(session string) string { return f.headOf(session) }

// waitAnswered blocks until request id was answered or ctx is done.
func (f *inflight) waitAnswered(ctx context.Context, id string) {
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.cond.Broadcast()
		f.mu.Unlock()
	})
	defer stop()
	f.mu.Lock()
	for f.pending[id] > 0 && ctx.Err() == nil {
		f.cond.Wait()
	}
	f.mu.Unlock()
}

// titleUpdate is the session_info_update of a title.
func titleUpdate(t agent.Title) acp.SessionUpdate {
	at := t.At.UTC().Format(time.RFC3339)
	return acp.SessionUpdate{SessionInfoUpdate: &acp.SessionSessionInfoUpdate{Title: acp.Ptr(t.Text), UpdatedAt: &at}}
}
