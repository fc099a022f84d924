package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reel-agent/reel/agent/checkpoint"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// checkpointCommands lists the checkpoint slash commands (none when
// checkpoints are off).
func (e *Engine) checkpointCommands() []Command {
	if e.cfg.CheckpointDir == "" {
		return nil
	}
	return []Command{
		{Name: "undo", Description: "Take the last turn back: restore the files it changed and drop it from the conversation."},
		{Name: "rewind", Description: "Rewind to before turn N: /rewind N (add dry-run to list the files, force to overwrite your own changes)."},
		{Name: "checkpoints", Description: "List the workspace checkpoints of this session, one per turn that could change files."},
	}
}

// parseCheckpointCommand reads a checkpoint slash command from a prompt of
// one text block (checkpoint.ParseCommand); ok is false for any other
// prompt.
func parseCheckpointCommand(prompt []Content) (req checkpoint.Request, ok bool, err error) {
	if len(prompt) != 1 || prompt[0].Text == "" {
		return req, false, nil
	}
	return checkpoint.ParseCommand(prompt[0].Text)
}

// checkpointStore is the session's checkpoint store; nil when checkpoints
// are off, and for a child session (its parent's tool call captured the
// workspace before the child ran).
func (s *Session) checkpointStore() *checkpoint.Store {
	dir := s.eng.cfg.CheckpointDir
	if dir == "" || s.child {
		return nil
	}
	st := checkpoint.Open(filepath.Join(dir, checkpoint.StoreName(s.id)), s.cwd, checkpoint.DefaultLimits)
	st.HoldAfter(s.eng.cfg.RestoreHold)
	return st
}

// settleRestore closes a restore the previous process did not finish (it
// was killed in the middle): from the restore's journal it logs which
// files were restored and which were left as they were.
func (s *Session) settleRestore(ctx context.Context) error {
	last, ok := s.lastCheckpoint()
	if !ok || last.Kind != sessionlog.CheckpointRestore {
		return nil
	}
	st := s.checkpointStore()
	d := sessionlog.CheckpointData{Kind: sessionlog.CheckpointRestored, Turn: last.Turn}
	switch {
	case st == nil:
		d.Note = "interrupted: the process ended during the restore, and checkpoints are off now, so which files were restored is unknown"
	case filepath.Dir(last.Journal) != st.Dir():
		d.Note = "interrupted: the restore's journal is not in the session's checkpoint store"
	default:
		_, done, ended, err := checkpoint.JournalDone(last.Journal)
		switch {
		case err != nil:
			d.Note = "interrupted: " + err.Error()
		case ended:
			d.Paths, d.Tree = done, last.Tree
		default:
			d.Paths = done
			d.Note = fmt.Sprintf("interrupted: the process ended during the restore; %d of %d files were restored, the others are as they were before it", len(done), len(last.Paths))
		}
	}
	if _, err := s.emit(ctx, s.eng.now(), sessionlog.TypeWorkspaceCheckpoint, d, nil, nil); err != nil {
		return err
	}
	return s.checkpoint(ctx)
}

// captureWorkspace captures the workspace once per turn, before the
// turn's first tool call runs (any tool may change files: bash, a
// background job, a subagent), unless the session is read-only.
func (r *run) captureWorkspace(ctx context.Context) {
	s := r.s
	st := s.checkpointStore()
	if st == nil || s.Mode() == sandbox.ReadOnly {
		return
	}
	s.cpMu.Lock()
	defer s.cpMu.Unlock()
	if s.cpTurn == r.turn {
		return
	}
	s.cpTurn, s.cpTree = r.turn, ""
	wctx := context.WithoutCancel(ctx)
	snap, err := st.Capture(wctx)
	d := sessionlog.CheckpointData{Kind: sessionlog.CheckpointCapture, Turn: r.turn, Tree: snap.Tree, Files: snap.Files, Bytes: snap.Bytes, Left: snap.Left}
	switch {
	case err != nil:
		d = sessionlog.CheckpointData{Kind: sessionlog.CheckpointSkipped, Turn: r.turn, Note: err.Error()}
	case snap.Skipped != "":
		d = sessionlog.CheckpointData{Kind: sessionlog.CheckpointSkipped, Turn: r.turn, Files: snap.Files, Bytes: snap.Bytes, Note: snap.Skipped}
	default:
		s.cpTree = snap.Tree
	}
	if d.Kind == sessionlog.CheckpointSkipped {
		r.c.Updates.Thought(wctx, "No checkpoint for this turn (/undo cannot restore its files): "+d.Note+"\n")
	}
	if _, err := s.emit(wctx, r.e.now(), sessionlog.TypeWorkspaceCheckpoint, d, nil, nil); err != nil {
		r.e.log.Warn("checkpoint record", "session", s.id, "err", err)
	}
}

