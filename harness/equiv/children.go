package equiv

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/reel-agent/reel/sessionlog"
)

// lineage is what a log's header says of its place among a side's logs:
// a child (subagent) session names its parent, its delegation depth and,
// for a fork, how many of its first events are a copy of the parent's.
type lineage struct {
	child bool
	// parent is the parent's session id; parentIndex its log's index in
	// the side (-1 when the side holds no log with that id).
	parent      string
	parentIndex int
	depth       int
	// seed is the header's seedLength: events 0 … seed-1 are the parent's
	// events copied (section 3.4 of docs/subagents-reference.md).
	seed int
}

// lineageOf reads the lineage of log i of logs.
func lineageOf(logs []*Log, i int) lineage {
	c, ok := logs[i].Header.Child()
	ln := lineage{child: ok, parent: c.Parent, parentIndex: -1, depth: c.Depth, seed: c.SeedLength}
	if ok {
		for j, l := range logs {
			if l.Header.ID == c.Parent {
				ln.parentIndex = j
				break
			}
		}
	}
	return ln
}

// seedEnd is the index of a log's first own event: past the events its
// header says were copied from its parent (clamped to the log).
func seedEnd(l *Log) int {
	c, ok := l.Header.Child()
	if !ok || c.SeedLength <= 0 {
		return 0
	}
	return min(c.SeedLength, len(l.Events))
}

// sessionPrefix names log i of a side in differences: "session N: " for
// a top-level session, "child K: " for the K-th child log (1-based, in
// the side's order, which is session.K.jsonl when one session is
// top-level).
func sessionPrefix(logs []*Log, i int) string {
	if !lineageOf(logs, i).child {
		return fmt.Sprintf("session %d: ", i)
	}
	k := 0
	for j := 0; j <= i; j++ {
		if lineageOf(logs, j).child {
			k++
		}
	}
	return fmt.Sprintf("child %d: ", k)
}

// checkLineage compares what the headers of log i say on both sides —
// child or top-level, which log is the parent, the delegation depth and
// the seed length — and that each side's fork seed is a copy of its
// parent's first events closed by session/end-seed.
func checkLineage(c *cmp, want, got *Side, i int) {
	w, g := lineageOf(want.Logs, i), lineageOf(got.Logs, i)
	describe := func(ln lineage) string {
		switch {
		case !ln.child:
			return "a top-level session"
		case ln.parentIndex < 0:
			return fmt.Sprintf("a child of %s, which is none of the side's sessions", ln.parent)
		}
		return "a child of " + sessionName(ln.parentIndex)
	}
	if w.child != g.child || w.parentIndex != g.parentIndex {
		c.diff("lineage", "header", "parentSession: %s", c.vs(describe(w), describe(g)))
	}
	if w.depth != g.depth {
		c.diff("lineage", "header", "delegationDepth: %s", c.vs(strconv.Itoa(w.depth), strconv.Itoa(g.depth)))
	}
	// How many events the seed holds depends on how many the parent's
	// log has, which is each system's own; what the seed inherits is the
	// fact: the parent's turns through its last completed one.
	if we, ge := seedExtent(c.wlog, w.seed), seedExtent(c.glog, g.seed); we != ge {
		c.diff("lineage", "header", "seedLength (the events copied from the parent): %s", c.vs(fmt.Sprintf("%d (%s)", w.seed, we), fmt.Sprintf("%d (%s)", g.seed, ge)))
	}
	if w.seed > 0 {
		if p := seedProblem(want.Logs, i, w); p != "" {
			c.unchecked("the seed of %s: %s", c.wlog.Name, p)
		}
	}
	if g.seed > 0 {
		if p := seedProblem(got.Logs, i, g); p != "" {
			c.diff("lineage", "seed", "%s: %s", c.r.Got, p)
		}
	}
}

