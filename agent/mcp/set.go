package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reel-agent/reel/agent/tools"
)

// maxListPages bounds the pages of one tools/list.
const maxListPages = 64

// exitWait is how long a stdio server whose handshake failed is given
// to exit by itself, so the failure can say how it ended.
const exitWait = 250 * time.Millisecond

// closeWait bounds how long Close waits for one connection to finish
// closing after its process is gone (HTTP: the session's DELETE, which the
// SDK bounds to 5 s itself).
const closeWait = 10 * time.Second

// Set is the connected MCP servers of one session and their tools. It is
// safe for concurrent use; its tools may be run concurrently with each
// other and with Close.
type Set struct {
	servers []*server
	tools   []*Tool
	byName  map[string]*Tool
	renames []Rename
	skipped []Skipped

	closeOnce sync.Once
}

// ServerInfo describes one connected server.
type ServerInfo struct {
	// Name is the configured name.
	Name string
	// Transport is how it is reached.
	Transport Transport
	// Implementation and Version are what the server calls itself in
	// initialize (on one line, at most 256 bytes each).
	Implementation, Version string
	// ProtocolVersion is the negotiated MCP version.
	ProtocolVersion string
	// Instructions are the server's instructions for the model, cut to
	// MaxInstructionsBytes; the engine may add them to the system prompt.
	Instructions string
	// Tools are the reel names of its tools, in order.
	Tools []string
	// PID is the process id of a stdio server, 0 otherwise.
	PID int
}

// Rename reports a tool whose reel name is not "mcp__SERVER__TOOL"
// literally.
type Rename struct {
	// Server and Tool are the original names.
	Server, Tool string
	// Name is the name reel gave the tool.
	Name string
	// Reason is "sanitized" (characters replaced), "shortened" (cut to
	// MaxNameBytes with a hash suffix) or "collision" (another tool had
	// the name first; a hash suffix tells them apart).
	Reason string
}

// Skipped reports a tool of a server that is not offered to the model.
type Skipped struct {
	// Server and Tool are the original names.
	Server, Tool string
	// Reason says why.
	Reason string
}

// server is one live connection.
type server struct {
	cfg     ServerConfig
	log     *slog.Logger
	life    context.Context // ends when the server is closed
	end     context.CancelFunc
	session *sdk.ClientSession
	proc    *process // stdio only
	grace   time.Duration
	info    ServerInfo

	maxArgBytes, maxResultBytes int

	closed    atomic.Bool
	closeOnce sync.Once
}

// Connect connects to every server concurrently, lists their tools and
// returns them as a Set. It always returns a non-nil Set, which the caller
// must Close, holding the servers that connected; the error, when not nil,
// is a *ConnectError listing each server that did not, with what failed
// (*ServerError). An invalid configuration fails only its own server, as
// does a second server of the same name.
//
// ctx bounds the connecting only, as in net.Dialer.DialContext: a server
// still connecting when ctx ends fails, and its process, if any, is
// killed and reaped before Connect returns; once Connect has returned,
// the connections live until Close. Each server's connecting is also
// bounded by Options.ConnectTimeout.
//
// Tools are ordered by server (in configuration order), then by their
// original names, whatever order the servers list them in, so a session's
// tool schemas are stable. For their names see [ToolName] and [Rename]
// and the package documentation.
func Connect(ctx context.Context, servers []ServerConfig, opts Options) (*Set, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	results := make([]*server, len(servers))
	lists := make([][]*sdk.Tool, len(servers))
	failures := make([]*ServerError, len(servers))
	seen := make(map[string]bool, len(servers))
	var wg sync.WaitGroup
	for i := range servers {
		cfg := servers[i]
		cfg.Args = slices.Clone(cfg.Args)
		cfg.Env = slices.Clone(cfg.Env)
		cfg.Headers = slices.Clone(cfg.Headers)
		err := cfg.validate()
		if err == nil && seen[cfg.Name] {
			err = fmt.Errorf("%w: another server is already called %q", ErrInvalidConfig, cfg.Name)
		}
		if err != nil {
			failures[i] = &ServerError{Server: cfg.Name, Transport: cfg.Transport, Stage: StageConfig, Err: err}
			continue
		}
		seen[cfg.Name] = true
		wg.Go(func() {
			results[i], lists[i], failures[i] = connectOne(ctx, cfg, &opts, log.With("mcpServer", cfg.Name))
		})
	}
	wg.Wait()

	s := &Set{byName: make(map[string]*Tool)}
	var cands [][]candidate
	for i, srv := range results {
		if srv != nil {
			s.servers = append(s.servers, srv)
			cands = append(cands, s.candidates(srv, lists[i]))
		}
	}
	s.assignNames(cands)
	var ce ConnectError
	for _, f := range failures {
		if f != nil {
			log.Warn("mcp: server failed to connect", "mcpServer", f.Server, "stage", string(f.Stage), "err", f.Error())
			ce.Failures = append(ce.Failures, f)
		}
	}
	if len(ce.Failures) > 0 {
		return s, &ce
	}
	return s, nil
}

