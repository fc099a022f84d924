package acpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
)

// DefaultListPageSize is how many sessions a session/list page holds
// when Config.ListPageSize is 0.
const DefaultListPageSize = 50

// cursorPrefix starts every decoded cursor: a cursor of another version
// (or none of reel's) is refused rather than misread.
const cursorPrefix = "reel-list-v1:"

// maxCursor bounds a cursor a client sends (a session id is short).
const maxCursor = 1024

// encodeCursor makes the opaque cursor of the page after the session
// with id last. The store lists sessions in id order; the next page is
// every listed session whose id sorts after last, so a session created
// (or deleted) meanwhile never shifts a page: nothing is repeated or
// skipped of the sessions that exist throughout.
func encodeCursor(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + last))
}

// decodeCursor returns the session id a cursor continues after. Anything
// encodeCursor did not make is an error saying so.
func decodeCursor(c string) (string, error) {
	if len(c) > maxCursor {
		return "", fmt.Errorf("cursor is %d bytes, longer than any reel makes (%d)", len(c), maxCursor)
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil {
		return "", fmt.Errorf("cursor %q is not one reel made (not base64url): %w", c, err)
	}
	last, ok := strings.CutPrefix(string(b), cursorPrefix)
	if !ok || last == "" {
		return "", fmt.Errorf("cursor %q is not one reel made: pass the nextCursor of a previous session/list answer", c)
	}
	return last, nil
}

// ListSessions implements acp.Agent (session/list): the stored top-level
// sessions, filtered by cwd when given, in pages of Config.ListPageSize
// in session-id order. nextCursor is set when more follow; a cursor that
// is not one reel made is invalid params.
func (srv *Server) ListSessions(ctx context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.ListSessionsResponse{}, err
	}
	defer srv.exit()
	after := ""
	if p.Cursor != nil {
		var err error
		if after, err = decodeCursor(*p.Cursor); err != nil {
			return acp.ListSessionsResponse{}, acp.NewInvalidParams(map[string]any{"error": "session/list: " + err.Error()})
		}
	}
	size := srv.cfg.ListPageSize
	if size <= 0 {
		size = DefaultListPageSize
	}
	resp := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	cwd := ""
	if p.Cwd != nil {
		cwd = *p.Cwd
	}
	// The page is taken in id order whatever order the store lists in.
	var infos []agent.SessionInfo
	for info := range srv.eng.Sessions(ctx, cwd) {
		if (p.Cwd != nil && info.Cwd != *p.Cwd) || (after != "" && info.ID <= after) {
			continue
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b agent.SessionInfo) int { return strings.Compare(a.ID, b.ID) })
	if len(infos) > size {
		infos = infos[:size]
		resp.NextCursor = acp.Ptr(encodeCursor(infos[size-1].ID))
	}
	for _, info := range infos {
		updated := info.UpdatedAt.Format(time.RFC3339)
		si := acp.SessionInfo{SessionId: acp.SessionId(info.ID), Cwd: info.Cwd, UpdatedAt: &updated}
		if info.Title != "" {
			si.Title = acp.Ptr(info.Title)
		}
		resp.Sessions = append(resp.Sessions, si)
	}
	return resp, nil
}
