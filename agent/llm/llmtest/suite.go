package llmtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm"
)

// Opener opens a fresh stream in ctx for one check. t is the check's test
// (a testing.TB so that the suite can run on a recorder in its own tests);
// an opener that cannot open a stream calls t.Fatal. The suite closes
// every stream it opens and cancels ctx when the check ends.
type Opener func(t testing.TB, ctx context.Context) llm.Stream

// Streams tells [TestStream] how to open the streams it checks. Every check
// opens its own, so each opener must return a fresh, independent stream on
// every call.
type Streams struct {
	// Open returns a stream that delivers a complete, well-formed response
	// (see [CheckChunks]) and then io.EOF, without waiting on anything the
	// test does not control. Required.
	Open Opener
	// Hang returns a stream that delivers zero or more chunks, no finish
	// chunk among them, and then blocks in Next until it is closed or its
	// context is done. Nil skips the checks of a blocked Next.
	Hang Opener
	// Fail returns a stream that delivers zero or more chunks, no finish
	// chunk among them, and then fails: Next returns an error other than
	// io.EOF. Nil skips the check of a sticky failure.
	Fail Opener
	// Settle, if set, is called before goroutines are counted for the leak
	// check, to let go of what the implementation keeps on purpose between
	// streams, such as idle HTTP connections
	// ((*http.Client).CloseIdleConnections).
	Settle func()
}

// hangGuard bounds every wait of the suite: a Next that should return, a
// goroutine that should end. It only turns a hang into a failure; nothing
// is expected to come close to it.
const hangGuard = 30 * time.Second

// maxChunks bounds the chunks the suite reads from one stream, so that a
// stream that never ends fails instead of running forever.
const maxChunks = 1 << 20

// TestStream checks the [llm.Stream] contract on the streams s opens, each
// check in its own subtest:
//
//   - Chunks: the response is well formed ([CheckChunks]) and ends with
//     io.EOF;
//   - EOFIsSticky: Next keeps returning io.EOF after it;
//   - CloseBeforeNext, CloseMidStream, CloseAfterEOF: once Close has been
//     called, Next returns an error wrapping [llm.ErrClosed], however far
//     the stream had got;
//   - CloseTwice, CloseConcurrently: Close is idempotent and safe to call
//     from several goroutines at once, returning nil;
//   - CloseWhileReading: Close while another goroutine reads ends the reads
//     with io.EOF or llm.ErrClosed;
//   - CloseUnblocksNext, CancelUnblocksNext (with Hang): a Next blocked on a
//     hanging stream returns once the stream is closed (with llm.ErrClosed),
//     or once its context is cancelled (with an error for which
//     errors.Is(err, context.Canceled) holds, again on later calls);
//   - FailureIsSticky (with Fail): after a failure Next keeps returning it;
//   - NoGoroutineLeak: after reading, closing, hanging and cancelling
//     streams, no goroutine they started is left once the streams are
//     closed.
//
// Chunks received along the way are checked too: each encodes, and none
// follows a finish chunk. A Next that should return but does not fails its
// check after a generous guard time instead of hanging the test binary.
//
// The leak check counts the goroutines of the whole process, so TestStream
// must not run in parallel with other tests (do not call t.Parallel before
// it), and idle connections kept for reuse count unless Settle closes them.
func TestStream(t *testing.T, s Streams) {
	t.Helper()
	if s.Open == nil {
		t.Fatal("llmtest: Streams.Open is nil")
	}
	su := &suite{Streams: s, guard: hangGuard}
	for _, c := range su.checks() {
		t.Run(c.name, func(t *testing.T) {
			if c.needs != "" && su.opener(c.needs) == nil {
				t.Skipf("llmtest: Streams.%s is nil", c.needs)
			}
			c.run(t)
		})
	}
}

// suite holds the streams under test and the guard time of every wait.
type suite struct {
	Streams
	guard time.Duration
}

// check is one named check; needs names the opener it requires besides
// Open ("Hang", "Fail"), if any.
type check struct {
	name  string
	needs string
	run   func(t testing.TB)
}

