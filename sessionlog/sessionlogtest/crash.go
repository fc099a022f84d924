package sessionlogtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/sessionlog"
)

// Environment of a crash-test child process.
const (
	// CrashEnv names the backend a re-executed test binary runs as a crash
	// child; RunCrashChild acts only when it is set.
	CrashEnv = "REEL_SESSIONLOG_CRASH_CHILD"
	// CrashDirEnv is the store directory of the crash child.
	CrashDirEnv = "REEL_SESSIONLOG_CRASH_DIR"
	// SoakEnv=1 raises the crash trials from 20 to 200.
	SoakEnv = "REEL_SOAK"
	// CrashSeedEnv fixes the seed of the kill points (the test logs it).
	CrashSeedEnv = "REEL_CRASH_SEED"
)

// crashID is the session the crash child writes.
const crashID = "crash-session"

// Opener opens a store without a *testing.T: the crash child has none.
type Opener func(dir string) (sessionlog.Store, error)

// RunCrashChild turns the test binary into a crash-test child when CrashEnv
// is set: call it first thing in TestMain. The child opens (or creates) one
// session in CrashDirEnv and appends turns forever, syncing at the agent's
// checkpoints and printing "synced SEQ TYPE CRC" after each Sync returns,
// until it is killed. Without CrashEnv it returns at once.
func RunCrashChild(backends map[string]Opener) {
	if code, ok := crashMain(backends, os.Getenv(CrashEnv), os.Getenv(CrashDirEnv), os.Stdout, os.Stderr, 100_000); ok {
		os.Exit(code)
	}
}

// crashMain runs the child named name, if any, and returns its exit code.
func crashMain(backends map[string]Opener, name, dir string, stdout, stderr io.Writer, turns int) (int, bool) {
	if name == "" {
		return 0, false
	}
	open, ok := backends[name]
	if !ok {
		fmt.Fprintf(stderr, "crash child: unknown backend %q\n", name)
		return 2, true
	}
	if err := crashChild(open, dir, stdout, turns); err != nil {
		fmt.Fprintf(stderr, "crash child: %v\n", err)
		return 1, true
	}
	return 0, true
}

// crashChild appends up to turns turns (the parent kills it long before).
func crashChild(open Opener, dir string, out io.Writer, turns int) error {
	ctx := context.Background()
	st, err := open(dir)
	if err != nil {
		return err
	}
	l, w, err := st.Open(ctx, crashID)
	var log *sessionlog.Log
	switch {
	case errors.Is(err, sessionlog.ErrNotFound):
		h := sessionlog.NewHeader(crashID, 1_783_352_050_748, "/work")
		if w, err = st.Create(ctx, h); err != nil {
			return errors.Join(err, st.Close())
		}
		log = sessionlog.New(h)
	case err != nil:
		return errors.Join(err, st.Close())
	default:
		log = l.Log
	}
	sess := sessionlog.NewSession(log, w)
	if _, err := fmt.Fprintf(out, "ready %d\n", log.Len()); err != nil {
		return errors.Join(err, sess.Close(), st.Close())
	}
	reason := sessionlog.ReasonInitial
	if _, _, _, ok := log.LatestHeader(); ok {
		reason = sessionlog.ReasonResume
	}
	b := NewBuilder(log.Len())
	var cerr error // the first failure; later checkpoints do nothing
	checkpoint := func() {
		evs := b.Take()
		if cerr != nil {
			return
		}
		if cerr = sess.Append(ctx, evs...); cerr == nil {
			cerr = sess.Checkpoint(ctx)
		}
		if cerr == nil {
			last := &evs[len(evs)-1]
			_, cerr = fmt.Fprintf(out, "synced %d %s %08x\n", last.Seq, last.Type, crc32.ChecksumIEEE(last.AppendJSON(nil)))
		}
	}
	for range turns {
		turn := NextTurn(log.Events())
		b.TurnStart(turn)
		for step := 1; step <= 2; step++ {
			b.StepStart(step)
			b.User(fmt.Sprintf("turn %d step %d", turn, step))
			if reason != "" {
				b.Header(reason)
				reason = ""
			}
			checkpoint() // before the model call
			call := Call{ID: fmt.Sprintf("call-%d-%d", turn, step), Name: "bash", Arguments: `{"command":"true"}`}
			b.Assistant("calling a tool for this step", call)
			cs := b.ToolCall(call)
			checkpoint() // before the tool runs
			b.ToolResult(cs, call, "ok")
			b.StepEnd()
			checkpoint() // after the step's results
		}
		b.TurnEnd(sessionlog.EndCompleted)
		checkpoint() // turn end
		if cerr != nil {
			return errors.Join(cerr, sess.Close(), st.Close())
		}
	}
	if err := sess.Close(); err != nil {
		return err
	}
	return st.Close()
}

type report struct {
	seq int
	typ string
	crc uint32
}

func parseReport(line string) (report, bool) {
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "synced" {
		return report{}, false
	}
	seq, err1 := strconv.Atoi(f[1])
	crc, err2 := strconv.ParseUint(f[3], 16, 32)
	if err1 != nil || err2 != nil {
		return report{}, false
	}
	return report{seq: seq, typ: f[2], crc: uint32(crc)}, true
}

