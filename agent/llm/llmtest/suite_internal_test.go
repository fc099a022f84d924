package llmtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm"
)

// flaws are the ways a fake stream can break the contract.
type flaws struct {
	servesAfterClose bool // Next ignores Close and keeps serving chunks
	closeKeepsBlock  bool // Close does not unblock a hanging Next
	ignoresCtx       bool // a hanging Next ignores its context
	cancelLosesCause bool // a cancelled Next fails with an error not wrapping ctx.Err()
	eofRestarts      bool // after io.EOF, Next serves the response again
	failureForgotten bool // after a failure, Next returns io.EOF
	closeTwiceFails  bool // a second Close returns an error
	leaks            bool // each stream starts a goroutine that outlives it
	afterFinish      bool // a chunk follows the finish chunk
	badChunk         bool // a usage chunk without usage
}

// response is a well-formed response.
var response = []llm.Chunk{
	{Type: llm.ChunkBlockStart, Index: 0, BlockType: llm.BlockReasoning},
	{Type: llm.ChunkReasoningDelta, Index: 0, Text: "hm"},
	{Type: llm.ChunkBlockStart, Index: 1, BlockType: llm.BlockText},
	{Type: llm.ChunkTextDelta, Index: 1, Text: "hi"},
	{Type: llm.ChunkBlockEnd, Index: 0, Block: &llm.Block{Type: llm.BlockReasoning, Text: "hm"}},
	{Type: llm.ChunkBlockEnd, Index: 1, Block: &llm.Block{Type: llm.BlockText, Text: "hi"}},
	{Type: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 1, OutputTokens: 2}},
	{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}},
}

// fake is an in-memory stream that keeps the contract unless told a flaw.
type fake struct {
	ctx    context.Context
	fl     flaws
	chunks []llm.Chunk
	end    string // "eof", "hang" or "fail"

	i      int
	err    error // terminal
	closes int   // guarded by mu
	mu     sync.Mutex
	closed chan struct{}
}

func (f *fake) isClosed() bool {
	select {
	case <-f.closed:
		return true
	default:
		return false
	}
}

func (f *fake) Next() (llm.Chunk, error) {
	if f.isClosed() && !f.fl.servesAfterClose {
		return llm.Chunk{}, fmt.Errorf("fake: %w", llm.ErrClosed)
	}
	if f.err != nil {
		switch {
		case f.err == io.EOF && f.fl.eofRestarts:
			f.err, f.i = nil, 0
		case f.err != io.EOF && f.fl.failureForgotten:
			f.err = io.EOF
			return llm.Chunk{}, f.err
		default:
			return llm.Chunk{}, f.err
		}
	}
	if f.i < len(f.chunks) {
		c := f.chunks[f.i]
		f.i++
		return c, nil
	}
	switch f.end {
	case "fail":
		f.err = &llm.ProviderError{Code: llm.CodeServer, Message: "upstream broke"}
	case "hang":
		closed, done := f.closed, f.ctx.Done()
		if f.fl.closeKeepsBlock {
			closed = nil
		}
		if f.fl.ignoresCtx {
			done = nil
		}
		select {
		case <-closed:
			return llm.Chunk{}, fmt.Errorf("fake: %w", llm.ErrClosed)
		case <-done:
			f.err = fmt.Errorf("fake: %w", f.ctx.Err())
			if f.fl.cancelLosesCause {
				f.err = errors.New("fake: cancelled")
			}
		}
	default:
		f.err = io.EOF
	}
	return llm.Chunk{}, f.err
}

func (f *fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closes++
	if f.closes == 1 {
		close(f.closed)
		return nil
	}
	if f.fl.closeTwiceFails {
		return errors.New("fake: already closed")
	}
	return nil
}

// fakeStreams opens fake streams with flaws fl. Goroutines leaked on
// purpose end when the test does.
func fakeStreams(t *testing.T, fl flaws) Streams {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	open := func(end string, chunks []llm.Chunk) Opener {
		return func(_ testing.TB, ctx context.Context) llm.Stream {
			if fl.leaks {
				go func() { <-release }()
			}
			return &fake{ctx: ctx, fl: fl, chunks: chunks, end: end, closed: make(chan struct{})}
		}
	}
	full := slices.Clone(response)
	if fl.afterFinish {
		full = append(full, llm.Chunk{Type: llm.ChunkTextDelta, Index: 1, Text: "late"})
	}
	if fl.badChunk {
		full[6] = llm.Chunk{Type: llm.ChunkUsage}
	}
	return Streams{
		Open: open("eof", full),
		Hang: open("hang", response[:4]),
		Fail: open("fail", response[:2]),
	}
}

