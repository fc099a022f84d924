package rpcclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"
)

// ErrClosed reports that the connection to the agent has ended. Errors
// returned for calls and waits cut short by the end wrap it, together with
// the cause when there is one (for example io.EOF when the agent closed its
// stdout).
var ErrClosed = errors.New("rpcclient: connection closed")

// Options configures a Client. The zero value is usable.
type Options struct {
	// Tee receives every byte read from the agent, in order and exactly as
	// received, before it is decoded. Nil means no transcript. It is
	// written by one goroutine; read it after Done is closed.
	Tee io.Writer
	// Permission answers session/request_permission. Nil answers every
	// request "cancelled".
	Permission PermissionHandler
	// FS serves fs/read_text_file and fs/write_text_file. Nil answers them
	// method-not-found.
	FS FileSystem
	// Elicitation answers elicitation/create. Nil answers it
	// method-not-found.
	Elicitation ElicitationHandler
	// Logger receives protocol warnings (unexpected responses, handler
	// failures). Nil discards them.
	Logger *slog.Logger
}

// Notification is a JSON-RPC notification the agent sent, such as a
// session/update.
type Notification struct {
	// Index is the 0-based position in arrival order.
	Index int
	// Method is the notification's method.
	Method string
	// Params is the params value (nil when absent) as re-encoded by
	// jsonrpc2, which sorts object keys; Options.Tee has the exact bytes.
	Params json.RawMessage
	// SessionID is params.sessionId when it is a string, else "".
	SessionID string
	// Update is params.update.sessionUpdate (e.g. "agent_message_chunk")
	// for session/update notifications, else "".
	Update string
}

// Client is the harness side of an ACP connection: a JSON-RPC 2.0 peer over
// newline-delimited JSON. All methods are safe for concurrent use.
type Client struct {
	conn   *jsonrpc2.Conn
	stream *recordingStream
	opts   Options
	log    *slog.Logger
	nextID atomic.Uint64

	mu       sync.Mutex
	notes    []Notification
	changed  chan struct{} // closed and replaced on every new notification
	closed   bool
	byClient bool
	stopping bool // Close is waiting for handlers; no new ones start
	done     chan struct{}

	handlers sync.WaitGroup
}

// New starts a client that reads the agent's frames from r (its stdout) and
// writes requests to w (its stdin). Cancelling ctx closes the connection.
// Close or Done must eventually be used to observe the end. If r or w is an
// io.Closer it is closed when the connection closes.
func New(ctx context.Context, r io.Reader, w io.Writer, opts Options) *Client {
	c := &Client{
		opts:    opts,
		log:     opts.Logger,
		changed: make(chan struct{}),
		done:    make(chan struct{}),
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	d := &duplex{r: r, w: w, rc: r}
	if opts.Tee != nil {
		d.r = io.TeeReader(r, opts.Tee)
	}
	c.stream = &recordingStream{ObjectStream: jsonrpc2.NewPlainObjectStream(d)}
	c.conn = jsonrpc2.NewConn(ctx, c.stream, c, jsonrpc2.SetLogger(printer{c.log}))
	go c.watch()
	return c
}

// watch marks the client closed when the connection ends and wakes waiters.
func (c *Client) watch() {
	<-c.conn.DisconnectNotify()
	c.mu.Lock()
	c.closed = true
	close(c.changed)
	c.mu.Unlock()
	close(c.done)
}

// Done is closed when the connection has ended, after every frame read
// before the end has been handled and teed.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns nil while the connection is open and, after Done, an error
// wrapping ErrClosed that says why it ended.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.closeErr("")
	default:
		return nil
	}
}

// Close ends the connection, closing r and w if they are io.Closers, and
// waits for running agent→client request handlers to return (they see
// their context cancelled).
func (c *Client) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.byClient = true
	}
	c.mu.Unlock()
	err := c.conn.Close()
	<-c.done
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
	c.handlers.Wait()
	if err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		return fmt.Errorf("rpcclient: close: %w", err)
	}
	return nil
}