func (su *suite) checks() []check {
	return []check{
		{"Chunks", "", su.chunks},
		{"EOFIsSticky", "", su.eofIsSticky},
		{"CloseBeforeNext", "", su.closeBeforeNext},
		{"CloseMidStream", "", su.closeMidStream},
		{"CloseAfterEOF", "", su.closeAfterEOF},
		{"CloseTwice", "", su.closeTwice},
		{"CloseConcurrently", "", su.closeConcurrently},
		{"CloseWhileReading", "", su.closeWhileReading},
		{"CloseUnblocksNext", "Hang", su.closeUnblocksNext},
		{"CancelUnblocksNext", "Hang", su.cancelUnblocksNext},
		{"FailureIsSticky", "Fail", su.failureIsSticky},
		{"NoGoroutineLeak", "", su.noGoroutineLeak},
	}
}

func (su *suite) opener(name string) Opener {
	switch name {
	case "Hang":
		return su.Hang
	case "Fail":
		return su.Fail
	}
	return su.Open
}

// open opens a stream with its own context; the stream is closed and the
// context cancelled when the check ends.
func (su *suite) open(t testing.TB, name string) (llm.Stream, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st := su.opener(name)(t, ctx)
	if st == nil {
		cancel()
		t.Fatalf("llmtest: Streams.%s returned a nil stream", name)
	}
	t.Cleanup(func() {
		_ = st.Close()
		cancel()
	})
	return st, cancel
}

// result is what one Next call returned.
type result struct {
	c   llm.Chunk
	err error
}

// start calls Next on its own goroutine and returns the channel its result
// arrives on and the goroutine's id.
func start(st llm.Stream) (<-chan result, uint64) {
	ch := make(chan result, 1)
	id := make(chan uint64, 1)
	go func() {
		id <- currentGoroutine()
		c, err := st.Next()
		ch <- result{c, err}
	}()
	return ch, <-id
}

// wait waits for a Next started with start, failing t after the guard time.
func (su *suite) wait(t testing.TB, ch <-chan result, what string) (llm.Chunk, error) {
	t.Helper()
	timer := time.NewTimer(su.guard)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-timer.C:
		t.Fatalf("%s: Next did not return within %v", what, su.guard)
		return llm.Chunk{}, nil
	}
}

// next calls Next once, failing t if it does not return.
func (su *suite) next(t testing.TB, st llm.Stream, what string) (llm.Chunk, error) {
	t.Helper()
	ch, _ := start(st)
	return su.wait(t, ch, what)
}

// close calls Close, failing t if it does not return or returns an error.
func (su *suite) close(t testing.TB, st llm.Stream, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- st.Close() }()
	timer := time.NewTimer(su.guard)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: Close = %v, want nil", what, err)
		}
	case <-timer.C:
		t.Fatalf("%s: Close did not return within %v", what, su.guard)
	}
}

// readAll reads st until Next returns an error, checking the order of the
// chunks as they come. It returns the chunks and that error.
func (su *suite) readAll(t testing.TB, st llm.Stream) ([]llm.Chunk, error) {
	t.Helper()
	var chunks []llm.Chunk
	for len(chunks) < maxChunks {
		c, err := su.next(t, st, fmt.Sprintf("reading chunk %d", len(chunks)))
		if err != nil {
			return chunks, err
		}
		chunks = append(chunks, c)
	}
	t.Fatalf("the stream did not end after %d chunks", maxChunks)
	return nil, nil
}

// readToEOF reads a complete response and fails t unless it ends with
// io.EOF after well-formed chunks.
func (su *suite) readToEOF(t testing.TB, st llm.Stream) []llm.Chunk {
	t.Helper()
	chunks, err := su.readAll(t, st)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("Open: the stream ended with %v after %d chunks, want io.EOF", err, len(chunks))
	}
	if err := CheckChunks(chunks); err != nil {
		t.Errorf("Open: %v\nchunks:\n%s", err, encodeAll(chunks))
	}
	return chunks
}

