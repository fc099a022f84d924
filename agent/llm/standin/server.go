package standin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxBody bounds a request body.
const maxBody = 64 << 20

// Server serves a [Script]. It is safe for concurrent use; requests are
// numbered (from 1) in the order they arrive and each takes the next
// response.
type Server struct {
	script *Script
	log    *slog.Logger

	mu       sync.Mutex
	served   int
	requests []json.RawMessage
	srv      *http.Server
	done     chan struct{}
	serveErr error
}

// New returns a server for script. logger receives one line per request
// (nil discards); it never logs request headers.
func New(script *Script, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Server{script: script, log: logger}
}

// Handler returns the HTTP handler, for mounting in another server (for
// example httptest.NewServer).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.serveChat)
	mux.HandleFunc("/chat/completions", s.serveChat)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("standin: no route for %s %s; use POST /v1/chat/completions", r.Method, r.URL.Path))
	})
	return mux
}

// Start listens on addr (for example "127.0.0.1:0") and serves in the
// background until Close is called or ctx is done. It returns the bound
// address (host:port).
func (s *Server) Start(ctx context.Context, addr string) (string, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("standin: listen on %s: %w", addr, err)
	}
	s.mu.Lock()
	if s.srv != nil {
		s.mu.Unlock()
		ln.Close()
		return "", fmt.Errorf("standin: server already started")
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.srv = srv
	s.done = make(chan struct{})
	done := s.done
	s.mu.Unlock()
	go func() {
		err := srv.Serve(ln)
		if !errors.Is(err, http.ErrServerClosed) {
			s.mu.Lock()
			s.serveErr = fmt.Errorf("standin: serve: %w", err)
			s.mu.Unlock()
		}
		close(done)
	}()
	context.AfterFunc(ctx, func() { _ = s.Close() })
	return ln.Addr().String(), nil
}

// Close stops the server, cutting open streams (also hanging ones), and
// waits for it to stop. It is idempotent and returns the error that ended
// serving, if any.
func (s *Server) Close() error {
	s.mu.Lock()
	srv, done := s.srv, s.done
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	_ = srv.Close()
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serveErr
}

// ListenAndServe listens on addr, calls ready with the bound address once
// requests can be served, and serves until ctx is done. It is what the
// "reel standin" command runs.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(addr string)) error {
	bound, err := s.Start(ctx, addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(bound)
	}
	<-ctx.Done()
	return s.Close()
}

// Requests returns the bodies of the requests received so far, in order.
func (s *Server) Requests() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]json.RawMessage, len(s.requests))
	copy(out, s.requests)
	return out
}

