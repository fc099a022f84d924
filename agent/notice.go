package agent

import (
	"context"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// Notice is information from reel to the user about the session that is
// not the model's output: a retried model call, a hook file or skill that
// cannot be used, an MCP server that is unusable. It is not logged as
// model output (the requests rebuilt from the log do not change).
type Notice struct {
	// Severity is "info", "warning" or "error".
	Severity string
	// Title is a short plain-text line that stands alone.
	Title string
	// Detail is optional plain-text guidance ("" when none).
	Detail string
	// Text is the notice as a thought, for a client that shows no notices.
	Text string
}

// Noticer is implemented by Updates that show notices as such; other
// Updates get Notice.Text as a thought.
type Noticer interface {
	Notice(ctx context.Context, n Notice)
}

// notify shows n through u: as a notice where u takes them, else as the
// thought it always was.
func notify(ctx context.Context, u Updates, n Notice) {
	present(u, func(nu Noticer) { nu.Notice(ctx, n) }, func() { u.Thought(ctx, n.Text) })
}

// present shows something through u: by rich when u implements the
// optional interface I, else by plain, the form every Updates takes; a nil
// u shows nothing.
func present[I any](u Updates, rich func(I), plain func()) {
	if u == nil {
		return
	}
	if i, ok := u.(I); ok {
		rich(i)
		return
	}
	plain()
}

// textNotice is a warning whose thought form is text: its first line is
// the title, the rest the detail.
func textNotice(text string) Notice {
	t := strings.TrimRight(text, "\n")
	title, detail, _ := strings.Cut(t, "\n")
	if strings.TrimSpace(title) == "" {
		title = "reel notice"
	}
	return Notice{Severity: "warning", Title: title, Detail: strings.TrimSpace(detail), Text: text}
}

// Compaction is a compaction as the client sees it: ID names it within
// the session (derived from the seq of its compaction/start event, so a
// reload names it the same); Status is "in_progress", "completed",
// "failed" or "cancelled" (ACP's CompactionStatus); Summary is the summary
// text the model wrote (completed only); Error says why it failed. A
// client that shows no compactions gets Notice where it is set, else Text
// as agent text where it is not "" (nothing otherwise).
type Compaction struct {
	ID      string
	Status  string
	Summary string
	Error   string
	Text    string
	Notice  *Notice
}

// Compactor is implemented by Updates that show compactions as such;
// other Updates get Compaction.Notice as a notice or Compaction.Text as
// agent text.
type Compactor interface {
	Compaction(ctx context.Context, c Compaction)
}

// showCompaction shows c through u.
func showCompaction(ctx context.Context, u Updates, c Compaction) {
	present(u, func(cu Compactor) { cu.Compaction(ctx, c) }, func() {
		switch {
		case c.Notice != nil:
			notify(ctx, u, *c.Notice)
		case c.Text != "":
			u.Text(ctx, c.Text)
		}
	})
}

// autoCompacted is the notice an automatic compaction shows a client that
// shows no compactions (claude-agent-acp likewise says "Compacting
// completed." when Claude Code compacts on its own).
func autoCompacted() *Notice {
	const title = "Compacted the earlier conversation into a summary to fit the context window"
	return &Notice{Severity: "info", Title: title, Text: title + "."}
}

// MessageMarker is implemented by Updates that label message chunks:
// Message says that the chunks that follow, up to the next Message, belong
// to the message named id. Role is "assistant" (Text and Thought) or
// "user" (UserText, history only). The id is derived from the log, so a
// message has the same id live, after a load and after a restart: an
// assistant message is named by the seq of its step's request/context
// event, a user message by the seq of its user/message event.
type MessageMarker interface {
	Message(ctx context.Context, role, id string)
}

// messageID is the id of the message anchored at log seq.
func messageID(seq int) string { return "m" + strconv.Itoa(seq) }

// markMessage tells u, when it labels messages, that a message begins.
func markMessage(ctx context.Context, u Updates, role string, seq int) {
	if m, ok := u.(MessageMarker); ok && seq >= 0 {
		m.Message(ctx, role, messageID(seq))
	}
}

// lastContextSeq is the seq of the last request/context event of events
// (-1 when none).
func lastContextSeq(events []sessionlog.Event) int {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == sessionlog.TypeRequestContext {
			return events[i].Seq
		}
	}
	return -1
}
