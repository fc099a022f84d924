package acpserver

import (
	"context"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/tools"
)

// notify sends a session/update; a failure (the client went away) is logged.
func (srv *Server) notify(ctx context.Context, session string, u acp.SessionUpdate) {
	if err := srv.sendUpdate(ctx, nil, session, u); err != nil {
		srv.log.Debug("session/update not delivered", "session", session, "err", err)
	}
}

// client is the engine's view of the editor for one session's prompt.
func (srv *Server) client(session string) agent.Client {
	c := agent.Client{Updates: srv.updates(session), Approver: approver{srv, session}}
	srv.mu.Lock()
	caps := srv.clientFS
	srv.mu.Unlock()
	if caps.ReadTextFile && caps.WriteTextFile {
		c.FS = &clientFS{conn: srv.conn, session: session}
	}
	if q := srv.questions(session); q != nil {
		c.Questions = q
	}
	return c
}

func (srv *Server) updates(session string) updates {
	u := updates{srv: srv, session: session}
	if srv.inflight != nil {
		u.prompt = srv.inflight.promptOf(session)
	}
	return u
}

// updates turns what a session's turn reports into session/update
// notifications. prompt is the request id of the prompt they report on
// ("" outside a prompt). With batch, the updates are collected and
// written in batches (the caller flushes the last).
type updates struct {
	srv     *Server
	session string
	prompt  string
	batch   *frameBatch
}

var _ agent.Updates = updates{}

func (u updates) send(ctx context.Context, up acp.SessionUpdate) {
	if err := u.srv.sendUpdate(ctx, u.batch, u.session, up); err != nil {
		u.srv.log.Debug("session/update not delivered", "session", u.session, "err", err)
	}
}

// UserText implements agent.Updates.
func (u updates) UserText(ctx context.Context, text string) {
	up := acp.UpdateUserMessageText(text)
	up.UserMessageChunk.MessageId = u.srv.messageID(u.session, "user")
	u.send(ctx, up)
}

// Text implements agent.Updates.
func (u updates) Text(ctx context.Context, text string) {
	up := acp.UpdateAgentMessageText(text)
	up.AgentMessageChunk.MessageId = u.srv.messageID(u.session, "assistant")
	u.send(ctx, up)
}

// Thought implements agent.Updates: the model's reasoning, part of its
// message.
func (u updates) Thought(ctx context.Context, text string) {
	up := acp.UpdateAgentThoughtText(text)
	up.AgentThoughtChunk.MessageId = u.srv.messageID(u.session, "assistant")
	u.send(ctx, up)
}

// ToolStart implements agent.Updates: a pending tool_call.
func (u updates) ToolStart(ctx context.Context, c agent.ToolCall) {
	if u.retellToolStart(ctx, c) {
		return
	}
	u.send(ctx, toolStartUpdate(c))
}

// toolStartUpdate is the tool_call of a call starting.
func toolStartUpdate(c agent.ToolCall) acp.SessionUpdate {
	return acp.StartToolCall(acp.ToolCallId(c.ID), c.Title,
		acp.WithStartKind(acp.ToolKind(c.Kind)),
		acp.WithStartStatus(acp.ToolCallStatusPending),
		acp.WithStartLocations(locations(c.Locations)),
		acp.WithStartRawInput(c.Arguments),
	)
}

// ToolRunning implements agent.Updates.
func (u updates) ToolRunning(ctx context.Context, id string) {
	u.send(ctx, acp.UpdateToolCall(acp.ToolCallId(id), acp.WithUpdateStatus(acp.ToolCallStatusInProgress)))
}

// ToolProgress implements agent.Updates: the call's output so far, as its
// content (which the next update replaces), still in progress.
func (u updates) ToolProgress(ctx context.Context, id, output string) {
	u.send(ctx, acp.UpdateToolCall(acp.ToolCallId(id), acp.WithUpdateStatus(acp.ToolCallStatusInProgress),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(output))})))
}

// ToolEnd implements agent.Updates: the final status, the output and, for
// a file change, its diff; rawOutput is the result as the model got it
// (rawOutput, turns.go).
func (u updates) ToolEnd(ctx context.Context, id string, res tools.Result) {
	u.send(ctx, toolEndUpdate(id, res))
}

// toolEndUpdate is the tool_call_update of a call that ended.
func toolEndUpdate(id string, res tools.Result) acp.SessionUpdate {
	status := acp.ToolCallStatusCompleted
	if res.IsError {
		status = acp.ToolCallStatusFailed
	}
	content := []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(res.Text))}
	if d := res.Diff; d != nil {
		if d.OldText != nil {
			content = append(content, acp.ToolDiffContent(d.Path, d.NewText, *d.OldText))
		} else {
			content = append(content, acp.ToolDiffContent(d.Path, d.NewText))
		}
	}
	return acp.UpdateToolCall(acp.ToolCallId(id), acp.WithUpdateStatus(status), acp.WithUpdateContent(content),
		acp.WithUpdateRawOutput(rawOutput(res)))
}

