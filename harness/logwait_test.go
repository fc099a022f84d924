package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reel-agent/reel/harness/scenario"
)

// waitLog builds session logs for the wait tests: a header, then one event
// line per call, seqs counted.
type waitLog struct {
	lines []string
	seq   int
}

func newWaitLog(id string, createdAt int64, parent string) *waitLog {
	h := fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":%d,"cwd":"/w"`, id, createdAt)
	if parent != "" {
		h += fmt.Sprintf(`,"parentSession":%q,"origin":"subagent","delegationDepth":1`, parent)
	}
	return &waitLog{lines: []string{h + "}"}}
}

func (l *waitLog) event(typ, data string) *waitLog {
	l.lines = append(l.lines, fmt.Sprintf(`{"type":%q,"seq":%d,"time":%d,"data":%s}`, typ, l.seq, 1000+l.seq, data))
	l.seq++
	return l
}

func (l *waitLog) turnStart(n int) *waitLog {
	return l.event("turn/start", fmt.Sprintf(`{"turn":%d}`, n))
}
func (l *waitLog) turnEnd(n int) *waitLog {
	return l.event("turn/end", fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, n))
}
func (l *waitLog) descriptor() *waitLog {
	return l.event("subagent/descriptor", `{"version":2,"mode":"continuable","provider":"spawn","label":"x"}`)
}
func (l *waitLog) request() *waitLog {
	return l.event("request/header", `{"header":{"config":{"provider":"p","model":"m"},"system":"s","tools":[]},"reason":"initial"}`)
}
func (l *waitLog) user(source string) *waitLog {
	return l.event("user/message", `{"content":[{"type":"text","text":"hi"}],"source":`+source+`,"role":"user","id":"m1"}`)
}

// text is the log's file content; torn adds half a record after it.
func (l *waitLog) text(torn bool) string {
	s := strings.Join(l.lines, "\n") + "\n"
	if torn {
		s += `{"type":"turn/end","seq":`
	}
	return s
}

func (l *waitLog) write(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(l.text(false)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cancelled is a context that is already done: a wait given it reads the
// logs once and gives up if they do not show what it waits for.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// doneAfter is a context that ends at the n-th call of its Done: the
// prompts a waitForTurnEnd waits for are answered (its first Done), and
// its log wait then reads the log once before it gives up.
type doneAfter struct {
	context.Context
	mu sync.Mutex
	n  int
	ch chan struct{}
}

func newDoneAfter(n int) *doneAfter {
	return &doneAfter{Context: context.Background(), n: n, ch: make(chan struct{})}
}

func (c *doneAfter) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n--; c.n == 0 {
		close(c.ch)
	}
	return c.ch
}

func (c *doneAfter) Err() error {
	select {
	case <-c.ch:
		return context.Canceled
	default:
		return nil
	}
}

// TestReadTurns reads what the waits need of a log: the open turn, the
// highest started and ended turns, own model work after the descriptor,
// and settlement notices; a record being written is left out.
func TestReadTurns(t *testing.T) {
	settled := `{"kind":"subagent-settled","form":"notice","senderSessionId":"c"}`
	cases := []struct {
		name string
		log  *waitLog
		torn bool
		want logTurns
	}{
		{"header only", newWaitLog("p", 1, ""), false, logTurns{}},
		{"open turn", newWaitLog("p", 1, "").turnStart(1), false, logTurns{open: 1, started: 1}},
		{"ended turn", newWaitLog("p", 1, "").turnStart(1).turnEnd(1), false, logTurns{started: 1, ended: 1}},
		{"second turn open", newWaitLog("p", 1, "").turnStart(1).turnEnd(1).turnStart(2), false, logTurns{open: 2, started: 2, ended: 1}},
		{"torn turn/end left out", newWaitLog("p", 1, "").turnStart(1), true, logTurns{open: 1, started: 1}},
		{"request without descriptor", newWaitLog("p", 1, "").request(), false, logTurns{ownWork: true}},
		{"descriptor without request", newWaitLog("c", 1, "p").descriptor(), false, logTurns{}},
		{"request before the descriptor", newWaitLog("c", 1, "p").request().descriptor(), false, logTurns{}},
		{"request after the descriptor", newWaitLog("c", 1, "p").descriptor().turnStart(1).request().turnEnd(1), false, logTurns{started: 1, ended: 1, ownWork: true}},
		{"settlement notice", newWaitLog("p", 1, "").turnStart(2).user(settled), false, logTurns{open: 2, started: 2, settled: true}},
		{"settlement notice in the inbox", newWaitLog("p", 1, "").event("agent/inbox/spliced", `{"target":"next-turn","start":0,"inserted":[{"content":[],"source":`+settled+`,"role":"user","id":"m"}]}`), false, logTurns{settled: true}},
		{"another message", newWaitLog("p", 1, "").user(`{"kind":"subagent-report","form":"relay"}`), false, logTurns{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, []byte(c.log.text(c.torn)), 0o644); err != nil {
				t.Fatal(err)
			}
			got, ok, err := readTurns(path)
			if err != nil || !ok || got != c.want {
				t.Errorf("readTurns = %#v, %v, %v; want %#v", got, ok, err, c.want)
			}
		})
	}
	if _, ok, err := readTurns(filepath.Join(t.TempDir(), "none.jsonl")); ok || err != nil {
		t.Errorf("a log that does not exist: ok %v, err %v; want neither", ok, err)
	}
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readTurns(empty); err == nil {
		t.Error("a log without its header line: no error (a wait must retry it)")
	}
}

