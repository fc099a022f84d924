package harness

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/reel-agent/reel/harness/scenario"
	"github.com/reel-agent/reel/sessionlog"
)

// A scenario's child (subagent) sessions. A child is an ordinary session
// of the run's store whose header names its parent (parentSession). In a
// fixture the top-level sessions come first (session.jsonl, then
// session.N.jsonl in the order the script opens them) and every child
// follows, ordered by its header's createdAt, then its id — the numbering
// of the reference's suite (docs/subagents-reference.md, section 3.1).

// sessionInfo is what a session log's header says of it.
type sessionInfo struct {
	ID        string
	CreatedAt int64
	// Parent is the parent's session id, "" for a top-level session.
	Parent string
}

// readInfo reads the header of the log at path (its first line only).
func readInfo(path string) (sessionInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return sessionInfo{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return sessionInfo{}, fmt.Errorf("%s: %w", path, err)
		}
		return sessionInfo{}, fmt.Errorf("%s: empty log: %w", path, sessionlog.ErrHeader)
	}
	h, err := sessionlog.DecodeHeader(sc.Bytes())
	if err != nil {
		return sessionInfo{}, fmt.Errorf("%s: %w", path, err)
	}
	c, _ := h.Child()
	return sessionInfo{ID: h.ID, CreatedAt: h.CreatedAt, Parent: c.Parent}, nil
}

// sortChildren orders child sessions as fixtures number them: by
// createdAt, then id.
func sortChildren(cs []sessionInfo) {
	slices.SortStableFunc(cs, func(a, b sessionInfo) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
}

// childSessions lists the child sessions reel wrote in stateDir: every
// log whose header names a parentSession, in fixture order.
func childSessions(stateDir string) ([]sessionInfo, error) {
	paths, err := filepath.Glob(filepath.Join(stateDir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []sessionInfo
	for _, p := range paths {
		info, err := readInfo(p)
		if err != nil {
			return nil, fmt.Errorf("harvest the child sessions: %w", err)
		}
		if info.Parent == "" {
			continue
		}
		if filepath.Base(p) != info.ID+".jsonl" {
			return nil, fmt.Errorf("harvest the child sessions: %s holds session %s", p, info.ID)
		}
		out = append(out, info)
	}
	sortChildren(out)
	return out, nil
}

// harvestIDs are the sessions whose logs a run produced, in fixture
// order: the script's sessions, then every child found in the state dir.
func harvestIDs(run *Run) ([]string, error) {
	ids := slices.Clone(run.SessionIDs)
	children, err := childSessions(run.StateDir)
	if err != nil {
		return nil, err
	}
	for _, c := range children {
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// fixtureSessions reads the header of every recorded log of sc, in
// fixture order.
func fixtureSessions(sc *scenario.Scenario) ([]sessionInfo, error) {
	out := make([]sessionInfo, len(sc.Sessions))
	for i, p := range sc.Sessions {
		info, err := readInfo(p)
		if err != nil {
			return nil, err
		}
		out[i] = info
	}
	return out, nil
}

// replayOrder is the order in which a process opens the recorded sessions
// given with --replay: opens are the fixture sessions its script opens
// (in step order), children the fixture child sessions it creates. A
// process opens each session when it is created or loaded, so the order
// is by header createdAt (a loaded session was created before anything
// this process makes), the script's order among equals, then the
// children's own order.
func replayOrder(info []sessionInfo, opens, children []int) []int {
	order := append(slices.Clone(opens), children...)
	created := func(i int) int64 {
		if i < len(info) {
			return info[i].CreatedAt
		}
		return 0 // a session the fixture lacks: reported when it is opened
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(created(a), created(b)) })
	return order
}

// childrenBySegment assigns each fixture child session to the process
// that replays it: the first segment that opens its root session (the
// top-level session it descends from). It returns, per segment, the
// fixture indexes of its children in fixture order.
func childrenBySegment(info []sessionInfo, segOpens [][]int) ([][]int, error) {
	index := map[string]int{}
	for i, s := range info {
		index[s.ID] = i
	}
	root := func(i int) (int, error) {
		for range len(info) {
			if info[i].Parent == "" {
				return i, nil
			}
			p, ok := index[info[i].Parent]
			if !ok {
				return 0, fmt.Errorf("%s: the parent %s of child session %s is none of the fixture's sessions", sessionFile(i), info[i].Parent, info[i].ID)
			}
			i = p
		}
		return 0, fmt.Errorf("%s: the parentSession links of the fixture's sessions form a cycle", sessionFile(i))
	}
	out := make([][]int, len(segOpens))
	for i, s := range info {
		if s.Parent == "" {
			continue
		}
		r, err := root(i)
		if err != nil {
			return nil, err
		}
		seg := slices.IndexFunc(segOpens, func(opens []int) bool { return slices.Contains(opens, r) })
		if seg < 0 {
			return nil, fmt.Errorf("%s: child session %s descends from %s, which the script never opens", sessionFile(i), s.ID, sessionFile(r))
		}
		out[seg] = append(out[seg], i)
	}
	return out, nil
}
