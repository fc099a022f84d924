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
	"sync"

	"github.com/reel-agent/reel/agent/codemode"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// toolCall logs a tool call, runs it (asking for escalation when the call
// requests a wider mode) and logs its result. *cancelled is set when the
// turn was cancelled before or while the tool ran.
func (r *run) toolCall(ctx context.Context, step int, tc llm.ToolCall, cancelled *bool) error {
	p, err := r.beginCall(ctx, step, tc)
	if err != nil {
		return err
	}
	r.runCall(ctx, p, cancelled)
	return r.finishCall(ctx, step, p, *cancelled)
}

// pendingCall is a tool call logged and announced, and once run, its
// result.
type pendingCall struct {
	call    ToolCall
	callSeq int
	res     tools.Result
	// announced is set once the client was told the call runs.
	announced bool
}

// beginCall logs tool/call, announces it and makes it durable.
func (r *run) beginCall(ctx context.Context, step int, tc llm.ToolCall) (*pendingCall, error) {
	s, u := r.s, r.c.Updates
	wctx := context.WithoutCancel(ctx)
	callSeq, err := s.emit(wctx, r.e.now(), sessionlog.TypeToolCall,
		sessionlog.ToolCallData{Turn: r.turn, Step: step, CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}, nil, nil)
	if err != nil {
		return nil, err
	}
	call := ToolCall{ID: tc.ID, Name: tc.Name, Arguments: json.RawMessage(tc.Arguments)}
	call.Title, call.Kind, call.Locations = s.toolsFor(s.Mode()).DescribeCall(r.toolEnv(s.Mode()), tc.Name, call.Arguments)
	u.ToolStart(wctx, call)
	if err := s.checkpoint(wctx); err != nil {
		return nil, err
	}
	return &pendingCall{call: call, callSeq: callSeq}, nil
}

// runCall runs a begun call, unless the turn was cancelled before it
// (*cancelled, or ctx); *cancelled is set when it was cancelled before or
// while the tool ran.
func (r *run) runCall(ctx context.Context, p *pendingCall, cancelled *bool) {
	if *cancelled || ctx.Err() != nil {
		*cancelled = true
		p.res = tools.Result{Text: "The turn was cancelled before this tool call ran; nothing was executed.", IsError: true}
		return
	}
	if !p.announced {
		r.c.Updates.ToolRunning(context.WithoutCancel(ctx), p.call.ID)
	}
	res, ran := r.execTool(ctx, &p.call)
	res = breakResult(r.s.id, p.call.Name, res)
	if ran && ctx.Err() == nil {
		res = r.postTool(ctx, p.call, res)
	}
	if ctx.Err() != nil {
		*cancelled = true
	}
	p.res = res
}

// finishCall logs the call's result, makes it durable, then reports it.
func (r *run) finishCall(ctx context.Context, step int, p *pendingCall, cancelled bool) error {
	s, u := r.s, r.c.Updates
	wctx := context.WithoutCancel(ctx)
	call, res := p.call, p.res
	data, err := r.toolResult(step, call.ID, res)
	if err != nil {
		return err
	}
	data.Meta = res.Meta
	if data.Meta == nil {
		data.Meta = diffMeta(res.Diff)
	}
	if _, err := s.emit(wctx, r.e.now(), sessionlog.TypeToolResult, data, sessionlog.AppendOp(), []int{p.callSeq}); err != nil {
		return err
	}
	// What the client is shown as done must survive a crash: the result
	// is durable before the end is reported.
	if err := s.checkpoint(wctx); err != nil {
		return err
	}
	u.ToolEnd(wctx, call.ID, res)
	args := string(call.Arguments)
	if !cancelled {
		// What the next step's context messages need to know of the call.
		s.noteToolCall(call.Name, args)
		s.noteTouch(call.Name, args, res)
	}
	if call.Name == "todo_write" && !res.IsError {
		if a, err := tools.ParseTodoArgs(call.Arguments); err == nil {
			u.Plan(wctx, a.Todos)
		}
	}
	return nil
}