// TestLogWaits runs each wait once (an already cancelled context) against
// logs that show, or do not yet show, what it waits for.
func TestLogWaits(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	newWaitLog("p", 1, "").turnStart(1).turnEnd(1).turnStart(2).turnEnd(2).write(t, path("fast.jsonl"))
	newWaitLog("p", 1, "").turnStart(1).turnEnd(1).write(t, path("one.jsonl"))
	newWaitLog("p", 1, "").turnStart(1).turnEnd(1).turnStart(2).write(t, path("open.jsonl"))
	newWaitLog("p", 1, "").write(t, path("none.jsonl"))
	cases := []struct {
		name string
		wait func(context.Context) error
		done bool
		// saw is part of the timeout message when not done.
		saw string
	}{
		{"turn 2 started and already ended", func(ctx context.Context) error { return waitTurnStarted(ctx, path("fast.jsonl"), 2) }, true, ""},
		{"turn 2 started, still open", func(ctx context.Context) error { return waitTurnStarted(ctx, path("open.jsonl"), 2) }, true, ""},
		{"turn 2 not started", func(ctx context.Context) error { return waitTurnStarted(ctx, path("one.jsonl"), 2) }, false, "turns started up to 1, ended up to 1"},
		{"turn 1 of a log without turns", func(ctx context.Context) error { return waitTurnStarted(ctx, path("none.jsonl"), 1) }, false, "turns started up to 0"},
		{"turn 1 of a log not written yet", func(ctx context.Context) error { return waitTurnStarted(ctx, path("missing.jsonl"), 1) }, false, "missing.jsonl starts turn 1"},
		{"no open turn", func(ctx context.Context) error { return waitNoOpenTurn(ctx, path("fast.jsonl")) }, true, ""},
		{"turn 2 open", func(ctx context.Context) error { return waitNoOpenTurn(ctx, path("open.jsonl")) }, false, "turn 2 open"},
		{"no turn at all", func(ctx context.Context) error { return waitNoOpenTurn(ctx, path("none.jsonl")) }, true, ""},
		{"no log", func(ctx context.Context) error { return waitNoOpenTurn(ctx, path("missing.jsonl")) }, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.wait(cancelled())
			switch {
			case c.done && err != nil:
				t.Errorf("wait = %v, want done", err)
			case !c.done && (!errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), c.saw)):
				t.Errorf("wait = %v, want a cancelled wait saying %q", err, c.saw)
			}
		})
	}
}

