package acpserver

import (
	"context"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
)

// Session updates acp-go-sdk v0.13.0 has no variant for, encoded from the
// ACP SDK 2.4.0 schema: notice (client capability session.notices) and
// compaction_update / compaction_summary_chunk (session.compaction). A
// client that does not advertise the capability gets the form it always
// got (a thought; agent text).

var (
	_ agent.Noticer   = updates{}
	_ agent.Compactor = updates{}
)

// noticeUpdate is ACP's Notice session update.
type noticeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"` // "notice"
	Severity      string `json:"severity"`
	Title         string `json:"title"`
	Description   string `json:"description,omitempty"`
}

// compactionUpdate is ACP's CompactionUpdate session update.
type compactionUpdate struct {
	SessionUpdate string `json:"sessionUpdate"` // "compaction_update"
	CompactionID  string `json:"compactionId"`
	Status        string `json:"status"`
	Error         string `json:"error,omitempty"`
}

// compactionSummaryChunk is ACP's CompactionSummaryChunk session update.
type compactionSummaryChunk struct {
	SessionUpdate string           `json:"sessionUpdate"` // "compaction_summary_chunk"
	CompactionID  string           `json:"compactionId"`
	Content       acp.ContentBlock `json:"content"`
}

// rawNotification is ACP's SessionNotification with an update the SDK
// cannot encode.
type rawNotification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

// capabilities reports the client's session.notices and
// session.compaction capabilities.
func (srv *Server) capabilities() (notices, compaction bool) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.clientNotices, srv.clientCompaction
}

// sendRaw writes a session/update the SDK cannot encode, in order with
// the SDK's frames (one writer, one frame at a time).
func (u updates) sendRaw(update any) {
	if u.srv.out == nil {
		return
	}
	fr, err := notificationFrame(acp.ClientMethodSessionUpdate, rawNotification{SessionID: u.session, Update: update})
	if err != nil {
		u.srv.log.Error("encode a session/update", "err", err)
		return
	}
	if _, err := u.srv.out.Write(fr); err != nil {
		u.srv.log.Debug("session/update not delivered", "session", u.session, "err", err)
	}
}

// Notice implements agent.Noticer: a notice update where the client
// advertised session.notices, else the thought it always was.
func (u updates) Notice(ctx context.Context, n agent.Notice) {
	if notices, _ := u.srv.capabilities(); !notices {
		// A thought of no message: the notice is reel's, not the model's.
		u.send(ctx, acp.UpdateAgentThoughtText(n.Text))
		return
	}
	u.sendRaw(noticeUpdate{SessionUpdate: "notice", Severity: n.Severity, Title: n.Title, Description: n.Detail})
}

// Compaction implements agent.Compactor where the client advertised
// session.compaction: a compaction_update for each status, the summary as
// a compaction_summary_chunk before the completed update. Other clients
// get the compaction's notice, else its agent text (nothing when neither).
func (u updates) Compaction(ctx context.Context, c agent.Compaction) {
	if _, compaction := u.srv.capabilities(); !compaction {
		switch {
		case c.Notice != nil:
			u.Notice(ctx, *c.Notice)
		case c.Text != "":
			u.Text(ctx, c.Text)
		}
		return
	}
	status := c.Status
	if status == "" {
		status = "completed"
	}
	if status == "completed" && c.Summary != "" {
		u.sendRaw(compactionSummaryChunk{SessionUpdate: "compaction_summary_chunk", CompactionID: c.ID, Content: acp.TextBlock(c.Summary)})
	}
	u.sendRaw(compactionUpdate{SessionUpdate: "compaction_update", CompactionID: c.ID, Status: status, Error: c.Error})
}
