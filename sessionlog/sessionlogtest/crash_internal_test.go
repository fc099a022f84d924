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
