package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"sync"
)

// lockedWriter serializes whole-frame writes from the SDK and from the
// frame filter onto stdout, and tells the in-flight tracker which requests
// were answered.
type lockedWriter struct {
	mu       sync.Mutex
	w        io.Writer
	inflight *inflight
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
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
	n, err := l.w.Write(p)
	if answered != "" {
		l.inflight.done(answered)
	}
	return n, err
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
	busy    map[string]bool   // sessions with an unanswered prompt
}

func newInflight() *inflight {
	f := &inflight{pending: map[string]int{}, prompts: map[string]string{}, busy: map[string]bool{}}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// startPrompt records prompt request id on session. It reports false, and
// records nothing, when the session already has an unanswered prompt.
func (f *inflight) startPrompt(id, session string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy[session] {
		return false
	}
	f.busy[session] = true
	f.prompts[id] = session
	return true
}

func (f *inflight) start(id string) {
	f.mu.Lock()
	f.pending[id]++
	f.mu.Unlock()
}

// answering marks the session of prompt id, about to be answered, as no
// longer busy.
func (f *inflight) answering(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.prompts[id]; ok {
		delete(f.prompts, id)
		delete(f.busy, s)
	}
}

func (f *inflight) done(id string) {
	f.mu.Lock()
	if f.pending[id] > 0 {
		f.pending[id]--
		if f.pending[id] == 0 {
			delete(f.pending, id)
		}
	}
	f.cond.Broadcast()
	f.mu.Unlock()
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
		line, tooLarge, err := f.readLine()
		if err != nil {
			f.err = err
		}
		if tooLarge {
			f.reject(nil, -32600, "Invalid request: frame larger than 8 MiB")
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if code, msg := check(line); code != 0 {
			f.reject(line, code, msg)
			continue
		}
		if id, method, ok := requestID(line); ok {
			// A second prompt on a session must not reach the SDK: it
			// cancels the running prompt of that session before the
			// agent could refuse it.
			if sid := promptSession(line, method); sid != "" && !f.inflight.startPrompt(id, sid) {
				f.reject(line, -32600, "Invalid request: session "+sid+" is busy with another prompt; cancel it or wait")
				continue
			}
			f.inflight.start(id)
			switch method {
			case "initialize", "session/new", "session/load":
				f.barrier = id
			}
		}
		f.buf = append(line, '\n')
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

// readLine reads one line; an over-long line is consumed but not kept,
// and reported with tooLarge.
func (f *frameFilter) readLine() (line []byte, tooLarge bool, err error) {
	for {
		chunk, err := f.in.ReadSlice('\n')
		if !tooLarge {
			if len(line)+len(chunk) > maxFrame {
				tooLarge, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLarge, err
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

func (f *frameFilter) reject(line []byte, code int, msg string) {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(line, &probe)
	id := probe.ID
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
