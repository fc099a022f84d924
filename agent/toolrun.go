package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// runToolCall logs a tool call, runs it (asking for escalation when the
// call requests a wider mode) and logs its result. *cancelled is set when
// the turn was cancelled before or while the tool ran.
func (srv *Server) runToolCall(ctx context.Context, s *session, turn, step int, b *block, cancelled *bool) error {
	wctx := context.WithoutCancel(ctx)
	id, name, args := toolCallOf(b)
	callSeq, err := s.emit(wctx, srv.now(), sessionlog.TypeToolCall,
		jsonObject("turn", turn, "step", step, "callId", id, "name", name, "arguments", args), nil, nil)
	if err != nil {
		return err
	}
	title, kind, locs := srv.toolEnv(s, s.mode(srv.cfg.Mode)).Describe(name, json.RawMessage(args))
	srv.notify(wctx, s, acp.StartToolCall(acp.ToolCallId(id), title,
		acp.WithStartKind(acp.ToolKind(kind)),
		acp.WithStartStatus(acp.ToolCallStatusPending),
		acp.WithStartLocations(acpLocations(locs)),
		acp.WithStartRawInput(json.RawMessage(args)),
	))
	if err := s.checkpoint(wctx); err != nil {
		return err
	}
	var res tools.Result
	if *cancelled || ctx.Err() != nil {
		*cancelled = true
		res = tools.Result{Text: "The turn was cancelled before this tool call ran; nothing was executed.", IsError: true}
	} else {
		srv.notify(wctx, s, acp.UpdateToolCall(acp.ToolCallId(id), acp.WithUpdateStatus(acp.ToolCallStatusInProgress)))
		res = srv.execTool(ctx, s, id, name, json.RawMessage(args), title, kind, locs)
		if ctx.Err() != nil {
			*cancelled = true
		}
	}
	msg := jsonObject(
		"source", jsonObject("kind", "tool", "callId", id),
		"content", jsonArray([][]byte{jsonObject(
			"type", "tool-result",
			"toolCallId", id,
			"content", jsonArray([][]byte{jsonObject("type", "text", "text", res.Text)}),
			"isError", res.IsError,
		)}),
		"role", "user",
		"id", srv.newID(),
	)
	if _, err := s.emit(wctx, srv.now(), sessionlog.TypeToolResult,
		jsonObject("turn", turn, "step", step, "message", msg), sessionlog.AppendOp(), []int{callSeq}); err != nil {
		return err
	}
	// What the client is shown as done must survive a crash: the result
	// is durable before the completed update goes out.
	if err := s.checkpoint(wctx); err != nil {
		return err
	}
	status := acp.ToolCallStatusCompleted
	if res.IsError {
		status = acp.ToolCallStatusFailed
	}
	content := []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(res.Text))}
	if res.Diff != nil {
		if res.Diff.OldText != nil {
			content = append(content, acp.ToolDiffContent(res.Diff.Path, res.Diff.NewText, *res.Diff.OldText))
		} else {
			content = append(content, acp.ToolDiffContent(res.Diff.Path, res.Diff.NewText))
		}
	}
	srv.notify(wctx, s, acp.UpdateToolCall(acp.ToolCallId(id), acp.WithUpdateStatus(status), acp.WithUpdateContent(content)))
	if name == "todo_write" && !res.IsError {
		if a, err := tools.ParseTodoArgs(json.RawMessage(args)); err == nil {
			srv.notify(wctx, s, planUpdate(a.Todos))
		}
	}
	return nil
}

// planUpdate turns the model's todo list into an ACP plan.
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