// wantClosed fails t unless err wraps llm.ErrClosed; c is the chunk Next
// returned with err.
func wantClosed(t testing.TB, c llm.Chunk, err error, what string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: Next returned the chunk %s, want an error wrapping llm.ErrClosed", what, encode(c))
	case !errors.Is(err, llm.ErrClosed):
		t.Errorf("%s: Next = %v, want an error wrapping llm.ErrClosed", what, err)
	}
}

func (su *suite) chunks(t testing.TB) {
	st, _ := su.open(t, "Open")
	su.readToEOF(t, st)
}

func (su *suite) eofIsSticky(t testing.TB) {
	st, _ := su.open(t, "Open")
	su.readToEOF(t, st)
	for i := range 3 {
		c, err := su.next(t, st, "after io.EOF")
		if !errors.Is(err, io.EOF) {
			t.Fatalf("Next %d after io.EOF = %s, %v; want io.EOF again", i+1, encode(c), err)
		}
	}
}

func (su *suite) closeBeforeNext(t testing.TB) {
	st, _ := su.open(t, "Open")
	su.close(t, st, "before any Next")
	for i := range 2 {
		c, err := su.next(t, st, "after Close")
		wantClosed(t, c, err, fmt.Sprintf("call %d after Close before any Next", i+1))
	}
}

func (su *suite) closeMidStream(t testing.TB) {
	st, _ := su.open(t, "Open")
	c, err := su.next(t, st, "first chunk")
	if err != nil {
		t.Fatalf("Open: the first Next = %v, want a chunk", err)
	}
	su.close(t, st, "after the first chunk")
	for i := range 2 {
		c2, err := su.next(t, st, "after Close")
		wantClosed(t, c2, err, fmt.Sprintf("call %d after Close after the first chunk %s", i+1, encode(c)))
	}
}

func (su *suite) closeAfterEOF(t testing.TB) {
	st, _ := su.open(t, "Open")
	su.readToEOF(t, st)
	su.close(t, st, "after io.EOF")
	c, err := su.next(t, st, "after io.EOF and Close")
	wantClosed(t, c, err, "after io.EOF and Close")
}

func (su *suite) closeTwice(t testing.TB) {
	st, _ := su.open(t, "Open")
	su.close(t, st, "first Close, before any Next")
	su.close(t, st, "second Close")
	st, _ = su.open(t, "Open")
	su.readToEOF(t, st)
	su.close(t, st, "first Close, after io.EOF")
	su.close(t, st, "second Close, after io.EOF")
	c, err := su.next(t, st, "after two Closes")
	wantClosed(t, c, err, "after two Closes")
}

func (su *suite) closeConcurrently(t testing.TB) {
	st, _ := su.open(t, "Open")
	if _, err := su.next(t, st, "first chunk"); err != nil {
		t.Fatalf("Open: the first Next = %v, want a chunk", err)
	}
	const n = 8
	var wg sync.WaitGroup
	gate := make(chan struct{})
	errs := make(chan string, n)
	for range n {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs <- fmt.Sprintf("Close panicked: %v", p)
				}
			}()
			<-gate
			if err := st.Close(); err != nil {
				errs <- fmt.Sprintf("Close = %v, want nil", err)
			}
		})
	}
	close(gate)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	timer := time.NewTimer(su.guard)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatalf("%d concurrent Closes did not return within %v", n, su.guard)
	}
	close(errs)
	for e := range errs {
		t.Errorf("concurrent Close: %s", e)
	}
	c, err := su.next(t, st, "after concurrent Closes")
	wantClosed(t, c, err, "after concurrent Closes")
}