// captureOwed reports whether captureAfter has a workspace capture to
// take at the end of turn.
func (s *Session) captureOwed(turn int) bool {
	if s.eng.cfg.CheckpointDir == "" || s.child {
		return false
	}
	s.cpMu.Lock()
	defer s.cpMu.Unlock()
	return s.cpTurn == turn && s.cpTree != ""
}

// captureAfter records the workspace as the turn leaves it, when the turn
// captured a checkpoint: what a later rewind compares the workspace with
// to find the files the user changed since.
func (r *run) captureAfter(ctx context.Context) {
	s := r.s
	st := s.checkpointStore()
	if st == nil {
		return
	}
	s.cpMu.Lock()
	defer s.cpMu.Unlock()
	if s.cpTurn != r.turn || s.cpTree == "" {
		return
	}
	wctx := context.WithoutCancel(ctx)
	snap, err := st.Capture(wctx)
	if err != nil || snap.Tree == "" {
		return
	}
	if _, err := s.emit(wctx, r.e.now(), sessionlog.TypeWorkspaceCheckpoint, sessionlog.CheckpointData{
		Kind: sessionlog.CheckpointAfter, Turn: r.turn, Tree: snap.Tree, Files: snap.Files, Bytes: snap.Bytes}, nil, nil); err != nil {
		r.e.log.Warn("checkpoint record", "session", s.id, "err", err)
	}
}

// checkpointCommand runs /undo, /rewind or /checkpoints in the turn the
// prompt opened and reports the outcome as agent text.
func (r *run) checkpointCommand(ctx context.Context, req checkpoint.Request, perr error) turnEnd {
	var text string
	var err error
	switch {
	case perr != nil:
		err = perr
	case req.List:
		text = r.s.listCheckpoints()
	default:
		text, err = r.s.rewind(ctx, r.turn, req)
	}
	if err != nil {
		text = err.Error()
	}
	r.c.Updates.Text(ctx, text)
	return endWith(sessionlog.EndCompleted, StopEndTurn)
}

// cpRecord is one workspace/checkpoint record of the log.
type cpRecord struct {
	seq int
	d   sessionlog.CheckpointData
}

// turnInfo is what rewinding needs of the log: the checkpoint records in
// order, and each turn's turn/start seq.
func (s *Session) turnInfo() (recs []cpRecord, starts map[int]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	starts = map[int]int{}
	for i, e := range s.log.Log().Events() {
		switch e.Type {
		case sessionlog.TypeTurnStart:
			if d, err := sessionlog.DecodeData[sessionlog.TurnData](&e); err == nil {
				starts[d.Turn] = i
			}
		case sessionlog.TypeWorkspaceCheckpoint:
			if d, err := sessionlog.DecodeData[sessionlog.CheckpointData](&e); err == nil {
				recs = append(recs, cpRecord{seq: i, d: d})
			}
		}
	}
	return recs, starts
}

// lastCheckpoint is the last of turnInfo's records (read from the end of
// the log, not from its start: a load settles a restore by it); false
// when there is none.
func (s *Session) lastCheckpoint() (sessionlog.CheckpointData, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	evs := s.log.Log().Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type != sessionlog.TypeWorkspaceCheckpoint {
			continue
		}
		if d, err := sessionlog.DecodeData[sessionlog.CheckpointData](&evs[i]); err == nil {
			return d, true
		}
	}
	return sessionlog.CheckpointData{}, false
}