// TestWaitChildTurnEnded selects the child by fixture order (createdAt,
// then id — not the order the files were written in) and waits for a
// closed turn after model work of its own.
func TestWaitChildTurnEnded(t *testing.T) {
	cases := []struct {
		name     string
		children []*waitLog // written in this order
		child    int
		minimum  int
		done     bool
		saw      string
	}{
		{"first child ended turn 1", []*waitLog{newWaitLog("c1", 10, "p").descriptor().turnStart(1).request().turnEnd(1)}, 1, 1, true, ""},
		{"no child yet", nil, 1, 1, false, "0 child session(s)"},
		{"second child not created", []*waitLog{newWaitLog("c1", 10, "p").descriptor().turnStart(1).request().turnEnd(1)}, 2, 1, false, "1 child session(s)"},
		{"turn open", []*waitLog{newWaitLog("c1", 10, "p").descriptor().turnStart(1).request()}, 1, 1, false, "turn 1 open"},
		{"no model work of its own", []*waitLog{newWaitLog("c1", 10, "p").descriptor().turnStart(1).turnEnd(1)}, 1, 1, false, "no request/header after its subagent/descriptor"},
		{"a later turn open", []*waitLog{newWaitLog("c1", 10, "p").descriptor().turnStart(1).request().turnEnd(1).turnStart(2).request()}, 1, 1, false, "turn 2 open"},
		{"turn 3 not ended yet", []*waitLog{newWaitLog("c1", 10, "p").descriptor().turnStart(1).request().turnEnd(1).turnStart(2).request().turnEnd(2)}, 1, 3, false, "ended up to 2"},
		{"turn 3 ended without a model call", []*waitLog{newWaitLog("c1", 10, "p").descriptor().turnStart(1).request().turnEnd(1).turnStart(2).request().turnEnd(2).turnStart(3).turnEnd(3)}, 1, 3, true, ""},
		{"a later turn ended", []*waitLog{newWaitLog("c1", 10, "p").descriptor().turnStart(1).request().turnEnd(1).turnStart(2).request().turnEnd(2)}, 1, 1, true, ""},
		// The first child by createdAt is written last; the second is done.
		{"fixture order, first not done", []*waitLog{newWaitLog("c2", 20, "p").descriptor().turnStart(1).request().turnEnd(1), newWaitLog("c1", 10, "p").descriptor()}, 1, 1, false, "no request/header"},
		{"fixture order, second done", []*waitLog{newWaitLog("c2", 20, "p").descriptor().turnStart(1).request().turnEnd(1), newWaitLog("c1", 10, "p").descriptor()}, 2, 1, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			newWaitLog("p", 1, "").turnStart(1).turnEnd(1).write(t, filepath.Join(dir, "p.jsonl"))
			for _, l := range c.children {
				var id string
				_, rest, _ := strings.Cut(l.lines[0], `"id":"`)
				id, _, _ = strings.Cut(rest, `"`)
				l.write(t, filepath.Join(dir, id+".jsonl"))
			}
			err := waitChildTurnEnded(cancelled(), dir, c.child, c.minimum)
			switch {
			case c.done && err != nil:
				t.Errorf("wait = %v, want done", err)
			case !c.done && (!errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), c.saw)):
				t.Errorf("wait = %v, want a cancelled wait saying %q", err, c.saw)
			}
		})
	}
}

