package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// ErrNotInstalled reports a configured server whose command is not there.
var ErrNotInstalled = errors.New("lsp: language server not installed")

// ErrServer reports a server that failed a call: it did not answer in
// time, exited, broke the protocol or its bounds. The server is stopped;
// the next call starts it again.
var ErrServer = errors.New("lsp: language server failed")

// stderrTail is how much of the end of a server's stderr an error quotes.
const stderrTail = 1 << 10

// server is one running language server: its process (under the
// session's sandbox, through tools.Env.Exec), its connection, and what it
// said it can do.
type server struct {
	cfg  *Server
	mode string
	root string
	// roots are root as the session names it and with its links
	// resolved: how locations beneath it are recognized.
	roots []string

	cmd    *exec.Cmd
	life   context.CancelFunc // ends the process (SIGTERM to its supervisor)
	conn   *jsonrpc2.Conn
	st     *stream
	stderr *tail
	exited chan struct{} // closed when the process was reaped
	waited error         // cmd.Wait's result, set before exited closes

	caps capabilities
	// turn holds one query at a time: each opens, asks and closes its
	// document before the next.
	turn chan struct{}

	stopOnce sync.Once
	stopped  chan struct{}
}

// capabilities are what a server's initialize result says it does.
type capabilities struct {
	PositionEncoding       string          `json:"positionEncoding"`
	TextDocumentSync       json.RawMessage `json:"textDocumentSync"`
	DefinitionProvider     json.RawMessage `json:"definitionProvider"`
	ReferencesProvider     json.RawMessage `json:"referencesProvider"`
	ImplementationProvider json.RawMessage `json:"implementationProvider"`
	HoverProvider          json.RawMessage `json:"hoverProvider"`
}

// provides reports whether a provider capability is on: true or an
// options object.
func provides(v json.RawMessage) bool {
	s := strings.TrimSpace(string(v))
	return s == "true" || strings.HasPrefix(s, "{")
}

// supports reports whether the server handles op.
func (c *capabilities) supports(op string) bool {
	switch op {
	case OpDefinition:
		return provides(c.DefinitionProvider)
	case OpReferences:
		return provides(c.ReferencesProvider)
	case OpImplementation:
		return provides(c.ImplementationProvider)
	}
	return provides(c.HoverProvider)
}

// opensDocuments reports whether the server takes didOpen/didClose:
// sync kind Full (1) or Incremental (2), or options with openClose.
func (c *capabilities) opensDocuments() bool {
	s := strings.TrimSpace(string(c.TextDocumentSync))
	if s == "1" || s == "2" {
		return true
	}
	var o struct {
		OpenClose bool `json:"openClose"`
	}
	return strings.HasPrefix(s, "{") && json.Unmarshal(c.TextDocumentSync, &o) == nil && o.OpenClose
}

// clientCapabilities is what reel says it takes at initialize (a
// constant: the package does no work at init).
const clientCapabilities = `{"general":{"positionEncodings":["utf-16"]},` +
	`"workspace":{"workspaceFolders":true,"configuration":true},` +
	`"textDocument":{"synchronization":{"dynamicRegistration":false},"hover":{"contentFormat":["markdown","plaintext"]},` +
	`"definition":{"linkSupport":true},"implementation":{"linkSupport":true},"references":{}}}`