// maxParallelSubagents bounds the subagent calls of one step that run at
// the same time.
const maxParallelSubagents = 4

// parallelCalls runs the tool calls of a step that are all subagent calls
// as dsh does: every call logged first, in the model's order, then the
// children run at the same time (at most maxParallelSubagents; each
// created in call order, so their logs and replay scripts are numbered
// as the calls are), then the results logged in the model's order.
func (r *run) parallelCalls(ctx context.Context, step int, calls []llm.ToolCall, cancelled *bool) error {
	pending := make([]*pendingCall, len(calls))
	for i, c := range calls {
		p, err := r.beginCall(ctx, step, c)
		if err != nil {
			return err
		}
		pending[i] = p
	}
	order := make([]*creationOrder, len(calls))
	for i := range order {
		order[i] = &creationOrder{done: make(chan struct{})}
		if i > 0 {
			order[i].after = order[i-1].done
		}
	}
	stopped := make([]bool, len(calls))
	slots := make(chan struct{}, maxParallelSubagents)
	var wg sync.WaitGroup
	first := *cancelled
	if !first && ctx.Err() == nil {
		// The client hears that the calls run in the model's order, not
		// in the order their goroutines start.
		for _, p := range pending {
			r.c.Updates.ToolRunning(context.WithoutCancel(ctx), p.call.ID)
			p.announced = true
		}
	}
	for i, p := range pending {
		// Slots are taken in call order: a running call only ever waits
		// for an earlier call's child, which already holds a slot.
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			stopped[i] = first
			r.runCall(context.WithValue(ctx, creationOrderKey{}, order[i]), p, &stopped[i])
			// A call that created no child (refused, failed early) lets
			// the next one go on.
			order[i].created()
		})
	}
	wg.Wait()
	for _, s := range stopped {
		*cancelled = *cancelled || s
	}
	for _, p := range pending {
		if err := r.finishCall(ctx, step, p, *cancelled); err != nil {
			return err
		}
	}
	return nil
}

// allSubagentCalls reports whether calls are several calls of the
// subagent tools, which may run at the same time.
func allSubagentCalls(calls []llm.ToolCall) bool {
	if len(calls) < 2 {
		return false
	}
	for _, c := range calls {
		if c.Name != "subagent" && c.Name != "subagent_fork" {
			return false
		}
	}
	return true
}

