package jsonl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/internal/faultfile"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
)

// Fault injection: every operation a writer does to its log file (open for
// appending, write, fsync, truncate, close) is failed at every semantic
// checkpoint, through faultfile, and the log is then checked with the real
// backend. See "Failures" in the package doc for the behaviour pinned here.

const faultID = "fault"

// opWord is how the writer's errors name each operation.
var opWord = map[faultfile.Op]string{
	faultfile.OpOpen:     "open",
	faultfile.OpWrite:    "write",
	faultfile.OpSync:     "fsync",
	faultfile.OpTruncate: "truncate",
	faultfile.OpClose:    "close",
}

// faultRun is one scenario run against a store whose log file fails on
// demand.
type faultRun struct {
	t        *testing.T
	dir      string
	path     string
	compress bool
	opener   *faultfile.Opener
	st       *jsonl.Store
	w        sessionlog.Writer
	// written is every event handed to the writer, in order (for Open, the
	// stored log and the closers it commits); acked is the prefix that a
	// nil Sync, Close or Open acknowledged as durable.
	written, acked []sessionlog.Event
	closed         bool   // the scenario called Close
	before         []byte // the file before an Open scenario touched it
}

func newFaultRun(t *testing.T, compress bool, inj faultfile.Injector) *faultRun {
	t.Helper()
	dir := t.TempDir()
	ext := jsonl.ExtRaw
	if compress {
		ext = jsonl.ExtZstd
	}
	st, err := jsonl.Open(dir, jsonl.Options{Compress: compress})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r := &faultRun{t: t, dir: dir, path: filepath.Join(dir, faultID+ext), compress: compress,
		opener: &faultfile.Opener{Inj: inj}, st: st}
	jsonl.InjectFaults(st, r.opener)
	return r
}