func (su *suite) closeWhileReading(t testing.TB) {
	st, _ := su.open(t, "Open")
	first := make(chan struct{})
	end := make(chan error, 1)
	var got []llm.Chunk
	go func() {
		for i := 0; ; i++ {
			c, err := st.Next()
			if err != nil {
				end <- err
				return
			}
			got = append(got, c)
			if i == 0 {
				close(first)
			}
		}
	}()
	timer := time.NewTimer(su.guard)
	defer timer.Stop()
	var err error
	ended := false
	select {
	case <-first:
	case err = <-end:
		// A short stream may be read to its end before this select runs;
		// that is fine when it served a chunk first.
		select {
		case <-first:
			ended = true
		default:
			t.Fatalf("Open: the first Next = %v, want a chunk", err)
		}
	case <-timer.C:
		t.Fatalf("Open: the first Next did not return within %v", su.guard)
	}
	su.close(t, st, "while another goroutine reads")
	if !ended {
		select {
		case err = <-end:
		case <-timer.C:
			t.Fatalf("a Next running while Close was called did not return within %v", su.guard)
		}
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, llm.ErrClosed) {
		t.Errorf("reads interrupted by Close ended with %v, want io.EOF or llm.ErrClosed", err)
	}
	var o order
	for i, c := range got {
		if err := o.add(c); err != nil {
			t.Errorf("reads interrupted by Close: chunk %d: %v", i, err)
		}
	}
	c, err := su.next(t, st, "after Close while reading")
	wantClosed(t, c, err, "after Close while reading")
}

// untilBlocked reads a hanging stream until a Next call blocks: its
// goroutine is parked inside Next. It returns the channel that call's result
// will arrive on. Chunks received on the way are checked for order; the
// stream must neither finish nor fail.
func (su *suite) untilBlocked(t testing.TB, st llm.Stream) <-chan result {
	t.Helper()
	var o order
	for n := 0; n < maxChunks; n++ {
		ch, id := start(st)
		deadline := time.Now().Add(su.guard)
		for {
			select {
			case r := <-ch:
				if r.err != nil {
					t.Fatalf("Hang: Next returned %v after %d chunks instead of blocking", r.err, n)
				}
				if err := o.add(r.c); err != nil {
					t.Fatalf("Hang: chunk %d: %v", n, err)
				}
				if o.finished {
					t.Fatalf("Hang: chunk %d is a finish chunk; a hanging stream must not finish", n)
				}
			default:
				if parked(id) {
					return ch
				}
				if time.Now().After(deadline) {
					t.Fatalf("Hang: Next %d neither returned nor blocked within %v", n, su.guard)
				}
				time.Sleep(time.Millisecond) // poll; not a threshold
				continue
			}
			break
		}
	}
	t.Fatalf("Hang: the stream did not block within %d chunks", maxChunks)
	return nil
}

func (su *suite) closeUnblocksNext(t testing.TB) {
	st, _ := su.open(t, "Hang")
	ch := su.untilBlocked(t, st)
	su.close(t, st, "while Next is blocked")
	c, err := su.wait(t, ch, "blocked when Close was called")
	if err == nil {
		// The chunk was already arriving; the next call starts after Close.
		if c.Type == llm.ChunkFinish {
			t.Errorf("Hang: the stream sent a finish chunk")
		}
		c, err = su.next(t, st, "after Close")
	}
	wantClosed(t, c, err, "blocked when Close was called")
	c, err = su.next(t, st, "again after Close")
	wantClosed(t, c, err, "again after Close")
}

func (su *suite) cancelUnblocksNext(t testing.TB) {
	st, cancel := su.open(t, "Hang")
	ch := su.untilBlocked(t, st)
	cancel()
	c, err := su.wait(t, ch, "blocked when the context was cancelled")
	// A Next that need not block may still return chunks already received.
	for n := 0; err == nil && n < maxChunks; n++ {
		if c.Type == llm.ChunkFinish {
			t.Fatalf("Hang: the stream sent a finish chunk")
		}
		c, err = su.next(t, st, "after the context was cancelled")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after the context was cancelled = %v, want an error for which errors.Is(err, context.Canceled)", err)
	}
	_, again := su.next(t, st, "again after the context was cancelled")
	if !errors.Is(again, context.Canceled) {
		t.Errorf("Next again after the context was cancelled = %v, want it to fail with context.Canceled again", again)
	}
	su.close(t, st, "after the context was cancelled")
	c, err = su.next(t, st, "after cancel and Close")
	wantClosed(t, c, err, "after cancel and Close")
}

