package rpcclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type rwc struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (r rwc) Close() error {
	for _, c := range r.closers {
		c.Close()
	}
	return nil
}

// fakeAgent is an agent built on plain jsonrpc2 over io.Pipe. It records
// the bytes it wrote (its stdout) and the bytes the client wrote to it.
type fakeAgent struct {
	conn     *jsonrpc2.Conn
	stdout   *io.PipeWriter
	wrote    syncBuffer // what the agent wrote
	read     syncBuffer // what the client wrote
	received chan string
}

// start connects a Client to a fakeAgent and cleans both up at test end.
func start(t *testing.T, opts Options) (*Client, *fakeAgent) {
	t.Helper()
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	a := &fakeAgent{stdout: a2cW, received: make(chan string, 16)}
	stream := jsonrpc2.NewPlainObjectStream(rwc{
		Reader:  io.TeeReader(c2aR, &a.read),
		Writer:  io.MultiWriter(&a.wrote, a2cW),
		closers: []io.Closer{a2cW, c2aR},
	})
	a.conn = jsonrpc2.NewConn(context.Background(), stream,
		jsonrpc2.AsyncHandler(jsonrpc2.HandlerWithError(a.handle)),
		jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	c := New(context.Background(), a2cR, c2aW, opts)
	t.Cleanup(func() {
		c.Close()
		a.conn.Close()
	})
	return c, a
}

func (a *fakeAgent) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	var p map[string]json.RawMessage
	if req.Params != nil {
		if err := json.Unmarshal(*req.Params, &p); err != nil {
			return nil, err
		}
	}
	switch req.Method {
	case "initialize":
		return map[string]int{"protocolVersion": 1}, nil
	case "fail":
		return nil, &jsonrpc2.Error{Code: 42, Message: "nope"}
	case "session/prompt":
		var n int
		json.Unmarshal(p["n"], &n)
		for i := range n {
			update := map[string]any{
				"sessionId": "s1",
				"update": map[string]any{
					"sessionUpdate": "agent_message_chunk",
					"content":       map[string]string{"type": "text", "text": strconv.Itoa(i)},
				},
			}
			if err := conn.Notify(ctx, "session/update", update); err != nil {
				return nil, err
			}
		}
		return map[string]string{"stopReason": "end_turn"}, nil
	case "relay":
		// Calls the client with method/params from p and returns what came
		// back: {"result":…} or {"code":…,"message":…,"data":…}.
		var method string
		json.Unmarshal(p["method"], &method)
		var params any = p["params"]
		if p["params"] == nil {
			params = nil
		}
		var res json.RawMessage
		err := conn.Call(ctx, method, params, &res)
		var rpcErr *jsonrpc2.Error
		if errors.As(err, &rpcErr) {
			return map[string]any{"code": rpcErr.Code, "message": rpcErr.Message, "data": rpcErr.Data}, nil
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{"result": res}, nil
	case "hang":
		a.received <- req.Method
		<-ctx.Done()
		return nil, ctx.Err()
	case "die":
		a.received <- req.Method
		a.stdout.Close()
		return nil, nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: req.Method}
}

func TestCallResponse(t *testing.T) {
	c, a := start(t, Options{})
	ctx := context.Background()
	var res struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	if err := c.Call(ctx, "initialize", map[string]int{"protocolVersion": 1}, &res); err != nil {
		t.Fatal(err)
	}
	if res.ProtocolVersion != 1 {
		t.Errorf("result = %+v", res)
	}
	err := c.Call(ctx, "fail", nil, nil)
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != 42 || rpcErr.Message != "nope" {
		t.Fatalf("error = %v", err)
	}
	if want := "rpcclient: fail: jsonrpc2: code 42 message: nope"; err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
	if err := c.Notify(ctx, "session/cancel", map[string]string{"sessionId": "s1"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "initialize", nil, nil); err != nil { // nil result is fine
		t.Fatal(err)
	}

	// The client wrote one newline-terminated frame per message, ids 1, 2, 3.
	c.Close()
	<-a.conn.DisconnectNotify()
	frames := strings.SplitAfter(a.read.String(), "\n")
	if last := frames[len(frames)-1]; last != "" {
		t.Fatalf("unterminated frame %q", last)
	}
	frames = frames[:len(frames)-1]
	want := []struct {
		id     any
		method string
	}{{1.0, "initialize"}, {2.0, "fail"}, {nil, "session/cancel"}, {3.0, "initialize"}}
	if len(frames) != len(want) {
		t.Fatalf("frames = %q", frames)
	}
	for i, f := range frames {
		var m map[string]any
		if err := json.Unmarshal([]byte(f), &m); err != nil {
			t.Fatalf("frame %d %q: %v", i, f, err)
		}
		if m["id"] != want[i].id || m["method"] != want[i].method || m["jsonrpc"] != "2.0" {
			t.Errorf("frame %d = %s, want id %v method %s", i, f, want[i].id, want[i].method)
		}
	}
}

func TestNotificationsInOrder(t *testing.T) {
	c, _ := start(t, Options{})
	ctx := context.Background()
	const n = 200
	if err := c.Call(ctx, "session/prompt", map[string]int{"n": n}, nil); err != nil {
		t.Fatal(err)
	}
	// The response follows every notification on the wire, so all are in.
	notes := c.Notifications()
	if len(notes) != n || c.Len() != n {
		t.Fatalf("got %d notifications, want %d", len(notes), n)
	}
	for i, note := range notes {
		var p struct {
			Update struct {
				Content struct{ Text string }
			}
		}
		if err := json.Unmarshal(note.Params, &p); err != nil {
			t.Fatal(err)
		}
		if note.Index != i || p.Update.Content.Text != strconv.Itoa(i) || note.Method != "session/update" ||
			note.SessionID != "s1" || note.Update != "agent_message_chunk" {
			t.Fatalf("notification %d = %+v (%s)", i, note, note.Params)
		}
	}
}

func text(n Notification) string {
	var p struct {
		Update struct {
			Content struct{ Text string }
		}
	}
	json.Unmarshal(n.Params, &p)
	return p.Update.Content.Text
}

func TestWaitFor(t *testing.T) {
	c, _ := start(t, Options{})
	ctx := context.Background()

	// A waiter started before the notifications exist.
	type result struct {
		n   Notification
		err error
	}
	got := make(chan result, 1)
	go func() {
		n, err := c.WaitFor(ctx, func(n Notification) bool { return text(n) == "7" })
		got <- result{n, err}
	}()
	if err := c.Call(ctx, "session/prompt", map[string]int{"n": 10}, nil); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || r.n.Index != 7 {
		t.Fatalf("WaitFor = %+v, %v", r.n, r.err)
	}

	// Past notifications count; the first match wins.
	n, err := c.WaitFor(ctx, func(n Notification) bool { return n.Update == "agent_message_chunk" })
	if err != nil || n.Index != 0 {
		t.Fatalf("WaitFor = %+v, %v", n, err)
	}

	// A mark selects only later notifications.
	mark := c.Len()
	go func() {
		n, err := c.WaitFor(ctx, func(n Notification) bool { return n.Index >= mark && text(n) == "1" })
		got <- result{n, err}
	}()
	if err := c.Call(ctx, "session/prompt", map[string]int{"n": 3}, nil); err != nil {
		t.Fatal(err)
	}
	r = <-got
	if r.err != nil || r.n.Index != mark+1 {
		t.Fatalf("WaitFor after mark = %+v, %v", r.n, r.err)
	}

	// A cancelled wait returns the context's error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.WaitFor(cctx, func(Notification) bool { return false })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitFor with cancelled ctx = %v", err)
	}
}

// mapFS serves files from a map.
type mapFS struct {
	mu    sync.Mutex
	files map[string]string
}

func (f *mapFS) ReadTextFile(_ context.Context, req ReadTextFileRequest) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.files[req.Path]
	if !ok {
		return "", fmt.Errorf("no such file %s", req.Path)
	}
	return s, nil
}