// realStore opens dir with the real backend.
func realStore(t *testing.T, dir string, compress bool) *jsonl.Store {
	t.Helper()
	st, err := jsonl.Open(dir, jsonl.Options{Compress: compress})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func (r *faultRun) append(events []sessionlog.Event) error {
	if err := r.w.Append(context.Background(), events...); err != nil {
		return err
	}
	r.written = append(r.written, events...)
	return nil
}

func (r *faultRun) ack() { r.acked = r.written }

// scenario drives a writer through its checkpoints and returns the first
// error, recording what was written and acknowledged.
type scenario struct {
	name  string
	setup func(r *faultRun) // prepares the store with the real backend
	run   func(r *faultRun) error
}

// appendScenario creates a session, syncs two batches (a complete turn,
// then an unfinished one with a pending tool call) and closes after a
// third.
var appendScenario = scenario{name: "append", run: func(r *faultRun) error {
	ctx := context.Background()
	w, err := r.st.Create(ctx, sessionlog.NewHeader(faultID, 1, "/w"))
	if err != nil {
		return err
	}
	r.w = w
	b := sessionlogtest.NewBuilder(0)
	b.Turn(1, "one two three", sessionlog.ReasonInitial)
	batch1 := b.Take()
	b.TurnStart(2)
	b.StepStart(1)
	b.User("run it")
	call := sessionlogtest.Call{ID: "c2", Name: "bash", Arguments: `{"command":"true"}`}
	b.Assistant("running it now", call)
	cs := b.ToolCall(call)
	batch2 := b.Take()
	b.ToolResult(cs, call, "")
	b.StepEnd()
	b.TurnEnd(sessionlog.EndCompleted)
	batch3 := b.Take()
	for _, batch := range [][]sessionlog.Event{batch1, batch2} {
		if err := r.append(batch); err != nil {
			return err
		}
		if err := w.Sync(ctx); err != nil {
			return err
		}
		r.ack()
	}
	if err := r.append(batch3); err != nil {
		return err
	}
	r.closed = true
	if err := w.Close(); err != nil {
		return err
	}
	r.ack()
	return nil
}}

// openScenario opens a session whose log (one complete turn, one cut off
// after a tool call) ends in a torn record: Open truncates the tail and
// commits closers; then a turn is synced and the writer closed.
var openScenario = scenario{name: "open",
	setup: func(r *faultRun) {
		t := r.t
		ctx := context.Background()
		real := realStore(t, r.dir, r.compress)
		w, err := real.Create(ctx, sessionlog.NewHeader(faultID, 1, "/w"))
		must(t, err)
		b := sessionlogtest.NewBuilder(0)
		b.Turn(1, "one", sessionlog.ReasonInitial)
		b.TurnStart(2)
		b.StepStart(1)
		call := sessionlogtest.Call{ID: "c2", Name: "bash", Arguments: `{}`}
		b.Assistant("a b c d", call)
		b.ToolCall(call)
		stored := b.Take()
		must(t, w.Append(ctx, stored...))
		must(t, w.Close())
		torn := []byte(`{"type":"tool/result","seq":`)
		if r.compress {
			torn = frames(t, torn)[:9] // a frame cut short
		}
		f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND, 0)
		must(t, err)
		_, err = f.Write(torn)
		must(t, errors.Join(err, f.Close()))
		l, err := real.Inspect(ctx, faultID)
		must(t, err)
		if len(l.Closers) == 0 || l.DroppedRecords == 0 {
			t.Fatalf("setup: the log needs no repair (closers %d, dropped %d)", len(l.Closers), l.DroppedRecords)
		}
		r.acked = stored
		r.written = append(stored[:len(stored):len(stored)], l.Closers...)
		r.before, err = os.ReadFile(r.path)
		must(t, err)
	},
	run: func(r *faultRun) error {
		ctx := context.Background()
		l, w, err := r.st.Open(ctx, faultID)
		if err != nil {
			return err
		}
		r.w = w
		if got, want := encode(l.Closers), encode(r.written[len(r.acked):]); got != want {
			r.t.Fatalf("Open committed closers\n%s\nwant\n%s", got, want)
		}
		r.ack()
		b := sessionlogtest.NewBuilder(l.Log.Len())
		b.Turn(sessionlogtest.NextTurn(l.Log.Events()), "again", sessionlog.ReasonResume)
		if err := r.append(b.Take()); err != nil {
			return err
		}
		if err := w.Sync(ctx); err != nil {
			return err
		}
		r.ack()
		b.Turn(sessionlogtest.NextTurn(r.written), "last", "")
		if err := r.append(b.Take()); err != nil {
			return err
		}
		r.closed = true
		if err := w.Close(); err != nil {
			return err
		}
		r.ack()
		return nil
	}}

// fileWant is what the log file holds right after the fault, before any
// reopen.
type fileWant int

const (
	fileAny       fileWant = iota // whatever the sweep's generic checks allow
	fileAcked                     // exactly the acknowledged events, no torn tail
	fileAll                       // every written event, no torn tail
	fileTorn                      // a torn tail after whole records
	fileUnchanged                 // byte for byte what it was before Open
	fileMissing                   // no log file: Create failed and left nothing
)

