package sessionlogtest_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
)

const brokenEnv = "REEL_SESSIONLOGTEST_BROKEN"

func openJSONL(dir string) (sessionlog.Store, error) { return jsonl.Open(dir, jsonl.Options{}) }

func TestMain(m *testing.M) {
	sessionlogtest.RunCrashChild(map[string]sessionlogtest.Opener{"jsonl": openJSONL})
	os.Exit(m.Run())
}

func backend(wrap func(*jsonl.Store) sessionlog.Store) sessionlogtest.Backend {
	return sessionlogtest.Backend{
		Open: func(t *testing.T, dir string) sessionlog.Store {
			st, err := jsonl.Open(dir, jsonl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return wrap(st)
		},
		Garble: func(t *testing.T, dir, id string) {
			p := filepath.Join(dir, id+jsonl.ExtRaw)
			d, err := jsonl.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			body := "garbage\n{\"type\":\"turn/end\",\"seq\":1,\"time\":1,\"data\":{\"turn\":1,\"reason\":{\"kind\":\"completed\"}}}\n"
			if err := os.WriteFile(p, append(append(d.Header.Raw, '\n'), body...), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestStoreOnJSONL(t *testing.T) {
	sessionlogtest.TestStore(t, backend(func(s *jsonl.Store) sessionlog.Store { return s }))
}

func TestStoreWithoutGarble(t *testing.T) {
	b := backend(func(s *jsonl.Store) sessionlog.Store { return s })
	b.Garble = nil
	t.Run("ListLazy", func(t *testing.T) { sessionlogtest.TestStore(t, b) })
}

func TestCrashOnJSONL(t *testing.T) {
	t.Setenv(sessionlogtest.CrashSeedEnv, "20260101") // a fixed seed here; the backends' own runs are random
	sessionlogtest.TestCrash(t, "jsonl", openJSONL)
}

func TestBuilderMakesValidLogs(t *testing.T) {
	b := sessionlogtest.NewBuilder(0)
	b.Turn(1, "a b c", sessionlog.ReasonInitial)
	b.Turn(2, "", "")
	b.TurnStart(3)
	b.StepStart(1)
	b.Assistant("")
	b.Chunk(2, "x")
	b.StepEnd()
	b.TurnEnd(sessionlog.EndAborted)
	events := b.Take()
	if b.Next() != len(events) || b.Take() != nil {
		t.Fatalf("Next %d, %d events", b.Next(), len(events))
	}
	l, err := sessionlog.Seed(sessionlog.NewHeader("b", 1, ""), events)
	if err != nil {
		t.Fatal(err)
	}
	if c := sessionlog.Repair(l.Events()); c != nil {
		t.Fatalf("balanced builder log needs closers: %v", c)
	}
	if n := sessionlogtest.NextTurn(events); n != 4 {
		t.Fatalf("NextTurn = %d", n)
	}
	if n := sessionlogtest.NextTurn(nil); n != 1 {
		t.Fatalf("NextTurn(nil) = %d", n)
	}
	for i := 1; i < len(events); i++ {
		if events[i].Time <= events[i-1].Time {
			t.Fatalf("times not increasing at seq %d", i)
		}
	}
}

// Broken backends: each breaks one promise of the contract.

type inspectCommits struct{ *jsonl.Store }

// Inspect commits repairs: it must not.
func (s inspectCommits) Inspect(ctx context.Context, id string) (*sessionlog.Loaded, error) {
	l, w, err := s.Store.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return l, w.Close()
}

type openSkipsRepair struct{ *jsonl.Store }

// Open hands out the session without committing its closers.
func (s openSkipsRepair) Open(ctx context.Context, id string) (*sessionlog.Loaded, sessionlog.Writer, error) {
	l, err := s.Store.Inspect(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	_, w, err := s.Store.Open(ctx, "no-such-session")
	return l, w, err
}

type createOverwrites struct{ *jsonl.Store }

// Create replaces an existing session: it must refuse.
func (s createOverwrites) Create(ctx context.Context, h sessionlog.Header) (sessionlog.Writer, error) {
	_ = os.Remove(filepath.Join(s.Dir(), h.ID+jsonl.ExtRaw))
	return s.Store.Create(ctx, h)
}

type createNormalizes struct{ *jsonl.Store }

// Create rewrites any header into a valid one instead of refusing it.
func (s createNormalizes) Create(ctx context.Context, h sessionlog.Header) (sessionlog.Writer, error) {
	id := strings.ReplaceAll(h.ID, "/", "_")
	if id == "" {
		id = "empty"
	}
	return s.Store.Create(ctx, sessionlog.NewHeader(id, h.CreatedAt, h.Cwd))
}

type badIDIsHeader struct{ *jsonl.Store }

// Open reports a bad id as a bad header, as reel did before ErrBadID.
func (s badIDIsHeader) Open(ctx context.Context, id string) (*sessionlog.Loaded, sessionlog.Writer, error) {
	l, w, err := s.Store.Open(ctx, id)
	if errors.Is(err, sessionlog.ErrBadID) {
		return nil, nil, fmt.Errorf("%w: session id %q", sessionlog.ErrHeader, id)
	}
	return l, w, err
}

type refusesDots struct{ *jsonl.Store }

// Create refuses every id holding a dot: a rule wider than the contract's.
func (s refusesDots) Create(ctx context.Context, h sessionlog.Header) (sessionlog.Writer, error) {
	if strings.Contains(h.ID, ".") {
		return nil, fmt.Errorf("%w: %q holds a dot", sessionlog.ErrBadID, h.ID)
	}
	return s.Store.Create(ctx, h)
}

type hidesInUse struct{ *jsonl.Store }

// Open hides ErrInUse behind a plain error.
func (s hidesInUse) Open(ctx context.Context, id string) (*sessionlog.Loaded, sessionlog.Writer, error) {
	l, w, err := s.Store.Open(ctx, id)
	if errors.Is(err, sessionlog.ErrInUse) {
		return nil, nil, errors.New("busy")
	}
	return l, w, err
}

type hidesNotFound struct{ *jsonl.Store }

// Inspect reports a missing session without ErrNotFound.
func (s hidesNotFound) Inspect(ctx context.Context, id string) (*sessionlog.Loaded, error) {
	l, err := s.Store.Inspect(ctx, id)
	if errors.Is(err, sessionlog.ErrNotFound) {
		return nil, errors.New("no such session")
	}
	return l, err
}

type hidesLegacy struct{ *jsonl.Store }

// Inspect drops legacy events instead of refusing the log.
func (s hidesLegacy) Inspect(ctx context.Context, id string) (*sessionlog.Loaded, error) {
	l, err := s.Store.Inspect(ctx, id)
	if errors.Is(err, sessionlog.ErrLegacy) {
		return &sessionlog.Loaded{Log: sessionlog.New(sessionlog.NewHeader(id, 1, ""))}, nil
	}
	return l, err
}

type ignoresContext struct{ *jsonl.Store }

// Create ignores its context.
func (s ignoresContext) Create(_ context.Context, h sessionlog.Header) (sessionlog.Writer, error) {
	return s.Store.Create(context.Background(), h)
}

type listsBackwards struct{ *jsonl.Store }

// List yields sessions in reverse id order.
func (s listsBackwards) List(ctx context.Context) iter.Seq2[sessionlog.Info, error] {
	return func(yield func(sessionlog.Info, error) bool) {
		var infos []sessionlog.Info
		for info, err := range s.Store.List(ctx) {
			if err != nil {
				yield(info, err)
				return
			}
			infos = append(infos, info)
		}
		slices.Reverse(infos)
		for _, info := range infos {
			if !yield(info, nil) {
				return
			}
		}
	}
}

type listsEagerly struct{ *jsonl.Store }

// List loads every session: a damaged body breaks the listing.
func (s listsEagerly) List(ctx context.Context) iter.Seq2[sessionlog.Info, error] {
	return func(yield func(sessionlog.Info, error) bool) {
		for info, err := range s.Store.List(ctx) {
			if err == nil {
				_, err = s.Store.Inspect(ctx, info.ID)
			}
			if !yield(info, err) {
				return
			}
		}
	}
}

type listsFloats struct{ *jsonl.Store }

// List passes createdAt through a float64.
func (s listsFloats) List(ctx context.Context) iter.Seq2[sessionlog.Info, error] {
	return func(yield func(sessionlog.Info, error) bool) {
		for info, err := range s.Store.List(ctx) {
			info.CreatedAt = int64(float64(info.CreatedAt))
			if !yield(info, err) {
				return
			}
		}
	}
}

// lossyWriter drops events whose seq is odd and never refuses an append.
type lossyWriter struct{ sessionlog.Writer }

func (w lossyWriter) Append(ctx context.Context, events ...sessionlog.Event) error {
	var keep []sessionlog.Event
	for _, e := range events {
		if e.Seq%2 == 0 {
			keep = append(keep, e)
		}
	}
	_ = w.Writer.Append(ctx, keep...)
	return nil
}

type writesLossily struct{ *jsonl.Store }

func (s writesLossily) Create(ctx context.Context, h sessionlog.Header) (sessionlog.Writer, error) {
	w, err := s.Store.Create(ctx, h)
	if err != nil {
		return nil, err
	}
	return lossyWriter{w}, nil
}

func (s writesLossily) Open(ctx context.Context, id string) (*sessionlog.Loaded, sessionlog.Writer, error) {
	l, w, err := s.Store.Open(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return l, lossyWriter{w}, nil
}

// broken names each broken backend and the subtest that must catch it.
var broken = map[string]struct {
	wrap    func(*jsonl.Store) sessionlog.Store
	subtest string
}{
	"inspect-commits":   {func(s *jsonl.Store) sessionlog.Store { return inspectCommits{s} }, "Repair"},
	"open-skips-repair": {func(s *jsonl.Store) sessionlog.Store { return openSkipsRepair{s} }, "Repair"},
	"create-overwrites": {func(s *jsonl.Store) sessionlog.Store { return createOverwrites{s} }, "CreateExisting"},
	"create-normalizes": {func(s *jsonl.Store) sessionlog.Store { return createNormalizes{s} }, "BadHeader"},
	"bad-id-is-header":  {func(s *jsonl.Store) sessionlog.Store { return badIDIsHeader{s} }, "BadID"},
	"refuses-dots":      {func(s *jsonl.Store) sessionlog.Store { return refusesDots{s} }, "BadID"},
	"normalizes-id":     {func(s *jsonl.Store) sessionlog.Store { return createNormalizes{s} }, "BadID"},
	"hides-in-use":      {func(s *jsonl.Store) sessionlog.Store { return hidesInUse{s} }, "InUse"},
	"hides-not-found":   {func(s *jsonl.Store) sessionlog.Store { return hidesNotFound{s} }, "NotFound"},
	"hides-legacy":      {func(s *jsonl.Store) sessionlog.Store { return hidesLegacy{s} }, "Legacy"},
	"ignores-context":   {func(s *jsonl.Store) sessionlog.Store { return ignoresContext{s} }, "Context"},
	"lists-backwards":   {func(s *jsonl.Store) sessionlog.Store { return listsBackwards{s} }, "ListLazy"},
	"lists-eagerly":     {func(s *jsonl.Store) sessionlog.Store { return listsEagerly{s} }, "ListLazy"},
	"lists-floats":      {func(s *jsonl.Store) sessionlog.Store { return listsFloats{s} }, "IntegerCreatedAt"},
	"writes-lossily":    {func(s *jsonl.Store) sessionlog.Store { return writesLossily{s} }, "ContiguousSeqs"},
	"loses-rounds":      {func(s *jsonl.Store) sessionlog.Store { return writesLossily{s} }, "RoundTrip"},
	"loses-corpus":      {func(s *jsonl.Store) sessionlog.Store { return writesLossily{s} }, "Corpus"},
	"loses-repair-turn": {func(s *jsonl.Store) sessionlog.Store { return writesLossily{s} }, "SessionValidates"},
	"loses-closed":      {func(s *jsonl.Store) sessionlog.Store { return writesLossily{s} }, "ClosedWriter"},
}

// TestBrokenBackend runs the suite on the broken backend named by
// brokenEnv; it is meant to fail and runs only as a child of
// TestSuiteCatchesBrokenBackends.
func TestBrokenBackend(t *testing.T) {
	name := os.Getenv(brokenEnv)
	if name == "" {
		t.Skip("runs only as a child of TestSuiteCatchesBrokenBackends")
	}
	sessionlogtest.TestStore(t, backend(broken[name].wrap))
}

// TestSuiteCatchesBrokenBackends proves the suite can fail: each broken
// backend fails the subtest that checks the promise it breaks.
func TestSuiteCatchesBrokenBackends(t *testing.T) {
	for name, b := range broken {
		t.Run(name, func(t *testing.T) {
			if b.subtest == "Corpus" {
				// The subtest reads the corpus: without it, it skips (or
				// fails under CI=true) before the backend is exercised.
				sessionlogtest.CorpusLogs(t)
			}
			subtest := "TestBrokenBackend/" + b.subtest
			args := []string{"-test.run=^TestBrokenBackend$/^" + b.subtest + "$", "-test.v"}
			// Let the child's coverage count, when coverage is on.
			if f := flag.Lookup("test.gocoverdir"); f != nil && f.Value.String() != "" {
				args = append(args, "-test.gocoverdir="+f.Value.String())
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), brokenEnv+"="+name)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			switch {
			case err == nil && strings.Contains(string(out), "--- SKIP: "+subtest):
				t.Fatalf("%s skipped on the broken backend %q instead of failing:\n%s", subtest, name, out)
			case err == nil:
				t.Fatalf("the suite passed the broken backend %q: %s did not fail:\n%s", name, subtest, out)
			case !errors.As(err, &ee):
				t.Fatalf("cannot run the suite on the broken backend %q: %v", name, err)
			}
			if !strings.Contains(string(out), "--- FAIL: "+subtest) {
				t.Fatalf("the broken backend %q failed the suite, but not in %s:\n%s", name, subtest, out)
			}
		})
	}
}

// TestBenchmarkHelpers runs the benchmark helpers once each and checks the
// metric they report.
func TestBenchmarkHelpers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	open := func(b *testing.B, dir string) sessionlog.Store {
		st, err := jsonl.Open(dir, jsonl.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	for name, f := range map[string]func(b *testing.B){
		"append": func(b *testing.B) { sessionlogtest.BenchmarkAppend(b, open, 20) },
		"load":   func(b *testing.B) { sessionlogtest.BenchmarkLoad(b, open, 100) },
	} {
		r := testing.Benchmark(f)
		if r.N == 0 || r.Extra["events/s"] <= 0 {
			t.Fatalf("%s: N %d, events/s %v", name, r.N, r.Extra["events/s"])
		}
	}
	if n := len(sessionlogtest.Generate(77)); n != 77 {
		t.Fatalf("Generate(77) made %d events", n)
	}
}