// TestCrash re-executes the test binary as a crash child of backend (its
// TestMain must call RunCrashChild with the same name) and kills it with
// SIGKILL at random points, 20 times (200 with REEL_SOAK=1), on one growing
// session. After every kill the session must open; every event the child
// reported synced must be present and identical; repair closers must be
// committed exactly once (a second Open adds nothing); and a new turn must
// append cleanly. The next child then resumes the same session.
func TestCrash(t *testing.T, backend string, open Opener) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary; skipped with -short")
	}
	trials := 20
	if os.Getenv(SoakEnv) == "1" {
		trials = 200
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(CrashSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", CrashSeedEnv, s, err)
		}
		seed = v
	}
	t.Logf("crash seed %d (rerun with %s=%d)", seed, CrashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, 0x7265656c))
	dir := t.TempDir()
	var reports []report
	lockChecked, repaired := false, 0
	for trial := range trials {
		// The lock of the first child that gets ready is checked from this
		// process: two processes conflict like two stores do.
		var onReady func()
		if !lockChecked {
			onReady = func() { checkLockedElsewhere(t, open, dir); lockChecked = true }
		}
		got := runChild(t, backend, dir, rng, onReady)
		reports = append(reports, got...)
		closers := verifyAfterCrash(t, open, dir, reports)
		if closers > 0 {
			repaired++
		}
		t.Logf("trial %d: %d reports before the kill, %d closers committed", trial, len(got), closers)
	}
	t.Logf("%d of %d kills left an unfinished turn to repair", repaired, trials)
	if len(reports) == 0 || !lockChecked {
		t.Fatalf("no child ever got ready (%d reports)", len(reports))
	}
}

// runChild starts a child, kills it after a random number of reports and
// returns every report it printed.
func runChild(t *testing.T, backend, dir string, rng *rand.Rand, onReady func()) []report {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), CrashEnv+"="+backend, CrashDirEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	// 1 in 8 kills land before the child has even opened the session.
	killAfter := -1
	if rng.IntN(8) != 0 {
		killAfter = rng.IntN(40)
	}
	var reports []report
	sc := bufio.NewScanner(stdout)
	killed := false
	kill := func() {
		if !killed {
			killed = true
			if err := cmd.Process.Kill(); err != nil {
				t.Errorf("kill: %v", err)
			}
		}
	}
	if killAfter < 0 {
		kill()
	}
	for sc.Scan() {
		if onReady != nil && !killed && strings.HasPrefix(sc.Text(), "ready ") {
			onReady()
		}
		if r, ok := parseReport(sc.Text()); ok {
			reports = append(reports, r)
		}
		if killAfter == 0 || len(reports) >= killAfter {
			kill()
		}
	}
	kill()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Exited() {
		t.Fatalf("crash child did not die by the kill: %v\nstderr:\n%s", err, stderr.String())
	}
	return reports
}

// checkLockedElsewhere asserts that the session a live child process holds
// is refused here with ErrInUse.
func checkLockedElsewhere(t *testing.T, open Opener, dir string) {
	t.Helper()
	st, err := open(dir)
	must(t, err)
	defer func() { must(t, st.Close()) }()
	if _, w, err := st.Open(context.Background(), crashID); !errors.Is(err, sessionlog.ErrInUse) {
		if w != nil {
			_ = w.Close()
		}
		t.Fatalf("Open of a session a live child process writes: got %v, want ErrInUse", err)
	}
}

func verifyAfterCrash(t *testing.T, open Opener, dir string, reports []report) (closers int) {
	t.Helper()
	closers, err := checkAfterCrash(open, dir, reports)
	must(t, err)
	return closers
}

// checkAfterCrash opens the crashed session and checks the reported events,
// the repair (committed exactly once) and that a new turn appends cleanly.
// It returns how many closers the repair committed.
func checkAfterCrash(open Opener, dir string, reports []report) (closers int, err error) {
	ctx := context.Background()
	st, err := open(dir)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	l, w, err := st.Open(ctx, crashID)
	if errors.Is(err, sessionlog.ErrNotFound) && len(reports) == 0 {
		return 0, nil // killed before the session was created
	}
	if err != nil {
		return 0, fmt.Errorf("open after a crash: %w", err)
	}
	if err := checkReports(l.Log.Events(), reports); err != nil {
		return 0, errors.Join(err, w.Close())
	}
	n := l.Log.Len()
	closers = len(l.Closers)
	if err := w.Close(); err != nil {
		return 0, err
	}
	l2, w2, err := st.Open(ctx, crashID)
	if err != nil {
		return 0, fmt.Errorf("second Open after a crash: %w", err)
	}
	sess := sessionlog.NewSession(l2.Log, w2)
	if len(l2.Closers) != 0 || l2.Log.Len() != n {
		return 0, errors.Join(fmt.Errorf("second Open added %d closers (log %d → %d events)", len(l2.Closers), n, l2.Log.Len()), sess.Close())
	}
	b := NewBuilder(n)
	b.Turn(NextTurn(l2.Log.Events()), "after the crash", sessionlog.ReasonResume)
	if err := errors.Join(sess.Append(ctx, b.Take()...), sess.Close()); err != nil {
		return 0, fmt.Errorf("new turn after a crash: %w", err)
	}
	l3, err := st.Inspect(ctx, crashID)
	if err != nil {
		return 0, fmt.Errorf("inspect after the new turn: %w", err)
	}
	if len(l3.Closers) != 0 || l3.Log.Len() != b.Next() {
		return 0, fmt.Errorf("after the new turn: %d events, %d closers; want %d, 0", l3.Log.Len(), len(l3.Closers), b.Next())
	}
	return closers, nil
}

// checkReports checks that every event reported synced is present and
// unchanged.
func checkReports(events []sessionlog.Event, reports []report) error {
	for _, r := range reports {
		if r.seq >= len(events) {
			return fmt.Errorf("synced seq %d (%s) lost: the log has %d events", r.seq, r.typ, len(events))
		}
		e := &events[r.seq]
		if e.Type != r.typ || crc32.ChecksumIEEE(e.AppendJSON(nil)) != r.crc {
			return fmt.Errorf("synced seq %d changed: reported %s %08x, found %s", r.seq, r.typ, r.crc, e.AppendJSON(nil))
		}
	}
	return nil
}
