package sessionlogtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

func openJSONL(dir string) (sessionlog.Store, error) { return jsonl.Open(dir, jsonl.Options{}) }

// TestCrashChildInProcess runs the child's writer loop to completion twice
// (the second run resumes the session) and checks its reports the way the
// parent does.
func TestCrashChildInProcess(t *testing.T) {
	dir := t.TempDir()
	var reports []report
	for run := range 2 {
		var out, errs bytes.Buffer
		code, ran := crashMain(map[string]Opener{"jsonl": openJSONL}, "jsonl", dir, &out, &errs, 2)
		if code != 0 || !ran {
			t.Fatalf("run %d: exit %d %v: %s", run, code, ran, errs.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if !strings.HasPrefix(lines[0], "ready ") {
			t.Fatalf("first line %q", lines[0])
		}
		for _, l := range lines[1:] {
			r, ok := parseReport(l)
			if !ok {
				t.Fatalf("unparsable report %q", l)
			}
			reports = append(reports, r)
		}
	}
	if len(reports) != 2*2*7 { // 2 runs × 2 turns × 7 checkpoints
		t.Fatalf("%d reports", len(reports))
	}
	verifyAfterCrash(t, openJSONL, dir, reports)
	if _, ok := parseReport("synced x y z"); ok {
		t.Fatal("parseReport accepted garbage")
	}
	if _, ok := parseReport("ready 3"); ok {
		t.Fatal("parseReport accepted a ready line")
	}
}

func TestCrashMain(t *testing.T) {
	var out, errs bytes.Buffer
	if _, ran := crashMain(nil, "", "", &out, &errs, 1); ran {
		t.Fatal("ran without a backend name")
	}
	if code, _ := crashMain(nil, "nope", "", &out, &errs, 1); code != 2 || !strings.Contains(errs.String(), `unknown backend "nope"`) {
		t.Fatalf("unknown backend: %d %s", code, errs.String())
	}
	failing := func(string) (sessionlog.Store, error) { return nil, errors.New("cannot open") }
	if code, _ := crashMain(map[string]Opener{"f": failing}, "f", "", &out, &errs, 1); code != 1 || !strings.Contains(errs.String(), "cannot open") {
		t.Fatalf("failing backend: %d %s", code, errs.String())
	}
	// A session that cannot load stops the child.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, crashID+jsonl.ExtRaw), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _ := crashMain(map[string]Opener{"jsonl": openJSONL}, "jsonl", dir, &out, &errs, 1); code != 1 {
		t.Fatalf("unloadable session: %d", code)
	}
}

// TestCheckAfterCrashCatches proves the crash checker can fail.
func TestCheckAfterCrashCatches(t *testing.T) {
	dir := t.TempDir()
	if _, err := checkAfterCrash(openJSONL, dir, nil); err != nil {
		t.Fatalf("no session and no reports: %v", err)
	}
	if _, err := checkAfterCrash(openJSONL, dir, []report{{seq: 0, typ: "turn/start"}}); !errors.Is(err, sessionlog.ErrNotFound) {
		t.Fatalf("reports but no session: %v", err)
	}
	var out bytes.Buffer
	if err := crashChild(openJSONL, dir, &out, 1); err != nil {
		t.Fatal(err)
	}
	l, err := openJSONLInspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	events := l.Log.Events()
	good := report{seq: 0, typ: events[0].Type}
	for _, tc := range []struct {
		name string
		r    report
		want string
	}{
		{"lost", report{seq: len(events) + 5, typ: "turn/end"}, "lost"},
		{"changed type", report{seq: 0, typ: "step/start", crc: good.crc}, "changed"},
		{"changed bytes", report{seq: 0, typ: good.typ, crc: 1}, "changed"},
	} {
		if _, err := checkAfterCrash(openJSONL, dir, []report{tc.r}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := checkAfterCrash(func(string) (sessionlog.Store, error) { return nil, errors.New("x") }, dir, nil); err == nil {
		t.Error("a failing opener passed")
	}
}

func openJSONLInspect(dir string) (*sessionlog.Loaded, error) {
	st, err := openJSONL(dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Inspect(context.Background(), crashID)
}

// failAfter is a writer that fails once n writes were made.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("pipe closed")
	}
	f.n--
	return len(p), nil
}

func TestCrashChildStopsOnWriteErrors(t *testing.T) {
	for _, n := range []int{0, 3} {
		err := crashChild(openJSONL, t.TempDir(), &failAfter{n: n}, 5)
		if err == nil || !strings.Contains(err.Error(), "pipe closed") {
			t.Fatalf("after %d writes: %v", n, err)
		}
	}
}

// faulty wraps a store and breaks one step of the recovery checkAfterCrash
// checks.
type faulty struct {
	sessionlog.Store
	fault string
	opens int
}

type failingCloser struct{ sessionlog.Writer }

func (w failingCloser) Close() error {
	return errors.Join(w.Writer.Close(), errors.New("close failed"))
}

func (s *faulty) Open(ctx context.Context, id string) (*sessionlog.Loaded, sessionlog.Writer, error) {
	s.opens++
	l, w, err := s.Store.Open(ctx, id)
	if err != nil {
		return l, w, err
	}
	switch {
	case s.fault == "close" && s.opens == 1:
		return l, failingCloser{w}, nil
	case s.fault == "reopen" && s.opens == 2:
		return nil, nil, errors.Join(errors.New("reopen failed"), w.Close())
	case s.fault == "closers-again" && s.opens == 2:
		l.Closers = []sessionlog.Event{{Type: sessionlog.TypeTurnEnd}}
	case s.fault == "append" && s.opens == 2:
		return l, failingCloser{w}, nil
	}
	return l, w, nil
}

func (s *faulty) Inspect(ctx context.Context, id string) (*sessionlog.Loaded, error) {
	l, err := s.Store.Inspect(ctx, id)
	switch s.fault {
	case "inspect":
		return nil, errors.New("inspect failed")
	case "inspect-closers":
		l.Closers = []sessionlog.Event{{Type: sessionlog.TypeTurnEnd}}
	}
	return l, err
}

// TestCheckAfterCrashCatchesBrokenRecovery proves each recovery check can
// fail.
func TestCheckAfterCrashCatchesBrokenRecovery(t *testing.T) {
	for fault, want := range map[string]string{
		"close":           "close failed",
		"reopen":          "second Open after a crash: reopen failed",
		"closers-again":   "second Open added 1 closers",
		"append":          "new turn after a crash",
		"inspect":         "inspect after the new turn: inspect failed",
		"inspect-closers": "after the new turn:",
	} {
		t.Run(fault, func(t *testing.T) {
			dir := t.TempDir()
			var out bytes.Buffer
			if err := crashChild(openJSONL, dir, &out, 1); err != nil {
				t.Fatal(err)
			}
			open := func(dir string) (sessionlog.Store, error) {
				st, err := openJSONL(dir)
				return &faulty{Store: st, fault: fault}, err
			}
			if _, err := checkAfterCrash(open, dir, nil); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v, want %q", err, want)
			}
		})
	}
}