// execTool runs one tool under the session's mode, after the PreTool
// hooks allowed it, handling escalation; ran reports that the tool ran.
// The escalation request is read by the same strict parse the tool's Run
// uses, so what the approver is shown is exactly what runs. An MCP tool's
// arguments are replaced in *pc by their canonical encoding, so that the
// PostToolUse hooks also see what ran.
func (r *run) execTool(ctx context.Context, pc *ToolCall) (res tools.Result, ran bool) {
	call := *pc
	mode := breakMode(r.s.Mode())
	if res, ok := breakSkip(call.Name); ok {
		return res, false
	}
	fail := func(text string) (tools.Result, bool) { return tools.Result{Text: text, IsError: true}, false }
	if r.e.cfg.CodeMode {
		_, inner := innerCall(ctx)
		if err := codemode.Admit(call.Name, inner); err != nil {
			return fail(err.Error())
		}
	}
	tool, err := r.s.toolsFor(mode).Lookup(call.Name)
	if err != nil {
		return fail(err.Error())
	}
	if mt, ok := tool.(MCPTool); ok {
		// One parse before anything sees the arguments: the hooks, the
		// permission request (rawInput and text) and the call all get
		// the same canonical bytes, which the server receives as they
		// are; arguments it refuses are neither asked about nor sent.
		args, err := mt.Arguments(call.Arguments)
		if err != nil {
			return fail(err.Error())
		}
		call.Arguments, pc.Arguments = args, args
	}
	switch d := r.preTool(ctx, call); d.Verdict {
	case PreToolDeny:
		reason := d.Reason
		if reason == "" {
			reason = "blocked by a PreToolUse hook"
		}
		return fail("Error: " + reason)
	case PreToolAsk:
		if why, ok := r.approveHook(ctx, call, mode, d.Reason); !ok {
			return fail(why)
		}
	}
	if mt, ok := tool.(MCPTool); ok {
		if why, ok := r.approveMCP(ctx, call, mt, mode); !ok {
			return fail(why)
		}
	}
	esc, err := r.toolEnv(mode).Escalation(call.Name, call.Arguments)
	if err != nil {
		return fail(err.Error())
	}
	if esc.Mode != "" {
		wanted := sandbox.Mode(esc.Mode)
		if !sandbox.ValidMode(esc.Mode) {
			return fail(fmt.Sprintf("sandbox_permissions %q is not a sandbox mode (read-only, workspace-write, danger-full-access)", esc.Mode))
		}
		if wanted.Wider(mode) {
			// No approval lifts a subagent above its ancestors' current
			// mode: such a request is refused without asking.
			if ceiling := r.s.ancestorsMode(); wanted.Wider(ceiling) {
				return fail(fmt.Sprintf("Escalation to %s rejected without asking: the sessions above this subagent run in %s now, and a subagent never runs wider than they do, whatever is approved. Nothing was executed.", wanted, ceiling))
			}
			if why, ok := r.approve(ctx, call, mode, esc); !ok {
				return fail(why)
			}
			mode = wanted
		}
	}
	env := r.toolEnv(mode)
	env.CallID = call.ID
	env.Delegator = delegator{r}
	env.Coordinator = coordinator{r}
	if call.Name == codemode.ToolName {
		env.Dispatcher = codeDispatcher{r: r, root: call.ID, mode: mode}
	}
	wctx := context.WithoutCancel(ctx)
	// A program's call (run_code) is not the editor's: its output shows
	// on the run_code call it was made from.
	shown := call.ID
	if root, ok := innerCall(ctx); ok {
		shown = root
	}
	env.Progress = func(output string) { r.c.Updates.ToolProgress(wctx, shown, output) }
	res, err = r.runContained(r.askContext(ctx), tool, env, call.Arguments)
	if err != nil && res.Text == "" {
		return tools.Result{Text: err.Error(), IsError: true}, true
	}
	if r.e.cfg.Sandbox != nil {
		res = r.e.cfg.Sandbox.Annotate(mode, call.Name, res)
	}
	return res, true
}

// approveHook puts a call a PreToolUse hook asked about to the client's
// approver; why is the model's message when it may not run.
func (r *run) approveHook(ctx context.Context, call ToolCall, mode sandbox.Mode, reason string) (why string, ok bool) {
	if breakApprove() {
		return "", true
	}
	asked := fmt.Sprintf("a PreToolUse hook asks for approval of this %s call", call.Name)
	if reason != "" {
		asked += " (" + reason + ")"
	}
	ans, err := r.askApproval(ctx, hookApproval(call, mode, reason), reason)
	switch {
	case errors.Is(err, errPolicyNever):
		return fmt.Sprintf("Error: %s, and the approval policy of this session is never: it was rejected without asking. Nothing was executed.", asked), false
	case errors.Is(err, errNoApprover):
		return fmt.Sprintf("Error: %s, and no one can approve it in this session: it was rejected without asking. Nothing was executed.", asked), false
	case err != nil && ctx.Err() != nil:
		return "The turn was cancelled while waiting for approval. Nothing was executed.", false
	case err != nil:
		r.e.log.Warn("permission request failed", "session", r.s.id, "err", err)
		return fmt.Sprintf("Error: %s, and the request could not be answered (%v). Nothing was executed.", asked, err), false
	case ans == Allowed:
		return "", true
	case ans == Rejected:
		return fmt.Sprintf("Error: the user rejected tool %q. Nothing was executed.", call.Name), false
	}
	return fmt.Sprintf("Error: the permission request for this %s call was cancelled. Nothing was executed.", call.Name), false
}