func acpLocations(locs []tools.Location) []acp.ToolCallLocation {
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

// execTool runs one tool under the session's mode, handling escalation.
// The escalation request is read by the same strict parse the tool's Run
// uses, so the permission request shows exactly what runs.
func (srv *Server) execTool(ctx context.Context, s *session, id, name string, args json.RawMessage, title string, kind tools.Kind, locs []tools.Location) tools.Result {
	mode := s.mode(srv.cfg.Mode)
	tool, err := srv.toolsFor(mode).Lookup(name)
	if err != nil {
		return tools.Result{Text: err.Error(), IsError: true}
	}
	esc, err := srv.toolEnv(s, mode).Escalation(name, args)
	if err != nil {
		return tools.Result{Text: err.Error(), IsError: true}
	}
	if esc.Mode != "" {
		if !ValidMode(esc.Mode) {
			return tools.Result{Text: fmt.Sprintf("sandbox_permissions %q is not a sandbox mode (read-only, workspace-write, danger-full-access)", esc.Mode), IsError: true}
		}
		if modeRank(esc.Mode) > modeRank(mode) {
			ok, why := srv.askEscalation(ctx, s, id, kind, locs, mode, esc, args)
			if !ok {
				return tools.Result{Text: why, IsError: true}
			}
			mode = esc.Mode
		}
	}
	res, err := srv.runContained(ctx, s, tool, srv.toolEnv(s, mode), args)
	if err != nil && res.Text == "" {
		return tools.Result{Text: err.Error(), IsError: true}
	}
	if srv.cfg.Sandbox != nil {
		res = srv.cfg.Sandbox.Annotate(mode, name, res)
	}
	return res
}

// runContained runs one tool call so that a panic in the tool becomes that
// call's error result instead of the death of every session in the
// process. The stack goes to the agent's log (stderr).
func (srv *Server) runContained(ctx context.Context, s *session, tool tools.Tool, env *tools.Env, args json.RawMessage) (res tools.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			srv.log.Error("tool panicked", "session", s.id, "tool", tool.Name(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			res = tools.Result{Text: fmt.Sprintf("The %s tool failed with an internal error (%v); the call was abandoned. This is a bug in reel, not in your arguments.", tool.Name(), r), IsError: true}
			err = nil
		}
	}()
	return tool.Run(ctx, env, args)
}

// askEscalation asks the client to approve one call under a wider mode.
// The request shows the whole command (and where it runs) or the path, as
// the tool will use them.
func (srv *Server) askEscalation(ctx context.Context, s *session, id string, kind tools.Kind, locs []tools.Location, mode string, esc tools.Escalation, args json.RawMessage) (bool, string) {
	wanted := esc.Mode
	if s.approval(srv.cfg.Approval) == ApprovalNever {
		return false, fmt.Sprintf("Escalation to %s rejected without asking: the approval policy of this session is never. Nothing was executed.", wanted)
	}
	what := "write " + esc.Path
	detail := "Write " + esc.Path
	if esc.Path == "" {
		first, _, multi := strings.Cut(esc.Command, "\n")
		what = first
		if r := []rune(first); len(r) > 200 {
			what, multi = string(r[:200]), true
		}
		if multi {
			what += " … (the whole command is shown below)"
		}
		detail = "Run in " + esc.Workdir + ":\n\n" + esc.Command
	}
	reqTitle := fmt.Sprintf("Run outside the %s sandbox (%s): %s", mode, wanted, what)
	if esc.Justification != "" {
		reqTitle += " — " + esc.Justification
		detail += "\n\nReason given: " + esc.Justification
	}
	resp, err := srv.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
		SessionId: acp.SessionId(s.id),
		ToolCall: acp.ToolCallUpdate{
			ToolCallId: acp.ToolCallId(id),
			Title:      acp.Ptr(reqTitle),
			Kind:       acp.Ptr(acp.ToolKind(kind)),
			Status:     acp.Ptr(acp.ToolCallStatusPending),
			Locations:  acpLocations(locs),
			Content:    []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(detail))},
			RawInput:   args,
		},
		Options: []acp.PermissionOption{
			{Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: "allow_once"},
			{Kind: acp.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: "reject_once"},
		},
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return false, "The turn was cancelled while waiting for approval. Nothing was executed."
	case err != nil:
		srv.log.Warn("permission request failed", "session", s.id, "err", err)
		return false, fmt.Sprintf("Escalation to %s could not be approved (%v). Nothing was executed.", wanted, err)
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == "allow_once":
		return true, ""
	case resp.Outcome.Selected != nil:
		return false, fmt.Sprintf("The user rejected escalation to %s. Nothing was executed.", wanted)
	}
	return false, fmt.Sprintf("The permission request for escalation to %s was cancelled. Nothing was executed.", wanted)
}

// toolEnv builds the tool environment of a call under mode.
func (srv *Server) toolEnv(s *session, mode string) *tools.Env {
	env := &tools.Env{Cwd: s.cwd, Owner: s.jobs.owner(mode), Spill: s.spill}
	if srv.cfg.SpillDir != "" {
		// Without a SpillDir the tools use the temp dir; joining "" with
		// the session id would spill into the workspace.
		env.SpillDir = filepath.Join(srv.cfg.SpillDir, s.id)
	}
	if srv.cfg.Sandbox != nil {
		env.Guard, env.Exec = srv.cfg.Sandbox.Hooks(mode, s.cwd)
	}
	env.Exec = scrubbed(env.Exec)
	if srv.clientFS.ReadTextFile && srv.clientFS.WriteTextFile {
		env.FS = &clientFS{conn: srv.conn, session: s.id, caps: srv.clientFS}
	}
	return env
}

// clientFS reads and writes through the editor (unsaved buffers, review).
type clientFS struct {
	conn    *acp.AgentSideConnection
	session string
	caps    acp.FileSystemCapabilities
}

var errNoClientFS = errors.New("the client does not offer this file operation")

func (c *clientFS) ReadTextFile(ctx context.Context, path string) (string, error) {
	if !c.caps.ReadTextFile {
		return "", errNoClientFS
	}
	r, err := c.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: acp.SessionId(c.session), Path: path})
	if err != nil {
		return "", fmt.Errorf("client fs/read_text_file %s: %w", path, err)
	}
	return r.Content, nil
}

func (c *clientFS) WriteTextFile(ctx context.Context, path, content string) error {
	if !c.caps.WriteTextFile {
		return errNoClientFS
	}
	if _, err := c.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: acp.SessionId(c.session), Path: path, Content: content}); err != nil {
		return fmt.Errorf("client fs/write_text_file %s: %w", path, err)
	}
	return nil
}

// secretEnv lists the environment variables a tool's process never sees:
// the model keys reel reads.
var secretEnv = []string{"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "REEL_API_KEY"}

// scrubbed wraps a command builder (nil: plain bash) so the child's
// environment lacks the model keys.
func scrubbed(next tools.CommandFunc) tools.CommandFunc {
	return func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
		var cmd *exec.Cmd
		if next != nil {
			c, err := next(ctx, script, workdir)
			if err != nil {
				return nil, err
			}
			cmd = c
		} else {
			cmd = exec.Command("bash", "-c", script)
			cmd.Dir = workdir
		}
		base := cmd.Env
		if base == nil {
			base = os.Environ()
		}
		cmd.Env = make([]string, 0, len(base))
		for _, kv := range base {
			if !slices.ContainsFunc(secretEnv, func(k string) bool { return strings.HasPrefix(kv, k+"=") }) {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		return cmd, nil
	}
}
