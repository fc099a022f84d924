package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/reel-agent/reel/harness/rpcclient"
	"github.com/reel-agent/reel/harness/scenario"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// Session titles arrive after a turn has ended (reel asks its model for a
// title once the first turn is over), so what a run shows depends on when
// the harness looks. The driver makes it deterministic: after every step
// that ends a prompt it waits until each title call the agent started is
// settled the way the recording settled it (replay, refresh) or for a
// bounded moment (record), and waitForTitleAfterTurnEnd waits for the
// title itself, as the reference's suite does.

// titlePoll bounds how long the driver goes without rereading a log while
// it waits, when no change of the state dir woke it (watchDir).
const titlePoll = 5 * time.Millisecond

// recordTitleWait bounds the wait for a title in record mode, where no
// recording says whether one comes (reel gives a title call 5 s).
const recordTitleWait = 6 * time.Second

// titleFacts is what a log says of its titles: the title requests, which
// of them were answered (by a provider title before the next request),
// whether the last one follows the last turn end (a later turn means it
// was settled before that turn began), and the latest title after the
// last turn end ("" when none).
type titleFacts struct {
	answered    []bool
	lastIsFresh bool
	afterTurn   string
}

func readTitleFacts(events []sessionlog.Event) titleFacts {
	var f titleFacts
	for i := range events {
		e := &events[i]
		switch e.Type {
		case sessionlog.TypeTitleLLMRequest:
			f.answered = append(f.answered, false)
			f.lastIsFresh = true
		case sessionlog.TypeTurnEnd:
			f.afterTurn, f.lastIsFresh = "", false
		case sessionlog.TypeSessionTitle:
			d, err := sessionlog.DecodeData[sessionlog.SessionTitleData](e)
			if err != nil {
				continue
			}
			f.afterTurn = d.Title
			if n := len(f.answered); n > 0 && d.Source.Kind == sessionlog.TitleProvider {
				f.answered[n-1] = true
			}
		}
	}
	return f
}

// liveTitles reads the titles of the log session id has written so far (a
// torn last line is still being written and is left out). It decodes the
// records without checking the log's rules (each wake of a wait rereads
// the log): the run's logs are validated whole once it ends (harvest).
func (d *driver) liveTitles(id string) (titleFacts, error) {
	data, err := jsonl.ReadFile(filepath.Join(d.run.StateDir, id+".jsonl"))
	if err != nil {
		return titleFacts{}, err
	}
	return readTitleFacts(data.Events), nil
}

// recordedFacts is a cached result of recordedTitles.
type recordedFacts struct {
	facts titleFacts
	ok    bool
}

// recordedTitles reads the titles of fixture session idx's recording (none
// in record mode, or when the fixture has no log for it). A recording does
// not change during a run: it is read once.
func (d *driver) recordedTitles(idx int) (titleFacts, bool) {
	if c, ok := d.recorded[idx]; ok {
		return c.facts, c.ok
	}
	f, ok := d.readRecordedTitles(idx)
	if d.recorded == nil {
		d.recorded = map[int]recordedFacts{}
	}
	d.recorded[idx] = recordedFacts{f, ok}
	return f, ok
}

func (d *driver) readRecordedTitles(idx int) (titleFacts, bool) {
	if d.r.Mode == Record || idx >= len(d.sc.Sessions) {
		return titleFacts{}, false
	}
	data, err := jsonl.ReadFile(d.sc.Sessions[idx])
	if err != nil {
		return titleFacts{}, false
	}
	return readTitleFacts(data.Events), true
}

// settleTitles waits until every title call of the process's sessions is
// settled: answered where the recording answered it, and for at most
// recordTitleWait in record mode. A call the recording left unanswered
// (the title model failed) is not waited for; neither is an agent that
// never answers one the recording answered, past ctx: the comparison
// reports that.
func (d *driver) settleTitles(ctx context.Context) {
	var w *dirWatch // opened at the first wait: most calls need none
	watched := false
	defer func() { w.close() }()
	for idx, id := range d.run.SessionIDs {
		if d.run.Refused[idx] {
			continue
		}
		want, replayed := d.recordedTitles(idx)
		wctx := ctx
		if !replayed {
			var cancel context.CancelFunc
			wctx, cancel = context.WithTimeout(ctx, recordTitleWait)
			defer cancel()
		}
		for {
			got, err := d.liveTitles(id)
			if err != nil {
				break
			}
			if settled(got, want, replayed) {
				// The title is logged before the client is shown it: the
				// next step waits for the session_info_update too, so its
				// frames never overtake it.
				if n := len(got.answered); n > 0 && got.answered[n-1] && got.lastIsFresh && got.afterTurn != "" {
					_ = d.waitTitleShown(wctx, id, got.afterTurn)
				}
				break
			}
			if !watched {
				// In place before the reread: a write after the read
				// above wakes the wait (nil: the titlePoll tick alone).
				w, _ = watchDir(d.run.StateDir)
				watched = true
				continue
			}
			if !w.wait(wctx, titlePoll) {
				return
			}
		}
	}
}

// waitTitleShown waits for the session_info_update showing session id's
// title.
func (d *driver) waitTitleShown(ctx context.Context, id, title string) error {
	_, err := d.p.client.WaitFor(ctx, func(n rpcclient.Notification) bool {
		if n.Update != "session_info_update" || n.SessionID != id {
			return false
		}
		var p struct {
			Update struct {
				Title *string `json:"title"`
			} `json:"update"`
		}
		return json.Unmarshal(n.Params, &p) == nil && p.Update.Title != nil && *p.Update.Title == title
	})
	return err
}

// settled reports whether the last title call of got needs no more waiting.
func settled(got, want titleFacts, replayed bool) bool {
	n := len(got.answered)
	if n == 0 || got.answered[n-1] || !got.lastIsFresh {
		return true
	}
	return replayed && (n > len(want.answered) || !want.answered[n-1])
}

// WaitForTitleAfterTurnEnd waits for the session's pending prompt to end,
// then for a session/title after the last turn/end on its log and for the
// session_info_update that shows it to the client.
func (d *driver) WaitForTitleAfterTurnEnd(ctx context.Context, st scenario.Step) error {
	if err := d.waitPending(ctx); err != nil {
		return err
	}
	id, err := d.sessionID(st.Session)
	if err != nil {
		return err
	}
	var w *dirWatch
	watched := false
	defer func() { w.close() }()
	title := ""
	for title == "" {
		f, err := d.liveTitles(id)
		if err == nil {
			title = f.afterTurn
		}
		if title != "" {
			break
		}
		if !watched {
			// In place before the reread (nil: the titlePoll tick
			// alone).
			w, _ = watchDir(d.run.StateDir)
			watched = true
			continue
		}
		if !w.wait(ctx, titlePoll) {
			return fmt.Errorf("session %d logged no session/title after its last turn/end: %w", st.Session, ctx.Err())
		}
	}
	if err := d.waitTitleShown(ctx, id, title); err != nil {
		return fmt.Errorf("session %d logged the title %q but no session_info_update showed it: %w", st.Session, title, err)
	}
	return nil
}

// ResumeSession sends initialize and session/resume to the fresh process.
func (d *driver) ResumeSession(ctx context.Context, st scenario.Step) error {
	id, err := d.sessionID(st.Session)
	if err != nil {
		return err
	}
	if err := d.p.client.Call(ctx, "initialize", initializeParams(d.sc), nil); err != nil {
		return err
	}
	return d.p.client.Call(ctx, "session/resume", map[string]any{"sessionId": id, "cwd": d.run.Cwd, "mcpServers": d.mcpServers}, nil)
}
