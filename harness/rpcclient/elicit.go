package rpcclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// MethodElicitationCreate asks the client to elicit input from the user
// (ACP, unstable): a form or a URL.
const MethodElicitationCreate = "elicitation/create"

// ElicitationHandler answers an elicitation/create with its result, given
// the request's params as sent. It runs on its own goroutine.
type ElicitationHandler func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)

// ErrNoElicitationAnswer reports an elicitation past the last queued reply.
var ErrNoElicitationAnswer = errors.New("rpcclient: no elicitation answer left")

// ElicitationQueue answers elicitations from a FIFO queue of results.
// It is safe for concurrent use.
type ElicitationQueue struct {
	mu      sync.Mutex
	replies []json.RawMessage
	asked   int
	err     error
}

// NewElicitationQueue returns a queue of replies, used in order.
func NewElicitationQueue(replies []json.RawMessage) *ElicitationQueue {
	return &ElicitationQueue{replies: append([]json.RawMessage(nil), replies...)}
}

// Answer implements ElicitationHandler with the next reply.
func (q *ElicitationQueue) Answer(_ context.Context, _ json.RawMessage) (json.RawMessage, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked++
	if len(q.replies) == 0 {
		q.err = fmt.Errorf("%w: elicitation %d", ErrNoElicitationAnswer, q.asked)
		return nil, q.err
	}
	r := q.replies[0]
	q.replies = q.replies[1:]
	return r, nil
}

// Remaining is the number of replies not used.
func (q *ElicitationQueue) Remaining() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.replies)
}

// Err is the first failure to answer, nil for none.
func (q *ElicitationQueue) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}
