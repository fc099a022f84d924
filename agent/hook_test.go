package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// fakeHook is an agent.Hook whose decisions are functions; it writes a
// hook/invoked and hook/result pair per call, as the bridges do, and
// counts what it saw.
type fakeHook struct {
	mu     sync.Mutex
	seen   []string
	start  func(source string) *agent.HookContext
	prompt func(text string) agent.PromptDecision
	pre    func(call agent.ToolCall) agent.PreToolDecision
	post   func(call agent.ToolCall, res tools.Result) agent.PostToolDecision
	stop   func(p *agent.HookPoint) agent.StopDecision
}

func (f *fakeHook) note(ctx context.Context, p *agent.HookPoint, point, what string) {
	f.mu.Lock()
	f.seen = append(f.seen, point+" "+what)
	f.mu.Unlock()
	_ = p.Record(ctx, sessionlog.TypeHookInvoked, sessionlog.HookInvokedData{Turn: p.Turn, Point: point, Dialect: "claude-code", HandlerID: point})
	code := 0
	_ = p.Record(ctx, sessionlog.TypeHookResult, sessionlog.HookResultData{Turn: p.Turn, Point: point, HandlerID: point, Decision: "pass", ExitCode: &code})
}

func (f *fakeHook) SessionStart(ctx context.Context, p *agent.HookPoint, source string) *agent.HookContext {
	f.note(ctx, p, "SessionStart", source)
	if f.start == nil {
		return nil
	}
	return f.start(source)
}

func (f *fakeHook) PromptSubmit(ctx context.Context, p *agent.HookPoint, text string) agent.PromptDecision {
	f.note(ctx, p, "UserPromptSubmit", text)
	if f.prompt == nil {
		return agent.PromptDecision{}
	}
	return f.prompt(text)
}

func (f *fakeHook) PreTool(ctx context.Context, p *agent.HookPoint, call agent.ToolCall) agent.PreToolDecision {
	f.note(ctx, p, "PreToolUse", call.Name)
	if f.pre == nil {
		return agent.PreToolDecision{}
	}
	return f.pre(call)
}

func (f *fakeHook) PostTool(ctx context.Context, p *agent.HookPoint, call agent.ToolCall, res tools.Result) agent.PostToolDecision {
	f.note(ctx, p, "PostToolUse", call.Name)
	if f.post == nil {
		return agent.PostToolDecision{}
	}
	return f.post(call, res)
}

func (f *fakeHook) Stop(ctx context.Context, p *agent.HookPoint) agent.StopDecision {
	f.note(ctx, p, "Stop", "")
	if f.stop == nil {
		return agent.StopDecision{}
	}
	return f.stop(p)
}

func (f *fakeHook) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