// recorder is a testing.TB that records failures instead of reporting them,
// so that the suite's checks can be run and expected to fail. Methods the
// suite does not use are left to the nil embedded TB and would panic.
type recorder struct {
	testing.TB
	name string

	mu       sync.Mutex
	failed   bool
	msgs     []string
	cleanups []func()
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }

func (r *recorder) Logf(format string, args ...any) {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.Errorf("%s", fmt.Sprint(args...))
	runtime.Goexit()
}

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

// run runs c on a fresh recorder, on its own goroutine as testing does (so
// that Fatalf can end it), then the cleanups, and returns the recorder.
func run(c check) *recorder {
	r := &recorder{name: c.name}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.Errorf("panic: %v", p)
			}
		}()
		c.run(r)
	}()
	<-done
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return r
}

// TestSuitePassesCorrectStreams runs the suite on the fake with no flaws,
// both through TestStream and on a recorder.
func TestSuitePassesCorrectStreams(t *testing.T) {
	TestStream(t, fakeStreams(t, flaws{}))
	su := &suite{Streams: fakeStreams(t, flaws{}), guard: hangGuard}
	for _, c := range su.checks() {
		if r := run(c); r.failed {
			t.Errorf("%s failed on a correct stream:\n%s", c.name, strings.Join(r.msgs, "\n"))
		}
	}
}

// TestSuiteCatchesBrokenStreams proves the suite can fail: each broken fake
// fails the check of the promise it breaks. The guard is short here, since
// a broken stream is expected to run into it; a short guard can only make a
// check fail sooner.
func TestSuiteCatchesBrokenStreams(t *testing.T) {
	tests := []struct {
		name  string
		fl    flaws
		check string
	}{
		{"Next serves chunks after Close", flaws{servesAfterClose: true}, "CloseMidStream"},
		{"Next serves chunks after Close (before any Next)", flaws{servesAfterClose: true}, "CloseBeforeNext"},
		{"Next returns io.EOF after Close", flaws{servesAfterClose: true}, "CloseAfterEOF"},
		{"Close does not unblock Next", flaws{closeKeepsBlock: true}, "CloseUnblocksNext"},
		{"a blocked Next ignores its context", flaws{ignoresCtx: true}, "CancelUnblocksNext"},
		{"cancellation loses context.Canceled", flaws{cancelLosesCause: true}, "CancelUnblocksNext"},
		{"io.EOF is not sticky", flaws{eofRestarts: true}, "EOFIsSticky"},
		{"a failure is not sticky", flaws{failureForgotten: true}, "FailureIsSticky"},
		{"a second Close fails", flaws{closeTwiceFails: true}, "CloseTwice"},
		{"concurrent Closes fail", flaws{closeTwiceFails: true}, "CloseConcurrently"},
		{"goroutines outlive their streams", flaws{leaks: true}, "NoGoroutineLeak"},
		{"a chunk follows the finish chunk", flaws{afterFinish: true}, "Chunks"},
		{"a chunk does not encode", flaws{badChunk: true}, "Chunks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			su := &suite{Streams: fakeStreams(t, tt.fl), guard: 500 * time.Millisecond}
			i := slices.IndexFunc(su.checks(), func(c check) bool { return c.name == tt.check })
			if i < 0 {
				t.Fatalf("no check %q", tt.check)
			}
			r := run(su.checks()[i])
			if !r.failed {
				t.Fatalf("%s passed a stream whose flaw is: %s", tt.check, tt.name)
			}
			t.Logf("%s failed as it should:\n%s", tt.check, strings.Join(r.msgs, "\n"))
		})
	}
}