// command resolves a server's command: a name with no slash in PATH, a
// path relative to root. A missing one is ErrNotInstalled.
func command(cfg *Server, root string) (string, error) {
	if strings.Contains(cfg.Command, "/") {
		p := cfg.Command
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: the %s language server %s is not an executable file", ErrNotInstalled, cfg.Name, p)
		}
		return p, nil
	}
	p, err := exec.LookPath(cfg.Command)
	if err != nil {
		hint := ""
		if cfg.Install != "" {
			hint = "; install it with: " + cfg.Install
		}
		return "", fmt.Errorf("%w: the %s language server %q is not installed (not found in PATH)%s", ErrNotInstalled, cfg.Name, cfg.Command, hint)
	}
	return p, nil
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// startServer starts cfg's server for the workspace root under env's
// sandbox (env.Exec: the session's bash under the supervisor, so the
// server has bash's rights and lifetime) and initializes it within ctx.
func startServer(ctx context.Context, cfg *Server, c *Config, env *tools.Env, root string) (*server, error) {
	exe, err := command(cfg, root)
	if err != nil {
		return nil, err
	}
	script := "exec " + shellQuote(exe)
	if env.Mode == string(sandbox.WorkspaceWrite) {
		// Landlock lets the server write only the workspace and its
		// private temp dir (TMPDIR): its caches (gopls's, the go build
		// cache of the go list it runs) go there, or it cannot work.
		script = `if [ -n "$TMPDIR" ]; then export XDG_CACHE_HOME="$TMPDIR/lsp-cache" GOCACHE="$TMPDIR/lsp-cache/go-build"; fi; ` + script
	}
	for _, a := range cfg.Args {
		script += " " + shellQuote(a)
	}
	lifeCtx, life := context.WithCancel(context.Background())
	var cmd *exec.Cmd
	if env.Exec != nil {
		cmd, err = env.Exec(lifeCtx, script, root)
		if err != nil {
			life()
			return nil, fmt.Errorf("lsp: starting the %s language server: %w", cfg.Name, err)
		}
	} else {
		cmd = exec.CommandContext(lifeCtx, "bash", "-c", script)
	}
	if _, warm := cmd.Err.(tools.Launcher); warm {
		// Started once and stopped through its context (exec's own
		// watch, which only Cmd.Start sets up): a cold supervisor.
		cmd.Err = nil
	}
	if cmd.Dir == "" {
		cmd.Dir = root
	}
	cmd.WaitDelay = stopWait
	ownGroup(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		life()
		return nil, fmt.Errorf("lsp: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		life()
		closeAll(inR, inW)
		return nil, fmt.Errorf("lsp: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		life()
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("lsp: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		life()
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("lsp: starting the %s language server: %w", cfg.Name, err)
	}
	closeAll(inR, outW, errW)
	s := &server{
		cfg: cfg, mode: env.Mode, root: root, roots: []string{root},
		cmd: cmd, life: life, stderr: &tail{max: stderrTail},
		exited: make(chan struct{}), turn: make(chan struct{}, 1), stopped: make(chan struct{}),
	}
	if r, err := filepath.EvalSymlinks(root); err == nil && r != root {
		s.roots = append(s.roots, r)
	}
	go func() {
		_, _ = io.Copy(s.stderr, errR)
		_ = errR.Close()
	}()
	go func() {
		s.waited = cmd.Wait()
		close(s.exited)
	}()
	s.st = newStream(outR, inW, c.MaxMessageBytes)
	s.conn = jsonrpc2.NewConn(context.Background(), s.st, jsonrpc2.HandlerWithError(s.answer),
		jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	if err := s.initialize(ctx); err != nil {
		s.stop()
		return nil, s.failure(ctx, "initialize", err)
	}
	return s, nil
}

// closeAll closes files, ignoring errors.
func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// initialize runs the initialize handshake.
func (s *server) initialize(ctx context.Context) error {
	opts := s.cfg.InitializationOptions
	if len(opts) == 0 {
		opts = json.RawMessage("null")
	}
	uri := fileURI(s.root)
	params := map[string]any{
		"processId": nil, "rootUri": uri, "rootPath": s.root,
		"workspaceFolders":      []any{map[string]string{"uri": uri, "name": filepath.Base(s.root)}},
		"capabilities":          json.RawMessage(clientCapabilities),
		"initializationOptions": opts,
	}
	var res struct {
		Capabilities *capabilities `json:"capabilities"`
	}
	if err := s.call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	if res.Capabilities == nil {
		return fmt.Errorf("%w: initialize answered without capabilities", ErrMalformed)
	}
	if e := res.Capabilities.PositionEncoding; e != "" && e != "utf-16" {
		return fmt.Errorf("%w: the server chose position encoding %q; reel speaks utf-16 only", ErrMalformed, e)
	}
	s.caps = *res.Capabilities
	return s.conn.Notify(ctx, "initialized", struct{}{})
}

// call makes one request; a server that does not answer within ctx is
// stopped (so a write blocked on a server that reads nothing ends too).
func (s *server) call(ctx context.Context, method string, params, result any) error {
	stop := context.AfterFunc(ctx, s.stop)
	defer stop()
	var raw json.RawMessage
	if err := s.conn.Call(ctx, method, params, &raw); err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("%w: the answer to %s: %v", ErrMalformed, method, err)
	}
	return nil
}

// query opens the document (uri, text in language lang), asks op at pos
// and closes it, returning the raw result.
func (s *server) query(ctx context.Context, op, uri, lang, text string, pos position) (json.RawMessage, error) {
	select {
	case s.turn <- struct{}{}:
		defer func() { <-s.turn }()
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.stopped:
		return nil, fmt.Errorf("%w: the %s language server was stopped", ErrServer, s.cfg.Name)
	}
	if !s.caps.supports(op) {
		return nil, fmt.Errorf("the %s language server does not support %s", s.cfg.Name, op)
	}
	if !s.caps.opensDocuments() {
		return nil, fmt.Errorf("the %s language server does not take opened documents (textDocumentSync), which reel needs", s.cfg.Name)
	}
	stop := context.AfterFunc(ctx, s.stop)
	defer stop()
	doc := map[string]any{"uri": uri}
	if err := s.conn.Notify(ctx, "textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": lang, "version": 1, "text": text},
	}); err != nil {
		return nil, s.failure(ctx, "textDocument/didOpen", err)
	}
	params := map[string]any{"textDocument": doc, "position": pos}
	if op == OpReferences {
		params["context"] = map[string]bool{"includeDeclaration": true}
	}
	var raw json.RawMessage
	err := s.conn.Call(ctx, method(op), params, &raw)
	if err != nil {
		var rpc *jsonrpc2.Error
		if errors.As(err, &rpc) {
			// The server answered with an error: it is alive and well.
			_ = s.conn.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": doc})
			return nil, fmt.Errorf("the %s language server answered %s with an error: %s", s.cfg.Name, op, clip(rpc.Message, 500))
		}
		return nil, s.failure(ctx, method(op), err)
	}
	if err := s.conn.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": doc}); err != nil {
		return nil, s.failure(ctx, "textDocument/didClose", err)
	}
	return raw, nil
}

