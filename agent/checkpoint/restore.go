package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Plan is what a restore to a tree would change: the files that differ
// between the workspace now and the tree.
type Plan struct {
	// Now is the tree of the workspace as it is (captured for the plan).
	Now string
	// Target is the tree restored to.
	Target string
	// Changes are the files that differ, in path order.
	Changes []Change
}

// PlanRestore captures the workspace and lists what restoring tree would
// change.
// Files named in left (those the target's capture left out for their
// size) are never removed.
func (s *Store) PlanRestore(ctx context.Context, tree string, left []string) (Plan, error) {
	if err := s.Exists(ctx, tree); err != nil {
		return Plan{}, fmt.Errorf("checkpoint %s: %w", tree, err)
	}
	now, err := s.Capture(ctx)
	if err != nil {
		return Plan{}, err
	}
	if now.Tree == "" {
		return Plan{}, fmt.Errorf("cannot restore: %s", now.Skipped)
	}
	cs, err := s.Diff(ctx, now.Tree, tree)
	if err != nil {
		return Plan{}, err
	}
	keep := map[string]bool{}
	for _, l := range left {
		keep[l] = true
	}
	out := cs[:0]
	for _, c := range cs {
		if c.Blob == "" && keep[c.Path] {
			continue
		}
		out = append(out, c)
	}
	return Plan{Now: now.Tree, Target: tree, Changes: out}, nil
}

// Journal names the restore journal of a restore the caller numbers n
// (reel: the turn that runs it); Restore refuses to reuse one.
func (s *Store) Journal(n int) string {
	return filepath.Join(s.dir, "restore-"+strconv.Itoa(n)+".journal")
}

// Restore applies p to the workspace and returns the paths it changed.
// Removals go first (deepest first), then writes. The journal file
// (created, never overwritten) holds a "plan" line per file before
// anything changes, a synced "done" line after each file and "end" when
// all are done, so a restore killed half way says which files are
// restored.
func (s *Store) Restore(ctx context.Context, p Plan, journal string) (done []string, err error) {
	j, err := os.OpenFile(journal, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("restore journal: %w", err)
	}
	defer j.Close()
	var plan strings.Builder
	fmt.Fprintf(&plan, "target %s\nfrom %s\n", p.Target, p.Now)
	for _, c := range p.Changes {
		fmt.Fprintf(&plan, "plan %s\n", strconv.Quote(c.Path))
	}
	if _, err := j.WriteString(plan.String()); err != nil {
		return nil, fmt.Errorf("restore journal %s: %w", journal, err)
	}
	if err := j.Sync(); err != nil {
		return nil, fmt.Errorf("restore journal %s: %w", journal, err)
	}
	ws, err := openWorkspace(s.root)
	if err != nil {
		return nil, err
	}
	defer ws.close()
	var removes, writes []Change
	for _, c := range p.Changes {
		if c.Blob == "" {
			removes = append(removes, c)
		} else {
			writes = append(writes, c)
		}
	}
	sort.Slice(removes, func(a, b int) bool { return removes[a].Path > removes[b].Path })
	mark := func(path string) error {
		done = append(done, path)
		if _, err := j.WriteString("done " + strconv.Quote(path) + "\n"); err != nil {
			return fmt.Errorf("restore journal %s: %w", journal, err)
		}
		if err := j.Sync(); err != nil {
			return err
		}
		if s.hold > 0 && len(done) == s.hold {
			select {} // HoldAfter: wait to be killed
		}
		return nil
	}
	for _, c := range removes {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		if err := ws.remove(c.Path); err != nil {
			return done, fmt.Errorf("restore %s: %w", c.Path, err)
		}
		if err := mark(c.Path); err != nil {
			return done, err
		}
	}
	for _, c := range writes {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		data, err := s.blob(ctx, c.Blob)
		if err != nil {
			return done, err
		}
		if err := ws.write(c.Path, c.Mode, data); err != nil {
			return done, fmt.Errorf("restore %s: %w", c.Path, err)
		}
		if err := mark(c.Path); err != nil {
			return done, err
		}
	}
	_, err = j.WriteString("end\n")
	if err == nil {
		err = j.Sync()
	}
	return done, err
}

// JournalDone reads a restore journal: the files it planned and those it
// finished, and whether it ended.
func JournalDone(journal string) (planned, done []string, ended bool, err error) {
	b, err := os.ReadFile(journal)
	if err != nil {
		return nil, nil, false, fmt.Errorf("restore journal: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		kind, rest, _ := strings.Cut(line, " ")
		switch kind {
		case "plan", "done":
			p, err := strconv.Unquote(rest)
			if err != nil {
				continue // a torn last line
			}
			if kind == "plan" {
				planned = append(planned, p)
			} else {
				done = append(done, p)
			}
		case "end":
			ended = true
		}
	}
	return planned, done, ended, nil
}