func TestCheckChunks(t *testing.T) {
	start := func(i int, typ string) llm.Chunk {
		return llm.Chunk{Type: llm.ChunkBlockStart, Index: i, BlockType: typ}
	}
	text := func(i int) llm.Chunk { return llm.Chunk{Type: llm.ChunkTextDelta, Index: i, Text: "t"} }
	end := func(i int, typ string) llm.Chunk {
		return llm.Chunk{Type: llm.ChunkBlockEnd, Index: i, Block: &llm.Block{Type: typ, Text: "t"}}
	}
	usage := llm.Chunk{Type: llm.ChunkUsage, Usage: &llm.Usage{}}
	finish := llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}}
	raw := llm.Chunk{Type: "x-new", Raw: []byte(`{"type":"x-new"}`)}
	tests := []struct {
		name   string
		chunks []llm.Chunk
		want   string // "" for valid
	}{
		{"well formed", response, ""},
		{"finish only", []llm.Chunk{finish}, ""},
		{"raw chunks anywhere before finish", []llm.Chunk{raw, start(0, llm.BlockText), raw, end(0, llm.BlockText), raw, finish}, ""},
		{"empty", nil, "no finish chunk"},
		{"no finish", []llm.Chunk{start(0, llm.BlockText), end(0, llm.BlockText)}, "no finish chunk"},
		{"chunk after finish", []llm.Chunk{finish, raw}, "chunk 1: x-new chunk after the finish chunk"},
		{"second finish", []llm.Chunk{finish, finish}, "chunk 1: finish chunk after the finish chunk"},
		{"does not encode", []llm.Chunk{{Type: llm.ChunkUsage}, finish}, "chunk 0: usage chunk does not encode"},
		{"invalid raw", []llm.Chunk{{Type: "x", Raw: []byte(`{`)}, finish}, "not valid JSON"},
		{"index skipped", []llm.Chunk{start(1, llm.BlockText)}, "chunk 0: block-start index 1, want 0"},
		{"no blockType", []llm.Chunk{start(0, "")}, "without blockType"},
		{"delta without start", []llm.Chunk{text(0)}, "chunk 0: text-delta for block 0, which has not started"},
		{"delta after end", []llm.Chunk{start(0, llm.BlockText), end(0, llm.BlockText), text(0)}, "chunk 2: text-delta for block 0, which has ended"},
		{"delta of the wrong type", []llm.Chunk{start(0, llm.BlockReasoning), text(0)}, "chunk 1: text-delta into the reasoning block 0"},
		{"end of the wrong type", []llm.Chunk{start(0, llm.BlockReasoning), end(0, llm.BlockText)}, "block-end with a text block closes the reasoning block 0"},
		{"ends out of order", []llm.Chunk{start(0, llm.BlockText), start(1, llm.BlockText), end(1, llm.BlockText), end(0, llm.BlockText)}, "chunk 3: block-end 0 after block-end 1"},
		{"end twice", []llm.Chunk{start(0, llm.BlockText), end(0, llm.BlockText), end(0, llm.BlockText)}, "which has ended"},
		{"usage while open", []llm.Chunk{start(0, llm.BlockText), usage}, "usage chunk while block 0 is open"},
		{"finish while open", []llm.Chunk{start(0, llm.BlockText), finish}, "finish chunk while block 0 is open"},
		{"two usages", []llm.Chunk{usage, usage, finish}, "a second usage chunk"},
		{"start after usage", []llm.Chunk{usage, start(0, llm.BlockText)}, "block-start 0 after the usage chunk"},
		{"finish without kind", []llm.Chunk{{Type: llm.ChunkFinish, Reason: &llm.FinishReason{}}}, "finish chunk without kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckChunks(tt.chunks)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckChunks = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("CheckChunks = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestParseGoroutine(t *testing.T) {
	g, ok := parseGoroutine("goroutine 18 [chan receive, 2 minutes]:\nmain.f()")
	if !ok || g.id != 18 || g.state != "chan receive" {
		t.Fatalf("parse = %+v, %v", g, ok)
	}
	if _, ok := parseGoroutine("created by main"); ok {
		t.Fatal("parsed a line that is no goroutine header")
	}
	if id := currentGoroutine(); id == 0 || goroutines()[id].state != "running" {
		t.Fatalf("the current goroutine %d is not running in the dump", id)
	}
	block := make(chan struct{})
	defer close(block)
	got := make(chan uint64)
	go func() { got <- currentGoroutine(); <-block }()
	id := <-got
	for !parked(id) {
		runtime.Gosched()
	}
}