// chatRequest is the part of a chat-completions request the server reads.
type chatRequest struct {
	Model         string        `json:"model"`
	Stream        bool          `json:"stream"`
	Messages      []chatMessage `json:"messages"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text returns the message's text: a string content, or the concatenated
// text parts of an array content.
func (m chatMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("standin: %s %s: only POST is served", r.Method, r.URL.Path))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("standin: read request body: %v", err))
		return
	}
	if req, ok := parseChat(body); ok && isTitleRequest(req) {
		s.serveTitle(w, r, req)
		return
	}
	s.mu.Lock()
	s.served++
	n := s.served
	s.requests = append(s.requests, json.RawMessage(body))
	s.mu.Unlock()

	status, msg := s.serveN(w, r, n, body)
	if msg != "" {
		writeError(w, status, msg)
	}
	s.log.Info("standin request", "n", n, "path", r.URL.Path, "status", status)
}

// parseChat reads a chat-completions request body.
func parseChat(body []byte) (chatRequest, bool) {
	var req chatRequest
	return req, json.Unmarshal(body, &req) == nil
}

// isTitleRequest reports whether a request is an agent's session-title
// request: its first message is a system message beginning with
// TitlePrompt.
func isTitleRequest(req chatRequest) bool {
	return len(req.Messages) > 0 && req.Messages[0].Role == "system" && strings.HasPrefix(req.Messages[0].text(), TitlePrompt)
}

// serveTitle answers a title request with the script's title response.
// Title requests are not numbered and not listed by Requests.
func (s *Server) serveTitle(w http.ResponseWriter, r *http.Request, req chatRequest) {
	resp := s.script.titleResponse()
	status := http.StatusOK
	switch {
	case !req.Stream:
		status = http.StatusBadRequest
		writeError(w, status, "standin: title request: only streaming requests are served (set \"stream\": true)")
	case resp.Error != nil:
		status = resp.Error.Status
		writeError(w, status, resp.Error.Message)
	default:
		streamResponse(r.Context(), w, 0, req, resp)
	}
	s.log.Info("standin title request", "path", r.URL.Path, "status", status)
}

// serveN answers request n. It returns the status and, for an error, the
// message still to be written.
func (s *Server) serveN(w http.ResponseWriter, r *http.Request, n int, body []byte) (int, string) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return http.StatusBadRequest, fmt.Sprintf("standin: request %d: body is not a chat-completions request: %v", n, err)
	}
	if n > len(s.script.Responses) {
		return http.StatusInternalServerError, fmt.Sprintf("standin: request %d: script exhausted (it has %d responses)", n, len(s.script.Responses))
	}
	if !req.Stream {
		return http.StatusBadRequest, fmt.Sprintf("standin: request %d: only streaming requests are served (set \"stream\": true)", n)
	}
	resp := withSubagentID(s.script.Responses[n-1], req)
	if msg := checkExpect(resp.Expect, req); msg != "" {
		return http.StatusBadRequest, fmt.Sprintf("standin: request %d: %s", n, msg)
	}
	if resp.Error != nil {
		return resp.Error.Status, resp.Error.Message
	}
	streamResponse(r.Context(), w, n, req, resp)
	return http.StatusOK, ""
}

// SubagentPlaceholder, in a scripted tool call's arguments, is replaced by
// the id of the last "started subagent <id>" result in the request, and
// {{subagentId:N}} by the N-th (from 1): a script can address a
// background subagent whose id is only known when the agent runs
// (send_message, interrupt_agent).
const SubagentPlaceholder = "{{lastSubagentId}}"

var (
	// startedSubagent finds the ids of started background subagents.
	startedSubagent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`started subagent ([0-9A-Za-z_-]+)`) })
	// nthSubagent is the {{subagentId:N}} placeholder.
	nthSubagent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{subagentId:([0-9]+)\}\}`) })
)

// withSubagentID fills the subagent placeholders in resp's tool calls; one
// naming no started subagent of the request stays as is.
func withSubagentID(resp Response, req chatRequest) Response {
	var ids []string
	for _, m := range req.Messages {
		for _, sm := range startedSubagent().FindAllStringSubmatch(string(m.Content), -1) {
			ids = append(ids, sm[1])
		}
	}
	if len(ids) == 0 || len(resp.ToolCalls) == 0 {
		return resp
	}
	calls := make([]ToolCall, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		c.Arguments = strings.ReplaceAll(c.Arguments, SubagentPlaceholder, ids[len(ids)-1])
		c.Arguments = nthSubagent().ReplaceAllStringFunc(c.Arguments, func(p string) string {
			n, err := strconv.Atoi(nthSubagent().FindStringSubmatch(p)[1])
			if err != nil || n < 1 || n > len(ids) {
				return p
			}
			return ids[n-1]
		})
		calls[i] = c
	}
	resp.ToolCalls = calls
	return resp
}

func checkExpect(e *Expect, req chatRequest) string {
	if e == nil {
		return ""
	}
	if e.Model != "" && req.Model != e.Model {
		return fmt.Sprintf("expected model %q, got %q", e.Model, req.Model)
	}
	if e.LastUserContains != "" {
		last := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				last = m.text()
			}
		}
		if !strings.Contains(last, e.LastUserContains) {
			return fmt.Sprintf("expected the last user message to contain %q; it is %q", e.LastUserContains, last)
		}
	}
	if e.LastMessageContains != "" {
		last := ""
		if len(req.Messages) > 0 {
			last = req.Messages[len(req.Messages)-1].text()
		}
		if !strings.Contains(last, e.LastMessageContains) {
			return fmt.Sprintf("expected the last message to contain %q; it is %q", e.LastMessageContains, last)
		}
	}
	return ""
}

func writeError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": "standin_error", "param": nil, "code": nil,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