// TestDriverLogWaits drives the wait steps as a scenario does, against a
// log that grows while the step waits: the step returns once the log
// shows what it waits for. The settlement marker of the reference suite
// is awaited as a notice in the logs.
func TestDriverLogWaits(t *testing.T) {
	dir := t.TempDir()
	run := &Run{StateDir: filepath.Join(dir, "state"), Cwd: filepath.Join(dir, "cwd"), SessionIDs: []string{"p"}}
	for _, d := range []string{run.StateDir, run.Cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d := &driver{r: &Runner{SettlementMarker: SettlementMarker}, run: run, p: &process{}}
	parent := filepath.Join(run.StateDir, "p.jsonl")
	log := newWaitLog("p", 1, "").turnStart(1).turnEnd(1)
	log.write(t, parent)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety net, not a measure
	defer cancel()
	grow := func(step scenario.Step, then func()) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- step.Run(ctx, d) }()
		then()
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", step.Op, err)
		}
	}
	marker := scenario.Step{Op: scenario.OpWaitForFile, Path: SettlementMarker}
	if err := marker.Run(cancelled(), d); !errors.Is(err, context.Canceled) {
		t.Fatalf("the settlement marker with no notice in any log: %v, want a cancelled wait", err)
	}
	grow(marker, func() {
		log.turnStart(2).user(`{"kind":"subagent-settled","form":"notice","senderSessionId":"c"}`).write(t, parent)
	})
	// A run that names no settlement marker waits for the file itself.
	plain := &driver{r: &Runner{}, run: run, p: &process{}}
	if err := marker.Run(cancelled(), plain); !errors.Is(err, context.Canceled) {
		t.Errorf("the marker in a run that names none, with a notice in the log: %v, want a wait for the file", err)
	}
	if _, err := os.Stat(filepath.Join(run.Cwd, SettlementMarker)); err == nil {
		t.Error("the harness wrote the marker file")
	}
	grow(scenario.Step{Op: scenario.OpWaitForTurnStart, MinimumTurn: 2}, func() {})
	if err := (scenario.Step{Op: scenario.OpWaitForTurnEnd}).Run(newDoneAfter(2), d); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "turn 2 open") {
		t.Fatalf("waitForTurnEnd with no prompt pending and turn 2 open: %v, want a cancelled wait", err)
	}
	grow(scenario.Step{Op: scenario.OpWaitForTurnEnd}, func() { log.turnEnd(2).write(t, parent) })
	if err := (scenario.Step{Op: scenario.OpWaitForTurnStart, MinimumTurn: 3}).Run(cancelled(), d); !errors.Is(err, context.Canceled) {
		t.Fatalf("waitForTurnStart 3: %v, want a cancelled wait", err)
	}
	// A child created while the step waits.
	grow(scenario.Step{Op: scenario.OpWaitForSubagentTurnEnd}, func() {
		newWaitLog("c", 5, "p").descriptor().turnStart(1).request().turnEnd(1).write(t, filepath.Join(run.StateDir, "c.jsonl"))
	})
	// An ordinary waitForFile still waits for its file.
	grow(scenario.Step{Op: scenario.OpWaitForFile, Path: "ready"}, func() {
		if err := os.WriteFile(filepath.Join(run.Cwd, "ready"), nil, 0o644); err != nil {
			t.Error(err)
		}
	})
	if _, err := d.sessionLog(1); err == nil {
		t.Error("the log of a session that does not exist has a path")
	}
}

// TestDirWatchWakes: a watch wakes its wait on each kind of change an
// agent makes to its logs (a log created, appended to, renamed into place)
// with no fallback tick to hide a missed change: the fallback is an hour
// and the context's deadline fails the case.
func TestDirWatchWakes(t *testing.T) {
	cases := []struct {
		name   string
		before func(dir string) error // done before the watch
		change func(dir string) error // done after it
	}{
		{"a log created", nil, func(dir string) error { return os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte("{}\n"), 0o600) }},
		{"a log appended to", func(dir string) error { return os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte("{}\n"), 0o600) },
			func(dir string) error {
				f, err := os.OpenFile(filepath.Join(dir, "a.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					return err
				}
				if _, err := f.Write([]byte("{}\n")); err != nil {
					return err
				}
				// Not closed until the wait has woken: the write alone
				// must wake it.
				t.Cleanup(func() { f.Close() })
				return nil
			}},
		{"a log renamed into place", func(dir string) error { return os.WriteFile(filepath.Join(dir, "a.tmp"), []byte("{}\n"), 0o600) },
			func(dir string) error { return os.Rename(filepath.Join(dir, "a.tmp"), filepath.Join(dir, "a.jsonl")) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.before != nil {
				if err := c.before(dir); err != nil {
					t.Fatal(err)
				}
			}
			w, err := watchDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer w.close()
			if err := c.change(dir); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if !w.wait(ctx, time.Hour) {
				t.Fatalf("the wait did not wake on the change: %v", ctx.Err())
			}
		})
	}
}