// Call sends a request and waits for its response, decoding the result
// into result (which may be nil). Request ids are 1, 2, … in call order.
// An error response is returned wrapped; use errors.As with
// *jsonrpc2.Error to read its code. If ctx ends first, the context's error
// is returned wrapped (the response, if it ever comes, is dropped).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	id := jsonrpc2.ID{Num: c.nextID.Add(1)}
	w, err := c.conn.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	if err != nil {
		return c.sendErr(method, err)
	}
	if err := w.Wait(ctx, result); err != nil {
		if errors.Is(err, jsonrpc2.ErrClosed) {
			return c.closeErr(method)
		}
		return fmt.Errorf("rpcclient: %s: %w", method, err)
	}
	return nil
}

// Notify sends a notification (for example session/cancel).
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if err := c.conn.Notify(ctx, method, params); err != nil {
		return c.sendErr(method, err)
	}
	return nil
}

func (c *Client) sendErr(method string, err error) error {
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return c.closeErr(method)
	}
	return fmt.Errorf("rpcclient: %s: sending: %w", method, err)
}

// closeErr explains why the connection ended; during names what was cut
// short ("" for nothing in particular).
func (c *Client) closeErr(during string) error {
	if during != "" {
		during = " during " + during
	}
	c.mu.Lock()
	byClient := c.byClient
	c.mu.Unlock()
	cause := c.stream.readErr()
	switch {
	case byClient:
		return fmt.Errorf("%w%s: closed by the client", ErrClosed, during)
	case cause == nil:
		return fmt.Errorf("%w%s", ErrClosed, during)
	case errors.Is(cause, io.EOF):
		return fmt.Errorf("%w%s: the agent closed its stdout (%w)", ErrClosed, during, cause)
	default:
		return fmt.Errorf("%w%s: reading from the agent: %w", ErrClosed, during, cause)
	}
}

// Notifications returns a copy of the notifications received so far, in
// arrival order.
func (c *Client) Notifications() []Notification {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Notification(nil), c.notes...)
}

// Len returns how many notifications have arrived; use it as a mark, then
// wait for a notification whose Index is at least the mark.
func (c *Client) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.notes)
}

// WaitFor returns the first notification, in arrival order and counting
// those already received, for which match reports true. It blocks until
// one arrives, ctx ends or the connection ends. match runs without the
// client's lock held.
func (c *Client) WaitFor(ctx context.Context, match func(Notification) bool) (Notification, error) {
	next := 0
	for {
		c.mu.Lock()
		batch := c.notes[next:]
		changed, closed := c.changed, c.closed
		c.mu.Unlock()
		for _, n := range batch {
			if match(n) {
				return n, nil
			}
		}
		next += len(batch)
		if closed {
			return Notification{}, fmt.Errorf("rpcclient: waiting for a notification: %w", c.closeErr(""))
		}
		select {
		case <-ctx.Done():
			return Notification{}, fmt.Errorf("rpcclient: waiting for a notification: %w", ctx.Err())
		case <-changed:
		}
	}
}

// Handle implements jsonrpc2.Handler. Notifications are recorded in order
// on the reading goroutine; requests are served on their own goroutines so
// a slow answer never stalls reading.
func (c *Client) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		c.record(req)
		return
	}
	c.mu.Lock()
	if c.stopping { // the connection is gone; nobody can read a reply
		c.mu.Unlock()
		return
	}
	c.handlers.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.handlers.Done()
		result, err := c.serve(ctx, req)
		if err != nil {
			var rpcErr *jsonrpc2.Error
			if !errors.As(err, &rpcErr) {
				rpcErr = &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: err.Error()}
			}
			err = conn.ReplyWithError(ctx, req.ID, rpcErr)
		} else {
			err = conn.Reply(ctx, req.ID, result)
		}
		if err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
			c.log.Warn("rpcclient: reply failed", "method", req.Method, "err", err)
		}
	}()
}