// seedExtent describes what a seed of n events inherits: "none", or the
// parent's completed turns it holds and whether it ends at a turn's end
// ("the parent's turns through turn 1").
func seedExtent(l *Log, n int) string {
	if n <= 0 {
		return "none"
	}
	n = min(n, len(l.Events))
	last := 0
	for _, e := range l.Events[:n] {
		if e.Type != sessionlog.TypeTurnEnd {
			continue
		}
		if d, err := sessionlog.DecodeData[sessionlog.TurnEndData](&e); err == nil {
			last = d.Turn
		}
	}
	s := "no completed turn of the parent"
	if last > 0 {
		s = "the parent's turns through turn " + strconv.Itoa(last)
	}
	if l.Events[n-1].Type != sessionlog.TypeTurnEnd {
		s += ", then part of the turn in progress (" + l.Events[n-1].Type + " last)"
	}
	return s
}

// sessionName is the file name of log i in a scenario folder:
// "session.jsonl" or "session.N.jsonl".
func sessionName(i int) string {
	if i == 0 {
		return "session.jsonl"
	}
	return "session." + strconv.Itoa(i) + ".jsonl"
}

// seedProblem says how the fork seed of log i departs from its parent's
// log: its first ln.seed events must be the parent's first events (same
// seq, type, surface op, sources and data), and the next one must be
// session/end-seed. "" when it holds.
func seedProblem(logs []*Log, i int, ln lineage) string {
	l := logs[i]
	if ln.seed > len(l.Events) {
		return fmt.Sprintf("the header's seedLength %d exceeds the log's %d event(s)", ln.seed, len(l.Events))
	}
	if ln.parentIndex < 0 {
		return fmt.Sprintf("its parent %s is not among the logs, so the seed cannot be checked against it", ln.parent)
	}
	p := logs[ln.parentIndex]
	if ln.seed > len(p.Events) {
		return fmt.Sprintf("the seed holds %d event(s) but the parent's log only %d", ln.seed, len(p.Events))
	}
	for k := 0; k < ln.seed; k++ {
		a, b := &p.Events[k], &l.Events[k]
		if a.Seq != b.Seq || a.Type != b.Type || !slices.Equal(a.SourceEventSeqs, b.SourceEventSeqs) ||
			opString(a.SurfaceOp) != opString(b.SurfaceOp) || !bytes.Equal(a.Data, b.Data) {
			return fmt.Sprintf("seed event %d (seq %d %s) is not the parent's seq %d (%s): the seed must be a copy of the parent's first %d events", k, b.Seq, b.Type, a.Seq, a.Type, ln.seed)
		}
	}
	if ln.seed == len(l.Events) || l.Events[ln.seed].Type != sessionlog.TypeEndSeed {
		next := "the end of the log"
		if ln.seed < len(l.Events) {
			next = fmt.Sprintf("seq %d %s", l.Events[ln.seed].Seq, l.Events[ln.seed].Type)
		}
		return fmt.Sprintf("the seed of %d event(s) is not closed by %s (found %s)", ln.seed, sessionlog.TypeEndSeed, next)
	}
	return ""
}

// opString renders a surface op for comparison.
func opString(op *sessionlog.SurfaceOp) string {
	if op == nil {
		return ""
	}
	return string(op.AppendJSON(nil))
}

// countChildren is how many of logs are child sessions.
func countChildren(logs []*Log) int {
	n := 0
	for i := range logs {
		if lineageOf(logs, i).child {
			n++
		}
	}
	return n
}

// sessionCounts describes two sides with different numbers of logs: by
// their child sessions when that is where they differ.
func sessionCounts(want, got *Side) string {
	wc, gc := countChildren(want.Logs), countChildren(got.Logs)
	if len(want.Logs)-wc == len(got.Logs)-gc {
		return fmt.Sprintf("%s has %d child (subagent) session log(s), %s %d: the children are compared in order, the first %d only",
			want.Label, wc, got.Label, gc, min(wc, gc))
	}
	return fmt.Sprintf("%s has %d session log(s) (%d of them children), %s %d (%d of them children)", want.Label, len(want.Logs), wc, got.Label, len(got.Logs), gc)
}