func encode(events []sessionlog.Event) string {
	var b []byte
	for i := range events {
		b = events[i].AppendJSON(b)
		b = append(b, '\n')
	}
	return string(b)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// isPrefix reports whether got is a prefix of all.
func isPrefix(got, all []sessionlog.Event) bool {
	return len(got) <= len(all) && encode(got) == encode(all[:len(got)])
}

// runFault runs sc with inj and checks everything a fault must leave true.
// ops are the operations the first error must name (the failing one first).
func runFault(t *testing.T, sc scenario, compress bool, inj faultfile.Injector, ops []faultfile.Op, want fileWant) {
	t.Helper()
	r := newFaultRun(t, compress, inj)
	if sc.setup != nil {
		sc.setup(r)
	}
	err := sc.run(r)

	// The error names the file and the operation, and wraps the fault.
	if err == nil {
		t.Fatalf("%s: no error with a fault injected", sc.name)
	}
	if !errors.Is(err, faultfile.ErrInjected) {
		t.Fatalf("error does not wrap the injected fault: %v", err)
	}
	if !strings.Contains(err.Error(), r.path) {
		t.Fatalf("error does not name the file %s: %v", r.path, err)
	}
	for _, op := range ops {
		if !strings.Contains(err.Error(), opWord[op]) {
			t.Fatalf("error does not name the operation %q: %v", opWord[op], err)
		}
	}

	// A failed writer refuses further work and writes nothing more.
	checkRefuses(t, r)

	// What the file holds right after the fault.
	checkFile(t, r, want)

	// The log as a power cut would leave it: only what fsync covered.
	if durable, ok := r.opener.Durable(r.path); ok {
		data, err := os.ReadFile(r.path)
		must(t, err)
		if durable > int64(len(data)) {
			t.Fatalf("the fault model says %d bytes are durable, the file has %d", durable, len(data))
		}
		crashDir := t.TempDir()
		must(t, os.WriteFile(filepath.Join(crashDir, filepath.Base(r.path)), data[:durable], 0o600))
		t.Run("after a crash", func(t *testing.T) { checkReopens(t, crashDir, filepath.Join(crashDir, filepath.Base(r.path)), r) })
	}
	// The log as the process finds it when it reopens the session.
	checkReopens(t, r.dir, r.path, r)
}

// checkRefuses checks that after the fault the writer accepts nothing and
// leaves the file alone, and that Close reports the failure.
func checkRefuses(t *testing.T, r *faultRun) {
	t.Helper()
	if r.w == nil {
		return // Create or Open failed: there is no writer
	}
	ctx := context.Background()
	// A writer whose first checkpoint failed has no file, and makes none.
	before, err := os.ReadFile(r.path)
	if !errors.Is(err, fs.ErrNotExist) {
		must(t, err)
	}
	more := sessionlogtest.NewBuilder(len(r.written))
	more.TurnStart(99)
	if r.closed {
		if err := r.w.Append(ctx, more.Take()...); err == nil {
			t.Fatal("Append after Close succeeded")
		}
	} else {
		if err := r.w.Append(ctx, more.Take()...); !errors.Is(err, faultfile.ErrInjected) {
			t.Fatalf("Append after a failed Sync: got %v, want the earlier failure", err)
		}
		if err := r.w.Sync(ctx); !errors.Is(err, faultfile.ErrInjected) {
			t.Fatalf("Sync after a failed Sync: got %v, want the earlier failure", err)
		}
		if err := r.w.Close(); !errors.Is(err, faultfile.ErrInjected) {
			t.Fatalf("Close after a failed Sync: got %v, want the earlier failure", err)
		}
	}
	if err := r.w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	after, err := os.ReadFile(r.path)
	if !errors.Is(err, fs.ErrNotExist) {
		must(t, err)
	}
	if !bytes.Equal(before, after) || (before == nil) != (after == nil) {
		t.Fatalf("a failed writer changed its file: %d bytes, then %d", len(before), len(after))
	}
}

func checkFile(t *testing.T, r *faultRun, want fileWant) {
	t.Helper()
	if want == fileMissing {
		if len(r.acked) != 0 {
			t.Fatalf("no log file is expected, but %d events were acknowledged", len(r.acked))
		}
		for _, ext := range []string{jsonl.ExtRaw, jsonl.ExtZstd} {
			if _, err := os.Stat(filepath.Join(r.dir, faultID+ext)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a failed Create left %s%s behind (%v)", faultID, ext, err)
			}
		}
		return
	}
	if want == fileUnchanged {
		data, err := os.ReadFile(r.path)
		must(t, err)
		if !bytes.Equal(data, r.before) {
			t.Fatalf("a failed Open changed the file: %d bytes, was %d", len(data), len(r.before))
		}
		return
	}
	if _, err := os.Stat(r.path); want == fileAny && errors.Is(err, fs.ErrNotExist) {
		return // checkReopens checks that a missing log lost nothing
	}
	d, err := jsonl.ReadFile(r.path)
	if err != nil {
		t.Fatalf("the log does not read after the fault: %v", err)
	}
	switch want {
	case fileAcked:
		if d.Torn != nil || encode(d.Events) != encode(r.acked) {
			t.Fatalf("file holds %d events (torn %+v), want exactly the %d acknowledged", len(d.Events), d.Torn, len(r.acked))
		}
	case fileAll:
		if d.Torn != nil || encode(d.Events) != encode(r.written) {
			t.Fatalf("file holds %d events (torn %+v), want all %d written", len(d.Events), d.Torn, len(r.written))
		}
	case fileTorn:
		if d.Torn == nil {
			t.Fatalf("file holds %d events and no torn tail, want a partial record at its end", len(d.Events))
		}
	}
}

// checkReopens checks the log at path with the real backend: it reads
// without corruption, keeps every acknowledged event, holds nothing but a
// prefix of what was written, opens (repairing once), takes a new turn and
// then reads back with no torn record anywhere.
func checkReopens(t *testing.T, dir, path string, r *faultRun) {
	t.Helper()
	ctx := context.Background()
	st := realStore(t, dir, r.compress)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if len(r.acked) != 0 {
			t.Fatalf("the log is gone, but %d events were acknowledged", len(r.acked))
		}
		for info, err := range st.List(ctx) {
			t.Fatalf("a store without a log lists %+v (%v)", info, err)
		}
		w, err := st.Create(ctx, sessionlog.NewHeader(faultID, 1, "/w"))
		if err != nil {
			t.Fatalf("Create after a failed Create: %v", err)
		}
		must(t, w.Close())
		return
	}
	d, err := jsonl.ReadFile(path)
	if err != nil {
		t.Fatalf("the log does not read: %v", err)
	}
	if !isPrefix(r.acked, d.Events) {
		t.Fatalf("acknowledged events were lost: the log holds %d events, %d were acknowledged", len(d.Events), len(r.acked))
	}
	if !isPrefix(d.Events, r.written) {
		t.Fatalf("the log holds %d events that are not a prefix of the %d written", len(d.Events), len(r.written))
	}
	l, w, err := st.Open(ctx, faultID)
	if err != nil {
		t.Fatalf("reopen after the fault: %v", err)
	}
	if got := l.Log.Events()[:l.Log.Len()-len(l.Closers)]; encode(got) != encode(d.Events) {
		t.Fatalf("Open loaded %d stored events, ReadFile %d", len(got), len(d.Events))
	}
	b := sessionlogtest.NewBuilder(l.Log.Len())
	b.Turn(sessionlogtest.NextTurn(l.Log.Events()), "after the fault", sessionlog.ReasonResume)
	more := b.Take()
	must(t, w.Append(ctx, more...))
	must(t, w.Close())
	d2, l2, err := jsonl.ReadValid(path)
	if err != nil {
		t.Fatalf("the log is invalid after reopening: %v", err)
	}
	if d2.Torn != nil {
		t.Fatalf("a torn record is left in the log: %+v", d2.Torn)
	}
	if want := l.Log.Len() + len(more); l2.Len() != want {
		t.Fatalf("the log holds %d events, want %d", l2.Len(), want)
	}
	again, err := st.Inspect(ctx, faultID)
	must(t, err)
	if len(again.Closers) != 0 || again.DroppedRecords != 0 {
		t.Fatalf("the log needs repair again: %d closers, %d dropped", len(again.Closers), again.DroppedRecords)
	}
}

