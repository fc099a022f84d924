package rpcclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// The agent→client methods the client serves.
const (
	// MethodRequestPermission asks the client to pick a permission option.
	MethodRequestPermission = "session/request_permission"
	// MethodReadTextFile asks the client for a text file's content.
	MethodReadTextFile = "fs/read_text_file"
	// MethodWriteTextFile asks the client to write a text file.
	MethodWriteTextFile = "fs/write_text_file"
)

// PermissionRequest is the params of session/request_permission.
type PermissionRequest struct {
	// SessionID is the requesting session.
	SessionID string `json:"sessionId"`
	// ToolCall describes the call awaiting permission, kept raw.
	ToolCall json.RawMessage `json:"toolCall,omitempty"`
	// Options are the choices offered.
	Options []PermissionOption `json:"options"`
}

// PermissionOption is one offered choice.
type PermissionOption struct {
	// OptionID identifies the option in the answer.
	OptionID string `json:"optionId"`
	// Name is the label shown to a user.
	Name string `json:"name"`
	// Kind is allow_once, allow_always, reject_once or reject_always.
	Kind string `json:"kind"`
}

// PermissionOutcome is the answer to a permission request.
type PermissionOutcome struct {
	// Outcome is "selected" or "cancelled".
	Outcome string `json:"outcome"`
	// OptionID is the selected option (Outcome "selected" only).
	OptionID string `json:"optionId,omitempty"`
}

// Selected answers with the option optionID.
func Selected(optionID string) PermissionOutcome {
	return PermissionOutcome{Outcome: "selected", OptionID: optionID}
}

// Cancelled answers that the prompt was cancelled.
func Cancelled() PermissionOutcome {
	return PermissionOutcome{Outcome: "cancelled"}
}

// permissionResponse is the result of session/request_permission.
type permissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"` // the answer
}

// PermissionHandler answers a session/request_permission. It runs on its
// own goroutine and must return when ctx ends (the connection closed). A
// returned *jsonrpc2.Error is sent as is; any other error is sent as an
// internal error.
type PermissionHandler func(ctx context.Context, req PermissionRequest) (PermissionOutcome, error)

// ReadTextFileRequest is the params of fs/read_text_file.
type ReadTextFileRequest struct {
	// SessionID is the requesting session.
	SessionID string `json:"sessionId"`
	// Path is the absolute path to read.
	Path string `json:"path"`
	// Line is the optional 1-based first line.
	Line *int `json:"line,omitempty"`
	// Limit is the optional maximum number of lines.
	Limit *int `json:"limit,omitempty"`
}

// readTextFileResponse is the result of fs/read_text_file.
type readTextFileResponse struct {
	Content string `json:"content"` // the text read
}

// WriteTextFileRequest is the params of fs/write_text_file.
type WriteTextFileRequest struct {
	// SessionID is the requesting session.
	SessionID string `json:"sessionId"`
	// Path is the absolute path to write.
	Path string `json:"path"`
	// Content is the full new content.
	Content string `json:"content"`
}

// FileSystem serves the client file-system methods. Its methods run on
// their own goroutines, possibly concurrently, and must return when ctx
// ends. Errors are sent as in PermissionHandler.
type FileSystem interface {
	// ReadTextFile returns the requested text.
	ReadTextFile(ctx context.Context, req ReadTextFileRequest) (string, error)
	// WriteTextFile writes the file.
	WriteTextFile(ctx context.Context, req WriteTextFileRequest) error
}

// ErrKindNotOffered reports that the next queued permission answer named
// an option kind the request did not offer.
var ErrKindNotOffered = errors.New("rpcclient: permission kind not offered")

// AnswerQueue answers permission requests from a FIFO queue of option
// kinds: each request pops the next kind and selects the offered option of
// that kind. An empty or exhausted queue answers cancelled. A kind the
// request did not offer is consumed, answered cancelled, and recorded as
// the queue's error, which fails the run. Safe for concurrent use.
type AnswerQueue struct {
	mu    sync.Mutex
	kinds []string
	asked int
	err   error
}

// NewAnswerQueue returns a queue holding kinds in order.
func NewAnswerQueue(kinds []string) *AnswerQueue {
	return &AnswerQueue{kinds: append([]string(nil), kinds...)}
}

// Answer is a PermissionHandler.
func (q *AnswerQueue) Answer(_ context.Context, req PermissionRequest) (PermissionOutcome, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked++
	if len(q.kinds) == 0 {
		return Cancelled(), nil
	}
	kind := q.kinds[0]
	q.kinds = q.kinds[1:]
	offered := make([]string, 0, len(req.Options))
	for _, o := range req.Options {
		if o.Kind == kind {
			return Selected(o.OptionID), nil
		}
		offered = append(offered, o.Kind)
	}
	if q.err == nil {
		q.err = fmt.Errorf("%w: permission request %d (session %q) offered [%s], the queue wanted %q",
			ErrKindNotOffered, q.asked, req.SessionID, strings.Join(offered, ", "), kind)
	}
	return Cancelled(), nil
}

// Err returns the first kind-not-offered failure, or nil.
func (q *AnswerQueue) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// Remaining returns how many answers are still queued.
func (q *AnswerQueue) Remaining() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.kinds)
}

// Asked returns how many permission requests the queue has answered.
func (q *AnswerQueue) Asked() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.asked
}