// answer answers the server's own requests: configuration with null for
// every item, bookkeeping with null; it applies no edit and shows
// nothing. Notifications (logs, diagnostics, progress) are dropped.
func (s *server) answer(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	if req.Notif {
		return nil, nil
	}
	switch req.Method {
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		if req.Params != nil {
			_ = json.Unmarshal(*req.Params, &p)
		}
		return make([]any, len(p.Items)), nil
	case "window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability",
		"window/showMessageRequest", "workspace/workspaceFolders":
		return nil, nil
	case "workspace/applyEdit":
		return map[string]any{"applied": false, "failureReason": "reel applies no edits from a language server"}, nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "reel does not handle " + clip(req.Method, 100)}
}

// failure words a transport failure of step: the call's own end (ctx),
// the server's exit, or its broken framing; the server is stopped.
func (s *server) failure(ctx context.Context, step string, err error) error {
	if cerr := context.Cause(ctx); errors.Is(cerr, context.Canceled) {
		return fmt.Errorf("lsp: %s: %w", step, cerr)
	}
	name := s.cfg.Name
	broke := s.st.failure()
	var refusal *jsonrpc2.Error
	switch {
	case errors.As(err, &refusal):
		err = fmt.Errorf("%w: the %s language server refused %s: %s", ErrServer, name, step, clip(refusal.Message, 500))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("%w: the %s language server did not answer %s in time; it was stopped (the next call starts it again)", ErrServer, name, step)
	case broke != nil:
		err = fmt.Errorf("%w: the %s language server broke the protocol during %s (%v); it was stopped", ErrServer, name, step, broke)
	default:
		// The connection ended: the process is exiting or gone.
		select {
		case <-s.exited:
			err = fmt.Errorf("%w: the %s language server exited during %s (%v)", ErrServer, name, step, exitText(s.waited))
		case <-time.After(stopWait):
			err = fmt.Errorf("%w: the %s language server's connection failed during %s: %v", ErrServer, name, step, err)
		}
	}
	s.stop()
	if t := strings.TrimSpace(s.stderr.String()); t != "" {
		err = fmt.Errorf("%w; its stderr ends: %s", err, t)
	}
	if s.mode == string(sandbox.ReadOnly) && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%w (the session is read-only: the server runs under its sandbox, where it can write nothing, not even its caches; in workspace-write it can)", err)
	}
	return err
}

// exitText words a process's end.
func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// dead reports whether the server has stopped or exited.
func (s *server) dead() bool {
	select {
	case <-s.exited:
		return true
	case <-s.stopped:
		return true
	default:
		return false
	}
}

// stop ends the server, once: a polite shutdown and exit when it is
// alive and not busy (bounded by stopWait), then the end of its process
// tree (SIGTERM to its supervisor, which kills the tree; SIGKILL to its
// process group after stopWait), and waits for it to be reaped.
func (s *server) stop() {
	s.stopOnce.Do(func() {
		defer close(s.stopped)
		select {
		case s.turn <- struct{}{}:
			ctx, cancel := context.WithTimeout(context.Background(), stopWait)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if s.conn.Call(ctx, "shutdown", nil, nil) == nil {
					_ = s.conn.Notify(ctx, "exit", nil)
				}
			}()
			select {
			case <-s.exited:
			case <-done:
				select {
				case <-s.exited:
				case <-ctx.Done():
				}
			case <-ctx.Done():
			}
			cancel()
		default:
			// A query is running: the server is stopped under it.
		}
		s.life()
		_ = s.conn.Close()
		select {
		case <-s.exited:
		case <-time.After(2 * stopWait):
		}
		killGroup(s.cmd)
	})
	<-s.stopped
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

// Write implements io.Writer.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// String returns what is kept, made safe to quote on one line.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(strings.Fields(strings.ToValidUTF8(string(t.b), "?")), " ")
}

// clip cuts s to n bytes.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