func (f *mapFS) WriteTextFile(_ context.Context, req WriteTextFileRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[req.Path] = req.Content
	return nil
}

func TestAgentRequests(t *testing.T) {
	permission := func() json.RawMessage {
		return json.RawMessage(`{"sessionId":"s1","toolCall":{"toolCallId":"c1"},"options":[` +
			`{"optionId":"opt-allow","name":"Allow","kind":"allow_once"},` +
			`{"optionId":"opt-reject","name":"Reject","kind":"reject_once"}]}`)
	}
	queue := NewAnswerQueue([]string{"reject_once", "allow_once"})
	fs := &mapFS{files: map[string]string{"/w/a.txt": "hello"}}
	tests := []struct {
		name   string
		opts   Options
		method string
		params json.RawMessage
		want   string
	}{
		{"queue first", Options{Permission: queue.Answer}, MethodRequestPermission, permission(),
			`{"result":{"outcome":{"outcome":"selected","optionId":"opt-reject"}}}`},
		{"queue second", Options{Permission: queue.Answer}, MethodRequestPermission, permission(),
			`{"result":{"outcome":{"outcome":"selected","optionId":"opt-allow"}}}`},
		{"queue exhausted", Options{Permission: queue.Answer}, MethodRequestPermission, permission(),
			`{"result":{"outcome":{"outcome":"cancelled"}}}`},
		{"no handler", Options{}, MethodRequestPermission, permission(),
			`{"result":{"outcome":{"outcome":"cancelled"}}}`},
		{"handler error", Options{Permission: func(context.Context, PermissionRequest) (PermissionOutcome, error) {
			return PermissionOutcome{}, errors.New("boom")
		}}, MethodRequestPermission, permission(),
			`{"code":-32603,"data":null,"message":"boom"}`},
		{"handler rpc error", Options{Permission: func(context.Context, PermissionRequest) (PermissionOutcome, error) {
			return PermissionOutcome{}, &jsonrpc2.Error{Code: 7, Message: "seven"}
		}}, MethodRequestPermission, permission(),
			`{"code":7,"data":null,"message":"seven"}`},
		{"bad params", Options{}, MethodRequestPermission, json.RawMessage(`{"options":"x"}`),
			`{"code":-32602,"data":null,"message":"session/request_permission: invalid params: json: cannot unmarshal string into Go struct field PermissionRequest.options of type []rpcclient.PermissionOption"}`},
		{"missing params", Options{}, MethodRequestPermission, nil,
			`{"code":-32602,"data":null,"message":"session/request_permission: missing params"}`},
		{"read file", Options{FS: fs}, MethodReadTextFile, json.RawMessage(`{"sessionId":"s1","path":"/w/a.txt","line":1,"limit":2}`),
			`{"result":{"content":"hello"}}`},
		{"read missing file", Options{FS: fs}, MethodReadTextFile, json.RawMessage(`{"sessionId":"s1","path":"/w/b.txt"}`),
			`{"code":-32603,"data":null,"message":"no such file /w/b.txt"}`},
		{"write file", Options{FS: fs}, MethodWriteTextFile, json.RawMessage(`{"sessionId":"s1","path":"/w/c.txt","content":"new"}`),
			`{"result":{}}`},
		{"read without FS", Options{}, MethodReadTextFile, json.RawMessage(`{"sessionId":"s1","path":"/w/a.txt"}`),
			`{"code":-32601,"data":{"method":"fs/read_text_file"},"message":"Method not found"}`},
		{"write without FS", Options{}, MethodWriteTextFile, json.RawMessage(`{"sessionId":"s1","path":"/w/a.txt","content":""}`),
			`{"code":-32601,"data":{"method":"fs/write_text_file"},"message":"Method not found"}`},
		{"unknown method", Options{}, "x/unknown", nil,
			`{"code":-32601,"data":{"method":"x/unknown"},"message":"Method not found"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := start(t, tt.opts)
			params := map[string]any{"method": tt.method}
			if tt.params != nil {
				params["params"] = tt.params
			}
			var got json.RawMessage
			if err := c.Call(context.Background(), "relay", params, &got); err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("agent saw\n %s\nwant\n %s", got, tt.want)
			}
		})
	}
	if fs.files["/w/c.txt"] != "new" {
		t.Errorf("write did not reach the FileSystem: %v", fs.files)
	}
	if queue.Asked() != 3 || queue.Remaining() != 0 || queue.Err() != nil {
		t.Errorf("queue asked %d remaining %d err %v", queue.Asked(), queue.Remaining(), queue.Err())
	}
}

func TestAnswerQueueKindNotOffered(t *testing.T) {
	q := NewAnswerQueue([]string{"allow_always", "allow_once"})
	req := PermissionRequest{SessionID: "s1", Options: []PermissionOption{
		{OptionID: "a", Kind: "allow_once"}, {OptionID: "r", Kind: "reject_once"},
	}}
	got, err := q.Answer(context.Background(), req)
	if err != nil || got != Cancelled() {
		t.Fatalf("Answer = %+v, %v", got, err)
	}
	const want = `rpcclient: permission kind not offered: permission request 1 (session "s1") offered [allow_once, reject_once], the queue wanted "allow_always"`
	if q.Err() == nil || q.Err().Error() != want || !errors.Is(q.Err(), ErrKindNotOffered) {
		t.Fatalf("Err = %v", q.Err())
	}
	// The failed kind was consumed; the next answer proceeds and the first
	// error is kept.
	if got, _ := q.Answer(context.Background(), req); got != Selected("a") {
		t.Errorf("second Answer = %+v", got)
	}
	if q.Err().Error() != want {
		t.Errorf("Err changed to %v", q.Err())
	}
}

func TestTeeMatchesAgentOutput(t *testing.T) {
	var tee syncBuffer
	c, a := start(t, Options{Tee: &tee})
	ctx := context.Background()
	if err := c.Call(ctx, "session/prompt", map[string]int{"n": 20}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "relay", map[string]any{"method": MethodRequestPermission, "params": json.RawMessage(`{"sessionId":"s","options":[]}`)}, nil); err != nil {
		t.Fatal(err)
	}
	a.conn.Close() // closes the agent's stdout: the client drains and ends
	<-c.Done()
	if tee.String() != a.wrote.String() {
		t.Fatalf("tee differs from the agent's stdout\n tee: %q\nwant: %q", tee.String(), a.wrote.String())
	}
	if !strings.Contains(tee.String(), `"method":"session/request_permission"`) {
		t.Errorf("tee misses the agent's request: %s", tee.String())
	}
}

// rawAgent lets a test write exact bytes as the agent's stdout and read
// the client's frames line by line.
type rawAgent struct {
	stdout *io.PipeWriter
	stdin  *bufio.Reader
}

func startRaw(t *testing.T, opts Options) (*Client, *rawAgent) {
	t.Helper()
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	c := New(context.Background(), a2cR, c2aW, opts)
	t.Cleanup(func() {
		c.Close()
		a2cW.Close()
		c2aR.Close()
	})
	return c, &rawAgent{stdout: a2cW, stdin: bufio.NewReader(c2aR)}
}

func (r *rawAgent) readFrame(t *testing.T) map[string]any {
	t.Helper()
	line, err := r.stdin.ReadBytes('\n')
	if err != nil {
		t.Errorf("reading the client's frame: %v", err)
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Errorf("client frame %q: %v", line, err)
	}
	return m
}

func TestTeeFidelity(t *testing.T) {
	var tee syncBuffer
	c, agent := startRaw(t, Options{Tee: &tee})
	// Odd spacing, key order, escapes and a frame split across writes: the
	// transcript must hold them exactly.
	wire := []string{
		`{"method":"session/update","jsonrpc":"2.0","params":{"update":{"sessionUpdate":"plan"},"sessionId":"\u00e9t\u00e9"}}` + "\n",
		`{ "jsonrpc" : "2.0",`,
		` "id":1 , "result": {"b":1,"a":"<&>"} }` + "\n",
	}
	done := make(chan error, 1)
	go func() {
		agent.readFrame(t)
		for _, w := range wire {
			if _, err := io.WriteString(agent.stdout, w); err != nil {
				done <- err
				return
			}
		}
		done <- agent.stdout.Close()
	}()
	var res map[string]any
	if err := c.Call(context.Background(), "initialize", nil, &res); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if got, want := tee.String(), strings.Join(wire, ""); got != want {
		t.Fatalf("tee\n got %q\nwant %q", got, want)
	}
	if res["a"] != "<&>" {
		t.Errorf("result = %v", res)
	}
	notes := c.Notifications()
	if len(notes) != 1 || notes[0].SessionID != "été" || notes[0].Update != "plan" {
		t.Errorf("notifications = %+v", notes)
	}
	if err := c.Err(); !errors.Is(err, ErrClosed) || !errors.Is(err, io.EOF) {
		t.Errorf("Err = %v", err)
	}
}

func TestCancelPendingCall(t *testing.T) {
	c, a := start(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-a.received // the agent holds the request
		cancel()
	}()
	err := c.Call(ctx, "hang", nil, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	if want := "rpcclient: hang: context canceled"; err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
	// The connection stays usable.
	if err := c.Call(context.Background(), "initialize", nil, nil); err != nil {
		t.Fatalf("Call after a cancelled call: %v", err)
	}
	if c.Err() != nil {
		t.Errorf("Err = %v on an open connection", c.Err())
	}
}

func TestPeerCloses(t *testing.T) {
	c, a := start(t, Options{})
	ctx := context.Background()
	waitErr := make(chan error, 1)
	go func() {
		_, err := c.WaitFor(ctx, func(Notification) bool { return false })
		waitErr <- err
	}()
	callErr := make(chan error, 1)
	go func() { callErr <- c.Call(ctx, "hang", nil, nil) }()
	<-a.received // the hang is pending
	go c.Call(ctx, "die", nil, nil)

	err := <-callErr
	if !errors.Is(err, ErrClosed) || !errors.Is(err, io.EOF) {
		t.Fatalf("pending Call = %v, want ErrClosed and io.EOF", err)
	}
	if want := "rpcclient: connection closed during hang: the agent closed its stdout (EOF)"; err.Error() != want {
		t.Errorf("error text\n got %q\nwant %q", err, want)
	}
	if err := <-waitErr; !errors.Is(err, ErrClosed) {
		t.Errorf("WaitFor = %v, want ErrClosed", err)
	}
	<-c.Done()
	if err := c.Call(ctx, "initialize", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after close = %v", err)
	}
	if err := c.Notify(ctx, "session/cancel", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Notify after close = %v", err)
	}
}

func TestGarbageFrame(t *testing.T) {
	var tee syncBuffer
	c, agent := startRaw(t, Options{Tee: &tee})
	go func() {
		agent.readFrame(t)
		io.WriteString(agent.stdout, "this is not json\n")
	}()
	err := c.Call(context.Background(), "initialize", nil, nil)
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Call = %v, want ErrClosed", err)
	}
	const want = "rpcclient: connection closed during initialize: reading from the agent: invalid character 'h' in literal true (expecting 'r')"
	if err.Error() != want {
		t.Errorf("error text\n got %q\nwant %q", err, want)
	}
	<-c.Done()
	if !strings.HasPrefix(tee.String(), "th") {
		t.Errorf("tee = %q", tee.String())
	}
}

func TestCloseByClient(t *testing.T) {
	c, a := start(t, Options{})
	callErr := make(chan error, 1)
	go func() { callErr <- c.Call(context.Background(), "hang", nil, nil) }()
	<-a.received
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	err := <-callErr
	if want := "rpcclient: connection closed during hang: closed by the client"; err == nil || err.Error() != want {
		t.Fatalf("pending Call = %v, want %q", err, want)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestContextClosesConnection(t *testing.T) {
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	defer a2cW.Close()
	defer c2aR.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := New(ctx, a2cR, c2aW, Options{})
	cancel()
	<-c.Done()
	if err := c.Call(context.Background(), "initialize", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Call = %v", err)
	}
}
