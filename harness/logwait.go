package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/reel-agent/reel/harness/scenario"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// The log-based wait steps (waitForTurnStart, waitForTurnEnd,
// waitForSubagentTurnEnd and the settlement marker of waitForFile): each
// reads the session logs the agent is writing in the run's state dir until
// they show what the step waits for, as the reference's snapshot harness
// does (packages/test-support/acp-snapshot/src/harness.ts of
// github.com/toninfo/deepseek-harness). A turn the agent starts by itself
// (a background subagent's notice) has no prompt the client could wait
// for; its log is the only witness.

// logPoll bounds how long a log-based wait goes without reading the logs
// again when no change of the state dir woke it; the step's deadline is
// the only bound on how long it waits.
const logPoll = 10 * time.Millisecond

// SettlementMarker is the file the reference's snapshot suite writes into
// the run's cwd whenever a background subagent settles
// (examples/acp-agent/tests/fixtures/subagent-settlement-marker.ts, on
// every subagent/end). reel writes no such file: in a scenario whose
// preparation names it (Runner.SettlementMarker), a waitForFile step for it
// waits for a settlement notice in the session logs instead.
const SettlementMarker = ".dsh-snapshot-subagent-settled"

// settledKind is the source kind of a background subagent's settlement
// notice in its parent's log.
const settledKind = "subagent-settled"

// logTurns is what the waits read of one session log.
type logTurns struct {
	// open is the number of the turn the log holds open (its last
	// turn/start has no turn/end after it); 0 when none is open.
	open int
	// started and ended are the highest turn numbers a turn/start and a
	// turn/end carry; 0 when there is none.
	started, ended int
	// ownWork says the session did model work of its own: a
	// request/header follows its last subagent/descriptor (or, in a log
	// without a descriptor, it has a request/header).
	ownWork bool
	// settled says a settlement notice reached the session: a user
	// message, or a message inserted into its inbox, whose source kind is
	// subagent-settled.
	settled bool
}

// String describes the turns for a timeout message.
func (t logTurns) String() string {
	s := fmt.Sprintf("turns started up to %d, ended up to %d", t.started, t.ended)
	if t.open > 0 {
		s += fmt.Sprintf(", turn %d open", t.open)
	}
	return s
}

// readTurns reads the complete records of the log at path. A log that does
// not exist yet is no error: ok is false. A torn last line (a record being
// written) is left out.
func readTurns(path string) (t logTurns, ok bool, err error) {
	d, err := jsonl.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, false, nil
	}
	if err != nil {
		return t, false, err
	}
	descriptor, request := -1, -1
	for i := range d.Events {
		e := &d.Events[i]
		switch e.Type {
		case sessionlog.TypeTurnStart:
			td, err := sessionlog.DecodeData[sessionlog.TurnData](e)
			if err != nil {
				return t, true, fmt.Errorf("%s: seq %d: %w", path, e.Seq, err)
			}
			t.open, t.started = td.Turn, max(t.started, td.Turn)
		case sessionlog.TypeTurnEnd:
			td, err := sessionlog.DecodeData[sessionlog.TurnEndData](e)
			if err != nil {
				return t, true, fmt.Errorf("%s: seq %d: %w", path, e.Seq, err)
			}
			t.open, t.ended = 0, max(t.ended, td.Turn)
		case sessionlog.TypeSubagentDescriptor:
			descriptor = i
		case sessionlog.TypeRequestHeader:
			request = i
		case sessionlog.TypeUserMessage, "agent/inbox/spliced":
			t.settled = t.settled || carriesSettlement(e)
		}
	}
	t.ownWork = request > descriptor
	return t, true, nil
}