// Plan implements agent.Updates: the model's todo list as an ACP plan.
func (u updates) Plan(ctx context.Context, todos []tools.Todo) { u.send(ctx, planUpdate(todos)) }

// planUpdate is the plan of a todo list.
func planUpdate(todos []tools.Todo) acp.SessionUpdate {
	entries := make([]acp.PlanEntry, 0, len(todos))
	for _, t := range todos {
		p := t.Priority
		if p == "" {
			p = "medium"
		}
		entries = append(entries, acp.PlanEntry{Content: t.Content, Priority: acp.PlanEntryPriority(p), Status: acp.PlanEntryStatus(t.Status)})
	}
	return acp.UpdatePlan(entries...)
}

// Usage implements agent.Updates: a usage_update (context used of the
// window, and the session's cost from the price table: turns.go).
func (u updates) Usage(ctx context.Context, use agent.ContextUsage) {
	u.send(ctx, u.srv.usageUpdate(use))
}

func locations(locs []tools.Location) []acp.ToolCallLocation {
	out := make([]acp.ToolCallLocation, 0, len(locs))
	for _, l := range locs {
		loc := acp.ToolCallLocation{Path: l.Path}
		if l.Line > 0 {
			line := l.Line
			loc.Line = &line
		}
		out = append(out, loc)
	}
	return out
}

// approver asks the editor with session/request_permission to approve an
// escalation or a call a hook asked about (allow or reject once), or an
// MCP tool's call (also for the rest of the session).
type approver struct {
	srv     *Server
	session string
}

// Approve implements agent.Approver.
func (a approver) Approve(ctx context.Context, req agent.Approval) (agent.Answer, error) {
	c := req.Call
	resp, err := a.srv.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
		SessionId: acp.SessionId(a.session),
		ToolCall: acp.ToolCallUpdate{
			ToolCallId: acp.ToolCallId(c.ID),
			Title:      acp.Ptr(req.Title),
			Kind:       acp.Ptr(acp.ToolKind(c.Kind)),
			Status:     acp.Ptr(acp.ToolCallStatusPending),
			Locations:  locations(c.Locations),
			Content:    []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(req.Detail))},
			RawInput:   c.Arguments,
		},
		Options: permissionOptions(req.Always),
	})
	switch {
	case err != nil:
		return agent.Dismissed, err
	case resp.Outcome.Selected == nil:
		return agent.Dismissed, nil
	}
	// An option id reel did not offer is a rejection.
	switch resp.Outcome.Selected.OptionId {
	case "allow_once":
		return agent.Allowed, nil
	case "allow_always":
		if req.Always {
			return agent.AllowedAlways, nil
		}
	case "reject_always":
		if req.Always {
			return agent.RejectedAlways, nil
		}
	}
	return agent.Rejected, nil
}

// permissionOptions are the choices of a permission request: once, and
// with always also for the rest of the session.
func permissionOptions(always bool) []acp.PermissionOption {
	if !always {
		return []acp.PermissionOption{
			{Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: "allow_once"},
			{Kind: acp.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: "reject_once"},
		}
	}
	return []acp.PermissionOption{
		{Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: "allow_once"},
		{Kind: acp.PermissionOptionKindAllowAlways, Name: "Always allow in this session", OptionId: "allow_always"},
		{Kind: acp.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: "reject_once"},
		{Kind: acp.PermissionOptionKindRejectAlways, Name: "Always reject in this session", OptionId: "reject_always"},
	}
}

// clientFS reads and writes through the editor (unsaved buffers, review).
type clientFS struct {
	conn    *acp.AgentSideConnection
	session string
}

// ReadTextFile implements tools.FileSystem with fs/read_text_file.
func (c *clientFS) ReadTextFile(ctx context.Context, path string) (string, error) {
	r, err := c.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: acp.SessionId(c.session), Path: path})
	if err != nil {
		return "", fmt.Errorf("client fs/read_text_file %s: %w", path, err)
	}
	return r.Content, nil
}

// WriteTextFile implements tools.FileSystem with fs/write_text_file.
func (c *clientFS) WriteTextFile(ctx context.Context, path, content string) error {
	if _, err := c.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: acp.SessionId(c.session), Path: path, Content: content}); err != nil {
		return fmt.Errorf("client fs/write_text_file %s: %w", path, err)
	}
	return nil
}