// TestWriterFaults fails each operation of the writer at each checkpoint
// and pins what the error says and what the file holds afterwards.
func TestWriterFaults(t *testing.T) {
	nth := faultfile.Nth
	write, sync, trunc, opn, cls := faultfile.OpWrite, faultfile.OpSync, faultfile.OpTruncate, faultfile.OpOpen, faultfile.OpClose
	for _, tc := range []struct {
		name string
		sc   scenario
		inj  func() faultfile.Injector
		ops  []faultfile.Op
		file fileWant
	}{
		// The first checkpoint makes the file (header and first batch, by
		// storage.WriteAtomic); the writer's own operations start with
		// opening it for appending.
		{"create: open for appending fails", appendScenario, func() faultfile.Injector { return nth(opn, 1) }, []faultfile.Op{opn}, fileMissing},
		{"checkpoint: write fails", appendScenario, func() faultfile.Injector { return nth(write, 1) }, []faultfile.Op{write}, fileAcked},
		{"checkpoint: torn write is cut back", appendScenario, func() faultfile.Injector { return faultfile.Torn(nth(write, 1)) }, []faultfile.Op{write}, fileAcked},
		{"checkpoint: torn write, cutting it back fails", appendScenario, func() faultfile.Injector {
			return faultfile.Any(faultfile.Torn(nth(write, 1)), nth(trunc, 1))
		}, []faultfile.Op{write, trunc}, fileTorn},
		{"checkpoint: disk refuses every write", appendScenario, func() faultfile.Injector {
			return faultfile.Every(func(op faultfile.Op, _ string) bool { return op == write || op == trunc })
		}, []faultfile.Op{write, trunc}, fileAcked},
		{"checkpoint: fsync fails", appendScenario, func() faultfile.Injector { return nth(sync, 1) }, []faultfile.Op{sync}, fileAll},
		{"close: final write fails", appendScenario, func() faultfile.Injector { return nth(write, 2) }, []faultfile.Op{write}, fileAcked},
		{"close: final fsync fails", appendScenario, func() faultfile.Injector { return nth(sync, 2) }, []faultfile.Op{sync}, fileAll},
		{"close: closing the file fails", appendScenario, func() faultfile.Injector { return nth(cls, 1) }, []faultfile.Op{cls}, fileAll},
		{"open: open for appending fails", openScenario, func() faultfile.Injector { return nth(opn, 1) }, []faultfile.Op{opn}, fileUnchanged},
		{"open: truncating the torn tail fails", openScenario, func() faultfile.Injector { return nth(trunc, 1) }, []faultfile.Op{trunc}, fileUnchanged},
		{"open: writing the closers fails", openScenario, func() faultfile.Injector { return nth(write, 1) }, []faultfile.Op{write}, fileAcked},
		{"open: torn closers, cutting them back fails", openScenario, func() faultfile.Injector {
			return faultfile.Any(faultfile.Torn(nth(write, 1)), nth(trunc, 2))
		}, []faultfile.Op{write, trunc}, fileTorn},
		{"open: fsync of the closers fails", openScenario, func() faultfile.Injector { return nth(sync, 1) }, []faultfile.Op{sync}, fileAll},
		{"open: closing after a failed repair fails", openScenario, func() faultfile.Injector {
			return faultfile.Any(nth(write, 1), nth(cls, 1))
		}, []faultfile.Op{write, cls}, fileAcked},
		{"open, then checkpoint: fsync fails", openScenario, func() faultfile.Injector { return nth(sync, 2) }, []faultfile.Op{sync}, fileAll},
	} {
		for _, compress := range []bool{false, true} {
			name := tc.name
			if compress {
				name += " (zstd)"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runFault(t, tc.sc, compress, tc.inj(), tc.ops, tc.file)
			})
		}
	}
}