// hookEngine is newEngine with hooks and an approval policy.
func hookEngine(t *testing.T, approval string, hooks []agent.Hook, script ...replay.Entry) (*agent.Engine, string, string) {
	t.Helper()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	store, err := jsonl.Open(state, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := agent.New(agent.Config{
		Store: store, Models: agent.SharedModels{Provider: replay.New(script, 0, dir)},
		Provider: "replay", Model: "replay", Mode: sandbox.DangerFullAccess, Approval: approval, Invariant: true,
		SpillDir: filepath.Join(dir, "spill"), Hooks: hooks,
		Notices: []string{"hooks.json: something was wrong"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Close()
		_ = store.Close()
	})
	cwd := filepath.Join(dir, "work")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	return e, cwd, state
}

// logOf reads a session's log back from the store's file.
func logOf(t *testing.T, state, id string) []sessionlog.Event {
	t.Helper()
	d, _, err := jsonl.ReadValid(filepath.Join(state, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return d.Events
}

// shape lists the log's events as "type" or "type detail" lines: the
// detail is a tool result's text and error flag, a user message's source
// and text, a turn end's kind, a hook record's point.
func shape(t *testing.T, evs []sessionlog.Event) []string {
	t.Helper()
	var out []string
	for i := range evs {
		e := &evs[i]
		switch e.Type {
		case sessionlog.TypeToolResult:
			d, err := sessionlog.DecodeData[sessionlog.ToolResultData](e)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := sessionlog.ParseMessage(d.Message.AppendJSON(nil))
			tr := m.Content[0]
			out = append(out, "tool/result "+tr.Content[0].Text+" error="+boolText(tr.IsError))
		case sessionlog.TypeUserMessage:
			m, err := sessionlog.ParseMessage(e.Data)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, "user/message "+string(m.Source)+" "+m.Text())
		case sessionlog.TypeTurnEnd:
			d, _ := sessionlog.DecodeData[sessionlog.TurnEndData](e)
			out = append(out, "turn/end "+d.Reason.Kind)
		case sessionlog.TypeHookInvoked:
			d, _ := sessionlog.DecodeData[sessionlog.HookInvokedData](e)
			out = append(out, "hook/invoked "+d.Point)
		case sessionlog.TypeHookResult:
			d, _ := sessionlog.DecodeData[sessionlog.HookResultData](e)
			out = append(out, "hook/result "+d.Point)
		case sessionlog.TypeTurnStart, sessionlog.TypeStepStart, sessionlog.TypeStepEnd, sessionlog.TypeToolCall:
			out = append(out, e.Type)
		}
	}
	return out
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestHookPointsInTheLog: each extension point fires at its place in the
// turn, and a hook's records land there, paired.
func TestHookPointsInTheLog(t *testing.T) {
	h := &fakeHook{}
	e, cwd, state := hookEngine(t, agent.ApprovalOnRequest, []agent.Hook{h},
		toolEntry("c1", "bash", `{"command":"echo hi","description":"say hi"}`),
		textEntry("done"))
	s, err := e.NewSession(context.Background(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	stop, err := s.Prompt(context.Background(), []agent.Content{{Text: "go"}}, agent.Client{})
	if err != nil || stop != agent.StopEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	equalLines(t, "hook calls", h.calls(), []string{"SessionStart startup", "UserPromptSubmit go", "PreToolUse bash", "PostToolUse bash", "Stop "})
	equalLines(t, "log", shape(t, logOf(t, state, s.ID())), []string{
		"turn/start",
		"hook/invoked UserPromptSubmit", "hook/result UserPromptSubmit",
		"step/start", `user/message {"kind":"user"} go`,
		"tool/call", "hook/invoked PreToolUse", "hook/result PreToolUse",
		"hook/invoked PostToolUse", "hook/result PostToolUse",
		"tool/result hi\n error=false", "step/end",
		"step/start", "step/end",
		"hook/invoked Stop", "hook/result Stop",
		"turn/end completed",
	})
}

// TestHookDecisions: what each decision does to the turn, in the log and
// to the client, with the side effects that must (not) happen.
func TestHookDecisions(t *testing.T) {
	bash := func(cmd string) replay.Entry {
		args, _ := json.Marshal(map[string]string{"command": cmd, "description": "run it"})
		return toolEntry("c1", "bash", string(args))
	}
	ctxOf := func(plugin, text string) *agent.HookContext {
		return &agent.HookContext{Plugin: plugin, Texts: []string{text}}
	}
	type tc struct {
		name     string
		approval string
		hook     *fakeHook
		answer   agent.Answer
		script   []replay.Entry
		want     []string // the log's shape
		asked    int      // approvals put to the client
		made     bool     // the bash call's file exists afterwards
		stop     agent.StopReason
		thought  string // a thought the client must have been shown
	}
	cases := []tc{
		{
			name: "pre-tool deny: the call never runs", approval: agent.ApprovalOnRequest,
			hook: &fakeHook{pre: func(agent.ToolCall) agent.PreToolDecision {
				return agent.PreToolDecision{Verdict: agent.PreToolDeny, Reason: "no bash here"}
			}},
			script: []replay.Entry{bash("touch made"), textEntry("ok")},
			want: []string{"turn/start", "hook/invoked UserPromptSubmit", "hook/result UserPromptSubmit", "step/start", `user/message {"kind":"user"} go`,
				"tool/call", "hook/invoked PreToolUse", "hook/result PreToolUse", "tool/result Error: no bash here error=true", "step/end",
				"step/start", "step/end", "hook/invoked Stop", "hook/result Stop", "turn/end completed"},
			stop: agent.StopEndTurn,
		},
		{
			name: "pre-tool ask, allowed: it runs", approval: agent.ApprovalOnRequest, answer: agent.Allowed, asked: 1, made: true,
			hook: &fakeHook{pre: func(agent.ToolCall) agent.PreToolDecision {
				return agent.PreToolDecision{Verdict: agent.PreToolAsk, Reason: "check first"}
			}},
			script: []replay.Entry{bash("touch made"), textEntry("ok")},
			stop:   agent.StopEndTurn,
		},
		{
			name: "pre-tool ask, rejected: it does not run", approval: agent.ApprovalOnRequest, answer: agent.Rejected, asked: 1,
			hook: &fakeHook{pre: func(agent.ToolCall) agent.PreToolDecision {
				return agent.PreToolDecision{Verdict: agent.PreToolAsk, Reason: "check first"}
			}},
			script: []replay.Entry{bash("touch made"), textEntry("ok")},
			stop:   agent.StopEndTurn,
		},
		{
			name: "pre-tool ask under approval never: rejected without asking", approval: agent.ApprovalNever, answer: agent.Allowed,
			hook:   &fakeHook{pre: func(agent.ToolCall) agent.PreToolDecision { return agent.PreToolDecision{Verdict: agent.PreToolAsk} }},
			script: []replay.Entry{bash("touch made"), textEntry("ok")},
			stop:   agent.StopEndTurn,
		},
		{
			name: "post-tool block and context: the result is replaced, the context enters the next step", approval: agent.ApprovalOnRequest, made: true,
			hook: &fakeHook{post: func(agent.ToolCall, tools.Result) agent.PostToolDecision {
				return agent.PostToolDecision{Block: true, Feedback: "output rejected", Context: ctxOf("hooks-codex", "audited")}
			}},
			script: []replay.Entry{bash("touch made; echo secret"), textEntry("ok")},
			want: []string{"turn/start", "hook/invoked UserPromptSubmit", "hook/result UserPromptSubmit", "step/start", `user/message {"kind":"user"} go`,
				"tool/call", "hook/invoked PreToolUse", "hook/result PreToolUse", "hook/invoked PostToolUse", "hook/result PostToolUse",
				"tool/result output rejected error=true", "step/end",
				"step/start", `user/message {"kind":"plugin","plugin":"hooks-codex"} audited`, "step/end",
				"hook/invoked Stop", "hook/result Stop", "turn/end completed"},
			stop: agent.StopEndTurn, thought: "[hooks-codex] audited\n",
		},
		{
			name: "prompt blocked: no step, the prompt is not entered", approval: agent.ApprovalOnRequest,
			hook:    &fakeHook{prompt: func(string) agent.PromptDecision { return agent.PromptDecision{Block: true, Reason: "not today"} }},
			want:    []string{"turn/start", "hook/invoked UserPromptSubmit", "hook/result UserPromptSubmit", "turn/end blocked"},
			stop:    agent.StopEndTurn,
			thought: "The prompt was blocked by a UserPromptSubmit hook: not today\n",
		},
		{
			name: "prompt context and session-start context", approval: agent.ApprovalOnRequest,
			hook: &fakeHook{
				prompt: func(string) agent.PromptDecision {
					return agent.PromptDecision{Context: ctxOf("hooks-claude-code", "favourite: teal")}
				},
				start: func(string) *agent.HookContext { return ctxOf("hooks-claude-code", "welcome") },
			},
			script: []replay.Entry{textEntry("teal")},
			want: []string{"turn/start", "hook/invoked UserPromptSubmit", "hook/result UserPromptSubmit", "step/start",
				`user/message {"kind":"plugin","plugin":"hooks-claude-code"} welcome`, `user/message {"kind":"user"} go`,
				`user/message {"kind":"plugin","plugin":"hooks-claude-code"} favourite: teal`, "step/end",
				"hook/invoked Stop", "hook/result Stop", "turn/end completed"},
			stop: agent.StopEndTurn, thought: "[hooks-claude-code] favourite: teal\n",
		},
		{
			name: "stop continues once, then sees stop_hook_active", approval: agent.ApprovalOnRequest,
			hook: &fakeHook{stop: func(p *agent.HookPoint) agent.StopDecision {
				if p.StopHookActive {
					return agent.StopDecision{}
				}
				return agent.StopDecision{Continue: true, Message: "say SECOND", Plugin: "hooks-claude-code"}
			}},
			script: []replay.Entry{textEntry("FIRST"), textEntry("SECOND")},
			want: []string{"turn/start", "hook/invoked UserPromptSubmit", "hook/result UserPromptSubmit", "step/start", `user/message {"kind":"user"} go`, "step/end",
				"hook/invoked Stop", "hook/result Stop",
				"step/start", `user/message {"kind":"plugin","plugin":"hooks-claude-code"} say SECOND`, "step/end",
				"hook/invoked Stop", "hook/result Stop", "turn/end completed"},
			stop: agent.StopEndTurn,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, cwd, state := hookEngine(t, c.approval, []agent.Hook{c.hook}, c.script...)
			s, err := e.NewSession(context.Background(), cwd)
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{}
			ap := &approverFunc{f: func(agent.Approval) agent.Answer { return c.answer }}
			stop, err := s.Prompt(context.Background(), []agent.Content{{Text: "go"}}, agent.Client{Updates: rec, Approver: ap})
			if err != nil || stop != c.stop {
				t.Fatalf("prompt: %v %v, want %v", stop, err, c.stop)
			}
			if c.want != nil {
				equalLines(t, "log", shape(t, logOf(t, state, s.ID())), c.want)
			}
			if len(ap.asked) != c.asked {
				t.Errorf("asked the client %d time(s), want %d", len(ap.asked), c.asked)
			}
			for _, a := range ap.asked {
				if a.Reason != "check first" || !strings.Contains(a.Detail, "check first") || a.Call.Name != "bash" {
					t.Errorf("approval %+v does not carry the hook's reason and the call", a)
				}
			}
			_, statErr := os.Stat(filepath.Join(cwd, "made"))
			if made := statErr == nil; made != c.made {
				t.Errorf("the bash call's file exists: %v, want %v", made, c.made)
			}
			lines := rec.got()
			if !slices.Contains(lines, "thought hook: hooks.json: something was wrong\n") {
				t.Errorf("the engine's notice was not shown at the first prompt: %q", lines)
			}
			if c.thought != "" && !slices.Contains(lines, "thought "+c.thought) {
				t.Errorf("the client was not shown %q: %q", c.thought, lines)
			}
			if c.thought != "" && strings.HasPrefix(c.thought, "[hooks-") {
				// A loaded session shows the hook's context as the live
				// turn did.
				hist := &recorder{}
				s.History(context.Background(), hist)
				if !slices.Contains(hist.got(), "thought "+c.thought) {
					t.Errorf("the history does not retell %q: %q", c.thought, hist.got())
				}
			}
		})
	}
}

// TestHookStopContinuesAreBounded: a Stop hook that always asks to go on
// does not keep the turn going forever.
func TestHookStopContinuesAreBounded(t *testing.T) {
	h := &fakeHook{stop: func(*agent.HookPoint) agent.StopDecision {
		return agent.StopDecision{Continue: true, Message: "again", Plugin: "hooks-claude-code"}
	}}
	var script []replay.Entry
	for range 20 {
		script = append(script, textEntry("more"))
	}
	e, cwd, state := hookEngine(t, agent.ApprovalOnRequest, []agent.Hook{h}, script...)
	s, err := e.NewSession(context.Background(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if stop, err := s.Prompt(context.Background(), []agent.Content{{Text: "go"}}, agent.Client{Updates: rec}); err != nil || stop != agent.StopEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	steps := 0
	for _, l := range shape(t, logOf(t, state, s.ID())) {
		if l == "step/start" {
			steps++
		}
	}
	if steps != 9 {
		t.Errorf("%d steps, want 9 (the answer and 8 continuations)", steps)
	}
	warned := false
	for _, l := range rec.got() {
		warned = warned || strings.Contains(l, "Stop hook asked the turn to go on again after 8 continuations")
	}
	if !warned {
		t.Errorf("the user was not told why the turn ended: %q", rec.got())
	}
}

// TestHookRecordsSurviveCancel: a hook whose turn is cancelled while it
// runs still gets its result written, so the log stays paired.
func TestHookRecordsSurviveCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := &fakeHook{pre: func(agent.ToolCall) agent.PreToolDecision {
		cancel()
		return agent.PreToolDecision{}
	}}
	e, cwd, state := hookEngine(t, agent.ApprovalOnRequest, []agent.Hook{h},
		toolEntry("c1", "bash", `{"command":"touch made","description":"x"}`))
	s, err := e.NewSession(context.Background(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := s.Prompt(ctx, []agent.Content{{Text: "go"}}, agent.Client{}); err != nil || stop != agent.StopCancelled {
		t.Fatalf("prompt: %v %v, want cancelled", stop, err)
	}
	got := shape(t, logOf(t, state, s.ID()))
	if !slices.Contains(got, "hook/result PreToolUse") || got[len(got)-1] != "turn/end aborted" {
		t.Errorf("log after a cancel inside a hook:\n  %s", strings.Join(got, "\n  "))
	}
}