// connectOne starts, initializes and lists one server.
func connectOne(ctx context.Context, cfg ServerConfig, opts *Options, log *slog.Logger) (*server, []*sdk.Tool, *ServerError) {
	timeout := cmp.Or(opts.ConnectTimeout, DefaultConnectTimeout)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	srv := &server{
		cfg: cfg, log: log, life: life, end: end,
		grace:          cmp.Or(opts.ShutdownGrace, DefaultShutdownGrace),
		maxArgBytes:    cmp.Or(opts.MaxArgBytes, DefaultMaxArgBytes),
		maxResultBytes: cmp.Or(opts.MaxResultBytes, tools.DefaultMaxInlineBytes),
		info:           ServerInfo{Name: cfg.Name, Transport: cfg.Transport},
	}
	var inner sdk.Transport
	var stdio *stdioTransport
	switch {
	case opts.Transport != nil:
		inner = opts.Transport(cfg)
	case cfg.Transport == TransportStdio:
		stdio = &stdioTransport{cfg: &srv.cfg, opts: opts, log: log}
		inner = stdio
	case cfg.Transport == TransportHTTP:
		// No standalone GET stream: the tool list is fixed per session,
		// so reel has no use for server-initiated notifications, and
		// what a server asks during a call (roots) comes on that
		// call's response stream.
		inner = &sdk.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: httpClient(opts, &cfg), DisableStandaloneSSE: true}
	case cfg.Transport == TransportSSE:
		inner = &sdk.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: httpClient(opts, &cfg)}
	}
	tr := &lifeTransport{inner: inner, life: life, end: end}
	client := sdk.NewClient(&sdk.Implementation{Name: "reel", Version: cmp.Or(opts.ClientVersion, "dev")}, &sdk.ClientOptions{
		Logger: log,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			log.Info("mcp: server's tool list changed; the session keeps the tools listed when it connected")
		},
	})
	for _, dir := range opts.Roots {
		//lint:ignore SA1019 deprecated only from protocol 2026-07-28; reel asks for 2025-11-25, whose servers (the filesystem server among them) ask for roots.
		client.AddRoots(&sdk.Root{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String(), Name: filepath.Base(dir)})
	}

	fail := func(stage Stage, err error) (*server, []*sdk.Tool, *ServerError) {
		se := &ServerError{Server: cfg.Name, Transport: cfg.Transport, Stage: stage, Err: err}
		switch {
		case ctx.Err() != nil:
			se.Err = fmt.Errorf("connecting was abandoned: %w", ctx.Err())
		case cctx.Err() != nil:
			se.Err = &timeoutError{after: timeout}
		case srv.proc != nil && srv.proc.waitExit(exitWait):
			// It ended by itself: say how.
			se.Exit = srv.proc.exitStatus()
		}
		srv.shutdown(0)
		if srv.proc != nil {
			se.Stderr = srv.proc.stderr.tailText()
		}
		return nil, nil, se
	}

	cs, err := client.Connect(cctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if stdio != nil {
		srv.proc = stdio.proc
	}
	if err != nil {
		if !tr.connected {
			return fail(StageStart, err)
		}
		return fail(StageInitialize, err)
	}
	srv.session = cs
	if init := cs.InitializeResult(); init != nil {
		if init.ServerInfo != nil {
			srv.info.Implementation, srv.info.Version = field(init.ServerInfo.Name), field(init.ServerInfo.Version)
		}
		srv.info.ProtocolVersion = field(init.ProtocolVersion)
		srv.info.Instructions = cutText(init.Instructions, MaxInstructionsBytes)
	}
	if srv.proc != nil {
		srv.info.PID = srv.proc.pid
	}
	list, err := listTools(cctx, cs)
	if err != nil {
		return fail(StageListTools, err)
	}
	log.Info("mcp: server connected", "transport", string(cfg.Transport), "implementation", srv.info.Implementation,
		"version", srv.info.Version, "protocol", srv.info.ProtocolVersion, "tools", len(list))
	return srv, list, nil
}