// TestWriterFaultSweep counts the operations each scenario does, then
// fails each one in turn (writes also torn), with the generic checks of
// runFault: no scenario step that touches the file is left untested.
func TestWriterFaultSweep(t *testing.T) {
	for _, sc := range []scenario{appendScenario, openScenario} {
		for _, compress := range []bool{false, true} {
			var c faultfile.Counter
			r := newFaultRun(t, compress, &c)
			if sc.setup != nil {
				sc.setup(r)
			}
			if err := sc.run(r); err != nil {
				t.Fatalf("%s without faults: %v", sc.name, err)
			}
			total := 0
			for _, op := range faultfile.Ops {
				for n := 1; n <= c.Count(op); n++ {
					total++
					name := fmt.Sprintf("%s/zstd=%t/%s#%d", sc.name, compress, op, n)
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						runFault(t, sc, compress, faultfile.Nth(op, n), []faultfile.Op{op}, fileAny)
					})
					if op == faultfile.OpWrite {
						t.Run(name+"/torn", func(t *testing.T) {
							t.Parallel()
							runFault(t, sc, compress, faultfile.Torn(faultfile.Nth(op, n)), []faultfile.Op{op}, fileAny)
						})
					}
				}
			}
			if total < 6 {
				t.Fatalf("%s (zstd=%t) did only %d file operations", sc.name, compress, total)
			}
		}
	}
}