func (c *Client) record(req *jsonrpc2.Request) {
	n := Notification{Method: req.Method}
	if req.Params != nil {
		n.Params = append(json.RawMessage(nil), (*req.Params)...)
		var p struct {
			SessionID any `json:"sessionId"`
			Update    struct {
				SessionUpdate any `json:"sessionUpdate"`
			} `json:"update"`
		}
		if json.Unmarshal(n.Params, &p) == nil {
			n.SessionID, _ = p.SessionID.(string)
			if req.Method == "session/update" {
				n.Update, _ = p.Update.SessionUpdate.(string)
			}
		}
	}
	c.mu.Lock()
	n.Index = len(c.notes)
	c.notes = append(c.notes, n)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// serve answers one agent→client request.
func (c *Client) serve(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	switch req.Method {
	case MethodRequestPermission:
		var p PermissionRequest
		if err := decodeParams(req, &p); err != nil {
			return nil, err
		}
		out := Cancelled()
		if c.opts.Permission != nil {
			var err error
			if out, err = c.opts.Permission(ctx, p); err != nil {
				return nil, err
			}
		}
		return permissionResponse{Outcome: out}, nil
	case MethodReadTextFile:
		if c.opts.FS == nil {
			return nil, methodNotFound(req.Method)
		}
		var p ReadTextFileRequest
		if err := decodeParams(req, &p); err != nil {
			return nil, err
		}
		content, err := c.opts.FS.ReadTextFile(ctx, p)
		if err != nil {
			return nil, err
		}
		return readTextFileResponse{Content: content}, nil
	case MethodWriteTextFile:
		if c.opts.FS == nil {
			return nil, methodNotFound(req.Method)
		}
		var p WriteTextFileRequest
		if err := decodeParams(req, &p); err != nil {
			return nil, err
		}
		if err := c.opts.FS.WriteTextFile(ctx, p); err != nil {
			return nil, err
		}
		return struct{}{}, nil
	case MethodElicitationCreate:
		if c.opts.Elicitation == nil || req.Params == nil {
			return nil, methodNotFound(req.Method)
		}
		return c.opts.Elicitation(ctx, *req.Params)
	}
	return nil, methodNotFound(req.Method)
}

func decodeParams(req *jsonrpc2.Request, v any) error {
	if req.Params == nil {
		return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: req.Method + ": missing params"}
	}
	if err := json.Unmarshal(*req.Params, v); err != nil {
		return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: req.Method + ": invalid params: " + err.Error()}
	}
	return nil
}

func methodNotFound(method string) *jsonrpc2.Error {
	e := &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "Method not found"}
	e.SetError(map[string]string{"method": method})
	return e
}

// duplex joins the agent's stdout and stdin into the io.ReadWriteCloser
// jsonrpc2 wants.
type duplex struct {
	r  io.Reader // possibly teed
	w  io.Writer
	rc io.Reader // the reader as given, closed on Close
}

// Read reads the agent's stdout (through the tee).
func (d *duplex) Read(p []byte) (int, error) { return d.r.Read(p) }

// Write writes the agent's stdin.
func (d *duplex) Write(p []byte) (int, error) { return d.w.Write(p) }

// Close closes the writer, then the reader, where they are io.Closers.
func (d *duplex) Close() error {
	var errs []error
	if c, ok := d.w.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	if c, ok := d.rc.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// recordingStream remembers the first read error, which is why the
// connection ended unless the client closed it.
type recordingStream struct {
	jsonrpc2.ObjectStream
	mu  sync.Mutex
	err error
}

// ReadObject reads the next frame and records the first failure.
func (s *recordingStream) ReadObject(v any) error {
	err := s.ObjectStream.ReadObject(v)
	if err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
	return err
}

func (s *recordingStream) readErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// printer adapts a *slog.Logger to jsonrpc2.Logger.
type printer struct{ l *slog.Logger }

// Printf logs a jsonrpc2 message as a warning.
func (p printer) Printf(format string, v ...any) {
	p.l.Warn(fmt.Sprintf(format, v...))
}