// runContained runs one tool call so that a panic in the tool becomes that
// call's error result instead of the death of every session in the
// process. The stack goes to the engine's log (stderr).
func (r *run) runContained(ctx context.Context, tool tools.Tool, env *tools.Env, args json.RawMessage) (res tools.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.e.log.Error("tool panicked", "session", r.s.id, "tool", tool.Name(), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res = tools.Result{Text: fmt.Sprintf("The %s tool failed with an internal error (%v); the call was abandoned. This is a bug in reel, not in your arguments.", tool.Name(), p), IsError: true}
			err = nil
		}
	}()
	return tool.Run(ctx, env, args)
}

// approve asks the client's approver whether one call may run under a
// wider mode; why is the model's message when it may not. The request
// shows the whole command (and where it runs) or the path, as the tool
// will use them.
func (r *run) approve(ctx context.Context, call ToolCall, mode sandbox.Mode, esc tools.Escalation) (why string, ok bool) {
	wanted := esc.Mode
	if breakApprove() {
		return "", true
	}
	reason := "escalate sandbox to " + wanted
	if esc.Justification != "" {
		reason += ": " + esc.Justification
	}
	ans, err := r.askApproval(ctx, escalationRequest(call, mode, esc), reason)
	switch {
	case errors.Is(err, errPolicyNever):
		return fmt.Sprintf("Escalation to %s rejected without asking: the approval policy of this session is never. Nothing was executed.", wanted), false
	case errors.Is(err, errNoApprover):
		return fmt.Sprintf("Escalation to %s rejected without asking: no one can approve it in this session. Nothing was executed.", wanted), false
	case err != nil && ctx.Err() != nil:
		return "The turn was cancelled while waiting for approval. Nothing was executed.", false
	case err != nil:
		r.e.log.Warn("permission request failed", "session", r.s.id, "err", err)
		return fmt.Sprintf("Escalation to %s could not be approved (%v). Nothing was executed.", wanted, err), false
	case ans == Allowed:
		return "", true
	case ans == Rejected:
		return fmt.Sprintf("The user rejected escalation to %s. Nothing was executed.", wanted), false
	}
	return fmt.Sprintf("The permission request for escalation to %s was cancelled. Nothing was executed.", wanted), false
}

// escalationRequest words the approval of one escalated call.
func escalationRequest(call ToolCall, mode sandbox.Mode, esc tools.Escalation) Approval {
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
	title := fmt.Sprintf("Run outside the %s sandbox (%s): %s", mode, esc.Mode, what)
	if esc.Justification != "" {
		title += " — " + esc.Justification
		detail += "\n\nReason given: " + esc.Justification
	}
	return Approval{Call: call, Mode: mode, Wanted: sandbox.Mode(esc.Mode), Title: title, Detail: detail}
}

// toolEnv builds the tool environment of a call under mode.
func (r *run) toolEnv(mode sandbox.Mode) *tools.Env {
	s, e := r.s, r.e
	confined := e.cfg.Sandbox != nil && mode.Confines()
	env := &tools.Env{Cwd: s.cwd, Owner: s.jobs.owner(s, mode, confined), Spill: s.spill, FS: r.c.FS, MaxInlineBytes: e.cfg.MaxInlineBytes,
		GlobMaxResults: e.cfg.GlobMaxResults, GlobSample: e.cfg.GlobSample, GlobNoSpill: e.cfg.GlobNoSpill,
		ImageInput: e.ImageInput(), ImageModel: e.cfg.Model, Keep: &s.keep, Mode: string(mode)}
	if !e.cfg.DisableReadGuard {
		env.Observed = &s.observed
	}
	if e.cfg.SessionQuery {
		env.History = history{s}
	}
	if e.cfg.SpillDir != "" {
		// Without a SpillDir the tools use the temp dir; joining "" with
		// the session id would spill into the workspace.
		env.SpillDir = filepath.Join(e.cfg.SpillDir, s.id)
	}
	if e.cfg.Sandbox != nil {
		env.Guard, env.Exec = e.cfg.Sandbox.Hooks(mode, s.cwd)
	}
	env.Exec = scrubbed(env.Exec)
	return env
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
		cmd.Env = withoutSecrets(base)
		return cmd, nil
	}
}

// withoutSecrets is env ("NAME=value" entries) without the model keys.
func withoutSecrets(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(secretEnv, name)
	})
}