// carriesSettlement reports whether a user/message, or an inbox splice's
// inserted messages, include a settlement notice.
func carriesSettlement(e *sessionlog.Event) bool {
	type src struct {
		Source struct {
			Kind string `json:"kind"`
		} `json:"source"`
	}
	var d struct {
		src
		Inserted []src `json:"inserted"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return false
	}
	if d.Source.Kind == settledKind {
		return true
	}
	for _, m := range d.Inserted {
		if m.Source.Kind == settledKind {
			return true
		}
	}
	return false
}

// pollLogs calls check until it is satisfied or ctx ends: at once, then
// whenever a file of dir (the state dir the logs are in) changes, and at
// least every logPoll. The watch is set up only when the first check is
// not satisfied, and is in place before the next check, so a change
// between a check and the wait still wakes it. check says whether the
// wait is over and describes what it saw (for the timeout message); an
// error of check (a log half written, say) is retried and reported if the
// wait times out.
func pollLogs(ctx context.Context, dir, what string, check func() (bool, string, error)) error {
	var w *dirWatch
	watched := false
	defer func() { w.close() }()
	for {
		done, saw, err := check()
		if done && err == nil {
			return nil
		}
		if !watched {
			// nil when there is no dir yet or no inotify: the logPoll
			// tick alone.
			w, _ = watchDir(dir)
			watched = true
			continue
		}
		if !w.wait(ctx, logPoll) {
			switch {
			case err != nil:
				return fmt.Errorf("waiting until %s: %w (the last read failed: %v)", what, ctx.Err(), err)
			case saw != "":
				return fmt.Errorf("waiting until %s: %w (the log shows %s)", what, ctx.Err(), saw)
			}
			return fmt.Errorf("waiting until %s: %w", what, ctx.Err())
		}
	}
}

// waitTurnStarted waits until the log at path has a turn/start numbered
// minimum or higher. The turn may have ended since: a fast turn's
// turn/end can be written before the first poll.
func waitTurnStarted(ctx context.Context, path string, minimum int) error {
	return pollLogs(ctx, filepath.Dir(path), fmt.Sprintf("%s starts turn %d", filepath.Base(path), minimum), func() (bool, string, error) {
		t, ok, err := readTurns(path)
		if !ok || err != nil {
			return false, "", err
		}
		return t.started >= minimum, t.String(), nil
	})
}

// waitNoOpenTurn waits until the log at path holds no open turn: its last
// turn/start is followed by a turn/end (or it has no turn, or it does not
// exist).
func waitNoOpenTurn(ctx context.Context, path string) error {
	return pollLogs(ctx, filepath.Dir(path), fmt.Sprintf("%s has no open turn", filepath.Base(path)), func() (bool, string, error) {
		t, ok, err := readTurns(path)
		if !ok || err != nil {
			return !ok && err == nil, "", err
		}
		return t.open == 0, t.String(), nil
	})
}

// waitChildTurnEnded waits until child session child (1-based, in fixture
// order: childSessions) of the state dir exists, did model work of its
// own, holds no open turn and has ended turn minimum or a later one.
// (The reference asks for a turn/end numbered exactly minimum; turns are
// numbered in order and each ends before the next starts, so with no turn
// open the two agree.)
func waitChildTurnEnded(ctx context.Context, stateDir string, child, minimum int) error {
	return pollLogs(ctx, stateDir, fmt.Sprintf("child session %d has ended turn %d", child, minimum), func() (bool, string, error) {
		cs, err := childSessions(stateDir)
		if err != nil {
			return false, "", err
		}
		if len(cs) < child {
			return false, fmt.Sprintf("%d child session(s)", len(cs)), nil
		}
		t, ok, err := readTurns(filepath.Join(stateDir, cs[child-1].ID+".jsonl"))
		if !ok || err != nil {
			return false, "", err
		}
		saw := t.String()
		if !t.ownWork {
			saw += ", no request/header after its subagent/descriptor"
		}
		return t.ownWork && t.open == 0 && t.ended >= minimum, saw, nil
	})
}

// waitSettled waits until a log of the state dir holds a settlement notice.
func waitSettled(ctx context.Context, stateDir string) error {
	return pollLogs(ctx, stateDir, "a background subagent's settlement notice reaches its parent's log", func() (bool, string, error) {
		paths, err := filepath.Glob(filepath.Join(stateDir, "*.jsonl"))
		if err != nil {
			return false, "", err
		}
		for _, p := range paths {
			t, ok, err := readTurns(p)
			if err != nil {
				return false, "", err
			}
			if ok && t.settled {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("no notice in %d log(s)", len(paths)), nil
	})
}

// sessionLog is the path of the log of fixture session idx.
func (d *driver) sessionLog(idx int) (string, error) {
	id, err := d.sessionID(idx)
	if err != nil {
		return "", err
	}
	return filepath.Join(d.run.StateDir, id+".jsonl"), nil
}

// WaitForTurnStart waits until the session's log has started turn
// MinimumTurn (absent: 1) or a later one.
func (d *driver) WaitForTurnStart(ctx context.Context, st scenario.Step) error {
	path, err := d.sessionLog(st.Session)
	if err != nil {
		return err
	}
	return waitTurnStarted(ctx, path, max(st.MinimumTurn, 1))
}

// WaitForTurnEnd waits for the prompts sent without waiting to be
// answered, then until the session's log holds no open turn (a turn the
// agent started by itself ends with no prompt pending).
func (d *driver) WaitForTurnEnd(ctx context.Context, st scenario.Step) error {
	if err := d.waitPending(ctx); err != nil {
		return err
	}
	path, err := d.sessionLog(st.Session)
	if err != nil {
		return err
	}
	return waitNoOpenTurn(ctx, path)
}

// WaitForSubagentTurnEnd waits until child Child (absent: 1) has ended
// turn MinimumTurn (absent: 1) or a later one.
func (d *driver) WaitForSubagentTurnEnd(ctx context.Context, st scenario.Step) error {
	return waitChildTurnEnded(ctx, d.run.StateDir, max(st.Child, 1), max(st.MinimumTurn, 1))
}

// WaitForFile waits until Path exists in the run's cwd; for the run's
// settlement marker, until a settlement notice is in a log (or the file
// exists).
func (d *driver) WaitForFile(ctx context.Context, st scenario.Step) error {
	path := filepath.Join(d.run.Cwd, filepath.FromSlash(st.Path))
	if d.r.SettlementMarker == "" || st.Path != d.r.SettlementMarker {
		return waitForFile(ctx, path)
	}
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	return firstOf(ctx, func(ctx context.Context) error { return waitForFile(ctx, path) },
		func(ctx context.Context) error { return waitSettled(ctx, d.run.StateDir) })
}
