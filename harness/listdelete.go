package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reel-agent/reel/harness/normalize"
	"github.com/reel-agent/reel/harness/scenario"
)

// listing is a session/list listing under way: the pages answered since
// the last list step without followCursor.
type listing struct {
	// pages are the session ids of each answered page, in order; cursors
	// the nextCursor of each ("" on the last).
	pages   [][]string
	cursors []string
}

// listAnswer is the part of a session/list answer the harness checks.
type listAnswer struct {
	Sessions []struct {
		SessionID string `json:"sessionId"`
	} `json:"sessions"`
	NextCursor *string `json:"nextCursor"`
}

// ListSessions sends session/list for the run's cwd; with FollowCursor, the
// nextCursor of the previous answer. An answer without nextCursor ends the
// listing, which is then checked (checkListing).
func (d *driver) ListSessions(ctx context.Context, st scenario.Step) error {
	params := map[string]any{"cwd": d.run.Cwd}
	if st.FollowCursor {
		n := len(d.list.cursors)
		if n == 0 || d.list.cursors[n-1] == "" {
			return errors.New("followCursor: the previous session/list answer had no nextCursor to follow")
		}
		params["cursor"] = d.list.cursors[n-1]
	} else {
		d.list = listing{}
	}
	var resp listAnswer
	if err := d.p.client.Call(ctx, "session/list", params, &resp); err != nil {
		return err
	}
	page := make([]string, 0, len(resp.Sessions))
	for _, s := range resp.Sessions {
		page = append(page, s.SessionID)
	}
	cursor := ""
	if resp.NextCursor != nil {
		cursor = *resp.NextCursor
		if cursor == "" {
			return errors.New("session/list answered an empty nextCursor")
		}
	}
	d.list.pages = append(d.list.pages, page)
	d.list.cursors = append(d.list.cursors, cursor)
	if cursor != "" {
		return nil
	}
	return d.checkListing()
}

// checkListing checks a finished listing against the sessions the script
// made: every page in session-id order and at most listPageSize long (when
// the input sets it), every cursor naming its page's last session, no
// session listed twice, and the sessions listed exactly the script's
// sessions that were not deleted.
func (d *driver) checkListing() error {
	seen := map[string]int{}
	for p, page := range d.list.pages {
		if n := d.sc.Input.ListPageSize; n > 0 && len(page) > n {
			return fmt.Errorf("session/list page %d has %d sessions, more than listPageSize %d", p+1, len(page), n)
		}
		if !slices.IsSorted(page) {
			return fmt.Errorf("session/list page %d is not in session-id order: %s", p+1, d.names(page))
		}
		for _, id := range page {
			if q, ok := seen[id]; ok {
				return fmt.Errorf("session/list listed %s on page %d and again on page %d", d.name(id), q+1, p+1)
			}
			seen[id] = p
		}
		if c := d.list.cursors[p]; c != "" {
			after, ok := normalize.ListCursor(c)
			switch {
			case !ok:
				return fmt.Errorf("session/list page %d: nextCursor %q is not base64url of reel's cursor", p+1, c)
			case len(page) == 0 || after != page[len(page)-1]:
				return fmt.Errorf("session/list page %d: nextCursor continues after %s, not after the page's last session", p+1, d.name(after))
			}
		}
	}
	var want []string
	for i, id := range d.run.SessionIDs {
		if _, deleted := d.run.Deleted[i]; !deleted {
			want = append(want, id)
		}
	}
	var got []string
	for id := range seen {
		got = append(got, id)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("session/list listed %s; the script's sessions not deleted are %s", d.names(got), d.names(want))
	}
	return nil
}

// name is a session id as the script knows it ("session 2"), or the id.
func (d *driver) name(id string) string {
	if i := slices.Index(d.run.SessionIDs, id); i >= 0 {
		return fmt.Sprintf("session %d", i)
	}
	return fmt.Sprintf("%q", id)
}

func (d *driver) names(ids []string) string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, d.name(id))
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// DeleteSession sends initialize and session/delete for the step's session
// to the fresh process. Its log, as it was just before, becomes the run's
// log of that session (run.Deleted); after the answer the file must be
// gone.
func (d *driver) DeleteSession(ctx context.Context, st scenario.Step) error {
	id, err := d.sessionID(st.Session)
	if err != nil {
		return err
	}
	if _, done := d.run.Deleted[st.Session]; done {
		return fmt.Errorf("session %d is already deleted", st.Session)
	}
	raw, err := harvest(d.run.StateDir, id)
	if err != nil {
		return fmt.Errorf("session %d before session/delete: %w", st.Session, err)
	}
	if err := d.p.client.Call(ctx, "initialize", initializeParams(d.sc), nil); err != nil {
		return err
	}
	if err := d.p.client.Call(ctx, "session/delete", map[string]any{"sessionId": id}, nil); err != nil {
		return err
	}
	if err := goneLog(d.run.StateDir, id); err != nil {
		return fmt.Errorf("session %d after session/delete: %w", st.Session, err)
	}
	d.run.Deleted[st.Session] = raw
	return nil
}

// goneLog checks that session id has no log in the state dir.
func goneLog(stateDir, id string) error {
	path := filepath.Join(stateDir, id+".jsonl")
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return fmt.Errorf("the deleted session's log %s still exists", path)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	default:
		return fmt.Errorf("the deleted session's log %s: %w", path, err)
	}
}