// listCheckpoints is the text of /checkpoints.
func (s *Session) listCheckpoints() string {
	recs, _ := s.turnInfo()
	ds := make([]sessionlog.CheckpointData, len(recs))
	for i, r := range recs {
		ds[i] = r.d
	}
	return checkpoint.Listing(ds)
}

// undoTarget is the turn /undo takes back: the turn of the newest event
// on the surface (0: nothing to undo).
func (s *Session) undoTarget(starts map[int]int) int {
	s.mu.Lock()
	seqs := s.log.Log().Surface().Seqs()
	last := -1
	if len(seqs) > 0 {
		last = slices.Max(seqs)
	}
	s.mu.Unlock()
	best, bestSeq := 0, -1
	for t, seq := range starts {
		if seq < last && seq > bestSeq {
			best, bestSeq = t, seq
		}
	}
	return best
}

// rewind restores the workspace to its checkpoint before turn
// req.Turn and takes that turn and the later ones off the surface (one
// appended user/message replacing them, never a truncation). cur is the
// turn running the command.
func (s *Session) rewind(ctx context.Context, cur int, req checkpoint.Request) (string, error) {
	recs, starts := s.turnInfo()
	n := req.Turn
	if n == 0 {
		if n = s.undoTarget(starts); n == 0 {
			return "Nothing to undo.", nil
		}
	}
	start, ok := starts[n]
	if !ok || n >= cur {
		return "", fmt.Errorf("cannot rewind to turn %d: the session's turns are 1 to %d", n, cur-1)
	}
	// The surface range taken off: from the first surface entry after turn
	// n began. Every entry from there on must be of turn n or later, a
	// replacement only of such entries.
	s.mu.Lock()
	lg := s.log.Log()
	seqs := slices.Clone(lg.Surface().Seqs())
	from := len(seqs)
	for i, seq := range seqs {
		if seq > start {
			from = i
			break
		}
	}
	var refuse string
	for _, seq := range seqs[from:] {
		e := lg.Event(seq)
		if seq < start {
			refuse = fmt.Sprintf("the conversation before turn %d was compacted after it (seq %d)", n, seq)
			break
		}
		if e.SurfaceOp != nil && e.SurfaceOp.Replace && slices.ContainsFunc(e.SourceEventSeqs, func(x int) bool { return x < start }) {
			refuse = fmt.Sprintf("a compaction at seq %d summarized turns before turn %d together with later ones", seq, n)
			break
		}
	}
	s.mu.Unlock()
	if refuse != "" {
		return "", fmt.Errorf("cannot rewind to turn %d: %s", n, refuse)
	}
	// The checkpoint: the first one taken at or after turn n.
	ci := slices.IndexFunc(recs, func(r cpRecord) bool {
		return r.d.Turn >= n && (r.d.Kind == sessionlog.CheckpointCapture || r.d.Kind == sessionlog.CheckpointSkipped)
	})
	st := s.checkpointStore()
	var plan checkpoint.Plan
	var target cpRecord
	switch {
	case ci < 0:
		// No turn since n could change files: only the conversation moves.
	case recs[ci].d.Kind == sessionlog.CheckpointSkipped && !req.Force:
		return "", fmt.Errorf("cannot restore the files of turn %d: its checkpoint was skipped (%s); /rewind %d force rewinds the conversation only", recs[ci].d.Turn, recs[ci].d.Note, n)
	case recs[ci].d.Kind == sessionlog.CheckpointSkipped:
	case st == nil:
		return "", fmt.Errorf("cannot restore the files of turn %d: checkpoints are off in this process (--checkpoints)", n)
	default:
		target = recs[ci]
		var err error
		if plan, err = st.PlanRestore(ctx, target.d.Tree, target.d.Left); err != nil {
			return "", fmt.Errorf("cannot rewind to turn %d: %w", n, err)
		}
		changed, err := userChanges(ctx, st, recs[ci:], plan)
		if err != nil {
			return "", fmt.Errorf("cannot rewind to turn %d: %w", n, err)
		}
		if len(changed) > 0 && !req.Force && !req.DryRun {
			return "", fmt.Errorf("refused: you changed %s since turn %d's checkpoint; a rewind would overwrite that. /rewind %d force overwrites them", strings.Join(changed, ", "), n, n)
		}
	}
	paths := checkpoint.Paths(plan.Changes)
	taken := len(seqs) - from
	outside := s.outsideNote(start)
	if req.DryRun {
		var b strings.Builder
		fmt.Fprintf(&b, "Rewinding to before turn %d would restore %d files and take %d messages off the conversation.\n", n, len(paths), taken)
		for _, p := range paths {
			fmt.Fprintf(&b, "- %s\n", p)
		}
		b.WriteString(outside)
		return b.String(), nil
	}
	wctx := context.WithoutCancel(ctx)
	var done []string
	if len(paths) > 0 {
		journal := st.Journal(cur)
		if _, err := s.emit(wctx, s.eng.now(), sessionlog.TypeWorkspaceCheckpoint, sessionlog.CheckpointData{
			Kind: sessionlog.CheckpointRestore, Turn: n, Tree: target.d.Tree, Paths: paths, Forced: req.Force, Journal: journal}, nil, nil); err != nil {
			return "", err
		}
		// The log says a restore began (and where its journal is) before any
		// file changes.
		if err := s.checkpoint(wctx); err != nil {
			return "", err
		}
		var rerr error
		done, rerr = st.Restore(wctx, plan, journal)
		d := sessionlog.CheckpointData{Kind: sessionlog.CheckpointRestored, Turn: n, Paths: done}
		if rerr != nil {
			d.Note = rerr.Error()
		} else {
			d.Tree = target.d.Tree
		}
		if _, err := s.emit(wctx, s.eng.now(), sessionlog.TypeWorkspaceCheckpoint, d, nil, nil); err != nil {
			return "", err
		}
		if rerr != nil {
			return "", fmt.Errorf("the restore stopped after %d of %d files (the conversation is not rewound): %w", len(done), len(paths), rerr)
		}
	}
	if taken > 0 {
		note := sessionlog.UserMessage{
			Content: []sessionlog.ContentPart{sessionlog.TextPart(fmt.Sprintf(
				"[The user rewound this conversation to before turn %d: the later messages were taken back and the workspace files restored to that point.]", n))},
			Source: sessionlog.MessageSource{Kind: sessionlog.SourceRewind},
			ID:     s.eng.newID(),
		}
		if _, err := s.emit(wctx, s.eng.now(), sessionlog.TypeUserMessage, note,
			sessionlog.ReplaceOp(seqs[from], seqs[len(seqs)-1]), seqs[from:]); err != nil {
			return "", err
		}
		s.mu.Lock()
		s.newSeries = true
		s.mu.Unlock()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Rewound to before turn %d: %d files restored, %d messages taken off the conversation.\n", n, len(done), taken)
	for _, p := range done {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	b.WriteString(outside)
	return b.String(), s.checkpoint(wctx)
}

// outsideNote is what a rewind of the turns from the log index start on
// cannot restore, for its report ("" when nothing): checkpoints hold the
// workspace only, so every file the file tools changed outside it is
// named, and a command that ran with full access (danger-full-access) is
// said to have possibly changed files outside it that are not restored.
func (s *Session) outsideNote(start int) string {
	s.mu.Lock()
	events := slices.Clone(s.log.Log().Events())
	s.mu.Unlock()
	var named []string
	var set *tools.Set
	mode, fullCmd := "", false
	for i := range events {
		e := &events[i]
		switch e.Type {
		case sessionlog.TypeSandboxMode:
			if d, err := sessionlog.DecodeData[sessionlog.SandboxModeData](e); err == nil {
				mode = d.Mode
			}
		case sessionlog.TypeToolCall:
			if i < start {
				continue
			}
			d, err := sessionlog.DecodeData[sessionlog.ToolCallData](e)
			if err != nil {
				continue
			}
			// The call as the tool set describes it (the one parse of its
			// arguments, paths resolved against the session's cwd): a file
			// tool's edit names its file; reads change nothing; any other
			// tool (bash, subagents, MCP, code) may change what it can
			// reach.
			if set == nil {
				set = s.toolsFor(s.Mode())
			}
			_, kind, locs := set.DescribeCall(&tools.Env{Cwd: s.cwd}, d.Name, json.RawMessage(d.Arguments))
			switch kind {
			case tools.KindEdit:
				for _, l := range locs {
					if p := outside(s.cwd, l.Path); p != "" && !slices.Contains(named, p) {
						named = append(named, p)
					}
				}
			case tools.KindRead, tools.KindSearch, tools.KindFetch, tools.KindThink:
			default:
				if mode == string(sandbox.DangerFullAccess) {
					fullCmd = true
				}
			}
		}
	}
	var b strings.Builder
	for _, p := range named {
		fmt.Fprintf(&b, "Not restored (outside the workspace): %s\n", p)
	}
	if fullCmd {
		b.WriteString("Tools in these turns ran with full access (danger-full-access) and may have changed files outside the workspace: those are not restored (checkpoints hold the workspace only).\n")
	}
	return b.String()
}

// outsidePath is the file a write or edit call's arguments name when it
// outside returns path, cleaned, when it lies outside cwd, else "".
func outside(cwd, path string) string {
	p := filepath.Clean(path)
	if rel, err := filepath.Rel(cwd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return ""
	}
	return p
}

// userChanges lists the files of plan the user changed since the
// checkpoint recs[0]: the differences between each turn's "after" tree
// (or a restore's) and the next capture, and between the last of them
// and the workspace now.
func userChanges(ctx context.Context, st *checkpoint.Store, recs []cpRecord, plan checkpoint.Plan) ([]string, error) {
	in := map[string]bool{}
	for _, c := range plan.Changes {
		in[c.Path] = true
	}
	seen := map[string]bool{}
	var out []string
	add := func(from, to string) error {
		cs, err := st.Diff(ctx, from, to)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if in[c.Path] && !seen[c.Path] {
				seen[c.Path] = true
				out = append(out, c.Path)
			}
		}
		return nil
	}
	prev := ""
	for _, r := range recs {
		switch {
		case r.d.Kind == sessionlog.CheckpointAfter, r.d.Kind == sessionlog.CheckpointRestored && r.d.Tree != "":
			prev = r.d.Tree
		case r.d.Kind == sessionlog.CheckpointCapture && prev != "":
			if err := add(prev, r.d.Tree); err != nil {
				return nil, err
			}
			prev = ""
		case r.d.Kind == sessionlog.CheckpointCapture, r.d.Kind == sessionlog.CheckpointSkipped:
			prev = ""
		}
	}
	if prev != "" {
		if err := add(prev, plan.Now); err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// rewoundSpans returns, for History, the seq spans [from, to) of the
// turns rewinds took back: from the turn/start of the first turn a rewind
// note replaced to the turn/start of the turn that ran the rewind.
func rewoundSpans(events []sessionlog.Event) [][2]int {
	var spans [][2]int
	lastStart := -1
	var starts []int
	for i := range events {
		e := &events[i]
		if e.Type == sessionlog.TypeTurnStart {
			lastStart = i
			starts = append(starts, i)
			continue
		}
		if e.Type != sessionlog.TypeUserMessage || e.SurfaceOp == nil || !e.SurfaceOp.Replace || len(e.SourceEventSeqs) == 0 || !isRewindNote(e) {
			continue
		}
		lo := slices.Min(e.SourceEventSeqs)
		from := -1
		for _, s := range starts {
			if s <= lo {
				from = s
			}
		}
		if from >= 0 && lastStart > from {
			spans = append(spans, [2]int{from, lastStart})
		}
	}
	return spans
}

// isRewindNote reports whether a user/message is a rewind's note.
func isRewindNote(e *sessionlog.Event) bool {
	d, err := sessionlog.DecodeData[sessionlog.UserMessage](e)
	return err == nil && d.Source.Kind == sessionlog.SourceRewind
}

// inSpans reports whether seq lies in one of spans.
func inSpans(spans [][2]int, seq int) bool {
	for _, s := range spans {
		if seq >= s[0] && seq < s[1] {
			return true
		}
	}
	return false
}
