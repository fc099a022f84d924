package acpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	acp "github.com/coder/acp-go-sdk"
)

// calls sends the adapter's own requests to the client: those whose params
// the SDK cannot encode as the schema has them (elicitation/create needs
// its session scope, which acp-go-sdk v0.13.0's form type lacks). A request
// gets an id of its own ("reel-N", a string the SDK's numeric ids never
// equal), is written to stdout as one whole frame between the SDK's, and
// its response is taken off the input by the frame filter (deliver) before
// the SDK could see it.
type calls struct {
	out io.Writer

	mu      sync.Mutex
	next    int
	pending map[string]chan callResult
	closed  bool
}

// callPrefix starts the id of every request calls sends.
const callPrefix = "reel-"

// callResult is a response: its result, or its error.
type callResult struct {
	result json.RawMessage
	err    error
}

// errConnectionEnded is the error of a request the client can no longer
// answer.
var errConnectionEnded = errors.New("the connection to the client ended before it answered")

func newCalls(out io.Writer) *calls {
	return &calls{out: out, pending: map[string]chan callResult{}}
}

// call sends the request method with params and waits for its response or
// the end of ctx. A JSON-RPC error response is an *acp.RequestError.
func (c *calls) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errConnectionEnded
	}
	c.next++
	id := callPrefix + strconv.Itoa(c.next)
	ch := make(chan callResult, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	frame, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	if _, err := c.out.Write(append(frame, '\n')); err != nil {
		return nil, fmt.Errorf("send %s: %w", method, err)
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		// The client is told to stop asking ($/cancel_request, ACP's
		// unstable request cancellation); its late answer is dropped.
		if cancel, err := json.Marshal(struct {
			JSONRPC string `json:"jsonrpc"`
			Method  string `json:"method"`
			Params  any    `json:"params"`
		}{"2.0", cancelRequest, map[string]string{"requestId": id}}); err == nil {
			_, _ = c.out.Write(append(cancel, '\n'))
		}
		return nil, ctx.Err()
	}
}

// cancelRequest is the notification that withdraws a request.
const cancelRequest = "$/cancel_request"

// deliver takes a response to one of calls' requests off the input:
// it reports whether line was one (then the SDK must not see it). A
// response to a request no longer waited for is dropped.
func (c *calls) deliver(line []byte) bool {
	if !bytes.Contains(line, []byte(callPrefix)) {
		return false
	}
	var f struct {
		ID     json.RawMessage   `json:"id"`
		Method *string           `json:"method"`
		Result json.RawMessage   `json:"result"`
		Error  *acp.RequestError `json:"error"`
	}
	if json.Unmarshal(line, &f) != nil || f.Method != nil {
		return false
	}
	var id string
	if json.Unmarshal(f.ID, &id) != nil || !strings.HasPrefix(id, callPrefix) {
		return false
	}
	c.mu.Lock()
	ch := c.pending[id]
	c.mu.Unlock()
	if ch == nil {
		return true
	}
	r := callResult{result: f.Result}
	switch {
	case f.Error != nil:
		r.err = f.Error
	case len(f.Result) == 0:
		r.err = errors.New("the client's response has neither a result nor an error")
	}
	select {
	case ch <- r:
	default:
	}
	return true
}

// close fails every request still waiting: the client cannot answer.
func (c *calls) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for id, ch := range c.pending {
		select {
		case ch <- callResult{err: errConnectionEnded}:
		default:
		}
		delete(c.pending, id)
	}
}