func (su *suite) failureIsSticky(t testing.TB) {
	st, _ := su.open(t, "Fail")
	chunks, err := su.readAll(t, st)
	if errors.Is(err, io.EOF) {
		t.Fatalf("Fail: the stream ended with io.EOF after %d chunks, want a failure", len(chunks))
	}
	var o order
	for i, c := range chunks {
		if err := o.add(c); err != nil {
			t.Errorf("Fail: chunk %d: %v", i, err)
		}
	}
	if o.finished {
		t.Errorf("Fail: the stream sent a finish chunk before failing")
	}
	for i := range 2 {
		c, again := su.next(t, st, "after the failure")
		if again == nil || again.Error() != err.Error() {
			t.Fatalf("Next %d after the failure %q = %s, %v; want the same failure", i+1, err, encode(c), again)
		}
	}
	su.close(t, st, "after the failure")
	c, err := su.next(t, st, "after the failure and Close")
	wantClosed(t, c, err, "after the failure and Close")
}

// scenario uses streams in every way the contract allows, closing each.
func (su *suite) scenario(t testing.TB) {
	t.Helper()
	st, _ := su.open(t, "Open")
	su.readToEOF(t, st)
	su.close(t, st, "leak scenario: after io.EOF")

	st, _ = su.open(t, "Open")
	su.close(t, st, "leak scenario: before any Next")

	st, _ = su.open(t, "Open")
	if _, err := su.next(t, st, "leak scenario: first chunk"); err != nil {
		t.Fatalf("Open: the first Next = %v, want a chunk", err)
	}
	su.close(t, st, "leak scenario: mid-stream")

	if su.Hang != nil {
		st, _ = su.open(t, "Hang")
		ch := su.untilBlocked(t, st)
		su.close(t, st, "leak scenario: while Next is blocked")
		su.wait(t, ch, "leak scenario: blocked when Close was called")

		st, cancel := su.open(t, "Hang")
		ch = su.untilBlocked(t, st)
		cancel()
		su.wait(t, ch, "leak scenario: blocked when the context was cancelled")
		su.close(t, st, "leak scenario: after cancel")
	}
	if su.Fail != nil {
		st, _ = su.open(t, "Fail")
		su.readAll(t, st)
		su.close(t, st, "leak scenario: after the failure")
	}
}

func (su *suite) noGoroutineLeak(t testing.TB) {
	su.scenario(t) // warm up: start what starts once per process
	if su.Settle != nil {
		su.Settle()
	}
	before := goroutines()
	self := currentGoroutine()
	su.scenario(t)
	deadline := time.Now().Add(su.guard)
	for {
		if su.Settle != nil {
			su.Settle()
		}
		var leaked []goroutine
		for id, g := range goroutines() {
			if _, ok := before[id]; !ok && id != self {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return
		}
		if time.Now().After(deadline) {
			slices.SortFunc(leaked, func(a, b goroutine) int { return cmp.Compare(a.id, b.id) })
			var b strings.Builder
			for _, g := range leaked {
				b.WriteString(g.stack)
				b.WriteString("\n\n")
			}
			t.Errorf("%d goroutines started while streams were used are still running %v after every stream was closed:\n%s",
				len(leaked), su.guard, b.String())
			return
		}
		time.Sleep(time.Millisecond) // poll; not a threshold
	}
}

// encode is c's JSON, or a description of why it has none.
func encode(c llm.Chunk) string {
	b, err := c.AppendJSON(nil)
	if err != nil {
		return fmt.Sprintf("<%s chunk: %v>", c.Type, err)
	}
	return string(b)
}

func encodeAll(chunks []llm.Chunk) string {
	var b strings.Builder
	for i, c := range chunks {
		fmt.Fprintf(&b, "%d\t%s\n", i, encode(c))
	}
	return b.String()
}