// listTools lists every page of the server's tools, up to one more than
// MaxTools (so the excess can be reported).
func listTools(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, error) {
	var all []*sdk.Tool
	cursor := ""
	seen := map[string]bool{}
	for range maxListPages {
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" || seen[res.NextCursor] || len(all) > MaxTools {
			break
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	return all, nil
}

// candidate is a listed tool that can be offered, before it is named.
type candidate struct {
	srv    *server
	tool   *sdk.Tool
	params json.RawMessage
}

// candidates sorts one server's listing by name and skips what cannot be
// offered: nameless tools, duplicates, unusable schemas, the excess over
// MaxTools.
func (s *Set) candidates(srv *server, list []*sdk.Tool) []candidate {
	list = slices.DeleteFunc(slices.Clone(list), func(t *sdk.Tool) bool { return t == nil })
	slices.SortStableFunc(list, func(a, b *sdk.Tool) int { return cmp.Compare(a.Name, b.Name) })
	skip := func(tool, reason string) {
		srv.log.Warn("mcp: tool skipped", "tool", tool, "reason", reason)
		s.skipped = append(s.skipped, Skipped{Server: srv.cfg.Name, Tool: tool, Reason: reason})
	}
	var out []candidate
	for i, t := range list {
		switch {
		case t.Name == "":
			skip(t.Name, "the tool has no name")
			continue
		case i > 0 && list[i-1].Name == t.Name:
			skip(t.Name, "the server lists this name more than once")
			continue
		case len(out) == MaxTools:
			skip(t.Name, fmt.Sprintf("the server offers more than %d tools", MaxTools))
			continue
		}
		params, err := inputSchema(t.InputSchema)
		if err != nil {
			skip(t.Name, err.Error())
			continue
		}
		out = append(out, candidate{srv: srv, tool: t, params: params})
	}
	return out
}

// assignNames names every candidate and makes the set's tools, ordered by
// server, then by original name. Names are handed out in two passes over
// that order: first the tools whose literal mcp__SERVER__TOOL is already a
// valid name, then the others, so a tool whose name needed no change keeps
// it and a sanitized or shortened name that lands on it is the one that
// gets a hash suffix.
func (s *Set) assignNames(cands [][]candidate) {
	var n namer
	names := make([][]string, len(cands))
	for pass := range 2 {
		for i, list := range cands {
			if names[i] == nil {
				names[i] = make([]string, len(list))
			}
			for j, c := range list {
				literal := ValidName(NamePrefix + c.srv.cfg.Name + "__" + c.tool.Name)
				if literal != (pass == 0) {
					continue
				}
				name, reason := n.assign(c.srv.cfg.Name, c.tool.Name)
				if reason != "" {
					c.srv.log.Warn("mcp: tool renamed", "tool", c.tool.Name, "name", name, "reason", reason)
				}
				names[i][j] = name
			}
		}
	}
	for i, list := range cands {
		for j, c := range list {
			name := names[i][j]
			if literal := NamePrefix + c.srv.cfg.Name + "__" + c.tool.Name; name != literal {
				s.renames = append(s.renames, Rename{Server: c.srv.cfg.Name, Tool: c.tool.Name, Name: name, Reason: renameReason(c.srv.cfg.Name, c.tool.Name, name)})
			}
			t := newTool(c.srv, c.tool, name, c.params)
			s.tools = append(s.tools, t)
			s.byName[name] = t
			c.srv.info.Tools = append(c.srv.info.Tools, name)
		}
	}
}

// inputSchema is a tool's input schema as compact JSON with sorted keys
// (the SDK decodes it into maps), {"type":"object"} when absent.
func inputSchema(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	s, ok := compactJSON(v)
	switch {
	case !ok:
		return nil, errors.New("its input schema cannot be encoded")
	case len(s) == 0 || s[0] != '{':
		return nil, errors.New("its input schema is not a JSON object")
	case len(s) > MaxSchemaBytes:
		return nil, fmt.Errorf("its input schema is %d bytes, more than the %d-byte limit", len(s), MaxSchemaBytes)
	}
	return json.RawMessage(s), nil
}

// Tools returns the tools of every connected server, in order, as reel
// tools to register next to the built-in ones (each is a *Tool).
func (s *Set) Tools() []tools.Tool {
	out := make([]tools.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t
	}
	return out
}

// Tool returns the tool called name (its reel name), if any.
func (s *Set) Tool(name string) (*Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Servers describes the connected servers, in configuration order.
func (s *Set) Servers() []ServerInfo {
	out := make([]ServerInfo, len(s.servers))
	for i, srv := range s.servers {
		out[i] = srv.info
		out[i].Tools = slices.Clone(srv.info.Tools)
	}
	return out
}

// Renames lists the tools whose names had to change, in tool order.
func (s *Set) Renames() []Rename { return slices.Clone(s.renames) }

// Skipped lists the tools not offered to the model.
func (s *Set) Skipped() []Skipped { return slices.Clone(s.skipped) }

// Close ends every connection: calls still running are cancelled (the
// servers are sent notifications/cancelled), then each stdio server's
// stdin is closed and it is given Options.ShutdownGrace to exit, then
// SIGTERM and the grace again, then its whole process group is killed;
// every process is reaped before Close returns. HTTP sessions are ended
// with a DELETE. Servers are closed concurrently. Close is idempotent and
// always returns nil; later calls of the set's tools report the server as
// closed.
func (s *Set) Close() error {
	s.closeOnce.Do(func() {
		var wg sync.WaitGroup
		for _, srv := range s.servers {
			wg.Go(func() { srv.shutdown(srv.grace) })
		}
		wg.Wait()
	})
	return nil
}

var _ io.Closer = (*Set)(nil)

// shutdown ends the connection and the process (see Set.Close). grace 0
// kills a stdio server at once.
func (srv *server) shutdown(grace time.Duration) {
	srv.closeOnce.Do(func() {
		srv.closed.Store(true)
		srv.end()
		done := make(chan struct{})
		go func() {
			defer close(done)
			if srv.session != nil {
				_ = srv.session.Close()
			}
		}()
		if srv.proc != nil {
			// Closing the session closes the server's stdin; give it
			// the grace to get there before the grace to exit starts.
			waitDone(done, grace)
			srv.proc.stop(grace)
		}
		if !waitDone(done, closeWait) {
			srv.log.Warn("mcp: connection did not close in time; abandoned", "after", closeWait)
		}
		srv.log.Debug("mcp: server closed")
	})
}

// waitDone waits at most d for done and reports whether it closed.
func waitDone(done <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// timeoutError is a connect that took longer than Options.ConnectTimeout.
type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("no answer within the connect timeout of %s", e.after)
}

// Unwrap makes the error match ErrTimeout and context.DeadlineExceeded.
func (e *timeoutError) Unwrap() []error { return []error{ErrTimeout, context.DeadlineExceeded} }

// cutText cuts s to at most n bytes on a character boundary, marking the
// cut with "…".
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return headRunes(s, n-len("…")) + "…"
}
