package hooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// runDuration is the run time every test command reports, so records are
// exact.
const runDuration = 1500 * time.Microsecond

// rig is a HookPoint's world: commands really run under bash in dir,
// records and warnings are collected.
type rig struct {
	dir string

	mu       sync.Mutex
	records  []string // "type data"
	warnings []string
	commands []agent.HookCommand
}

func newRig(t *testing.T) *rig {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	return &rig{dir: t.TempDir()}
}

func (r *rig) run(ctx context.Context, c agent.HookCommand) agent.HookRun {
	r.mu.Lock()
	r.commands = append(r.commands, c)
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", c.Script)
	cmd.Dir = r.dir
	cmd.Stdin = bytes.NewReader(c.Stdin)
	cmd.Env = append(os.Environ(), c.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := agent.HookRun{Stdout: stdout.String(), Stderr: stderr.String(), Duration: runDuration}
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		run.TimedOut = true
	case err == nil:
		run.Exited = true
	case errors.As(err, &ee) && ee.Exited():
		run.Exited, run.ExitCode = true, ee.ExitCode()
	case errors.As(err, &ee):
	default:
		run.Err = err
	}
	return run
}

func (r *rig) record(_ context.Context, typ string, p sessionlog.Payload) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, typ+" "+string(p.AppendJSON(nil)))
	return nil
}

func (r *rig) warn(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, msg)
}

// point makes a HookPoint of session "s1" in turn.
func (r *rig) point(turn int, edit func(*agent.HookPoint)) *agent.HookPoint {
	p := agent.HookPoint{Session: "s1", Cwd: r.dir, Model: "deepseek-chat", Turn: turn}
	if edit != nil {
		edit(&p)
	}
	return agent.NewHookPoint(p, r.run, r.record, r.warn)
}

func (r *rig) file(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func bridge(t *testing.T, d Dialect, config string, o Options) *Bridge {
	t.Helper()
	cfg, _, err := Parse(d, []byte(config), Substitution{})
	if err != nil {
		t.Fatal(err)
	}
	return New(cfg, o)
}

func check(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %#v\nwant %#v", what, got, want)
	}
}

var bashCall = agent.ToolCall{ID: "call_1", Name: "bash", Arguments: []byte(`{"command": "ls -la", "timeout": 5000, "2": "x", "1": null}`)}

// The reference's hook-cc-pretool-deny scenario.
func TestClaudePreToolDeny(t *testing.T) {
	r := newRig(t)
	b := bridge(t, ClaudeCode, `{"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"echo 'bash is disabled by policy in this session' >&2; exit 2"}]}]}}`, Options{})
	got := b.PreTool(context.Background(), r.point(1, nil), bashCall)
	check(t, "decision", got, agent.PreToolDecision{Verdict: agent.PreToolDeny, Reason: "bash is disabled by policy in this session"})
	check(t, "records", r.records, []string{
		`hook/invoked {"turn":1,"point":"PreToolUse","dialect":"claude-code","handlerId":"claude-code:PreToolUse:1","matcher":"bash"}`,
		`hook/result {"turn":1,"point":"PreToolUse","handlerId":"claude-code:PreToolUse:1","decision":"block","exitCode":2,"stderrSummary":"bash is disabled by policy in this session","durationMs":1.5}`,
	})
	// Another tool is not matched: nothing runs.
	got = b.PreTool(context.Background(), r.point(1, nil), agent.ToolCall{Name: "bash_output"})
	check(t, "unmatched", got, agent.PreToolDecision{})
	check(t, "record count", len(r.records), 2)
}

func TestClaudePayloadsAndEnv(t *testing.T) {
	r := newRig(t)
	cfg := `{"hooks":{
	 "PreToolUse":[{"hooks":[{"command":"cat > pre.json; printf %s \"$CLAUDE_PROJECT_DIR\" > env.txt"}]}],
	 "PostToolUse":[{"matcher":"ba.h","hooks":[{"command":"cat > post.json"}]}],
	 "UserPromptSubmit":[{"hooks":[{"command":"cat > prompt.json"}]}],
	 "Stop":[{"hooks":[{"command":"cat > stop.json"}]}],
	 "SessionStart":[{"matcher":"startup","hooks":[{"command":"cat > start.json"}]}]}}`
	b := bridge(t, ClaudeCode, cfg, Options{})
	ctx := context.Background()
	p := r.point(3, func(p *agent.HookPoint) { p.TranscriptPath = "/logs/s1.jsonl"; p.StopHookActive = true })
	b.SessionStart(ctx, r.point(0, nil), "startup")
	b.PromptSubmit(ctx, p, "fix \"it\"\n")
	b.PreTool(ctx, p, bashCall)
	b.PostTool(ctx, p, bashCall, tools.Result{Text: "total 0\n"})
	b.Stop(ctx, p)

	dir := sessionlog.AppendString(nil, r.dir)
	base := `{"session_id":"s1","transcript_path":"/logs/s1.jsonl","cwd":` + string(dir)
	input := `"tool_input":{"1":null,"2":"x","command":"ls -la","timeout":5000}`
	check(t, "start", r.file(t, "start.json"), `{"session_id":"s1","transcript_path":"","cwd":`+string(dir)+`,"hook_event_name":"SessionStart","source":"startup"}`+"\n")
	check(t, "prompt", r.file(t, "prompt.json"), base+`,"hook_event_name":"UserPromptSubmit","prompt":"fix \"it\"\n"}`+"\n")
	check(t, "pre", r.file(t, "pre.json"), base+`,"hook_event_name":"PreToolUse","tool_name":"bash",`+input+`,"tool_use_id":"call_1"}`+"\n")
	check(t, "post", r.file(t, "post.json"), base+`,"hook_event_name":"PostToolUse","tool_name":"bash",`+input+`,"tool_use_id":"call_1","tool_response":"total 0\n"}`+"\n")
	check(t, "stop", r.file(t, "stop.json"), base+`,"hook_event_name":"Stop","stop_hook_active":true}`+"\n")
	check(t, "env", r.file(t, "env.txt"), r.dir)

	// SessionStart (turn 0) writes no record; the others count on from 2.
	var ids []string
	for _, rec := range r.records {
		if strings.HasPrefix(rec, "hook/invoked") {
			ids = append(ids, rec[strings.Index(rec, `"handlerId"`):])
		}
	}
	check(t, "ids", ids, []string{
		`"handlerId":"claude-code:UserPromptSubmit:2"}`,
		`"handlerId":"claude-code:PreToolUse:3"}`,
		`"handlerId":"claude-code:PostToolUse:4","matcher":"ba.h"}`,
		`"handlerId":"claude-code:Stop:5"}`,
	})
	for _, c := range r.commands {
		check(t, "timeout", c.Timeout, 600*time.Second)
	}

	// An explicit project dir wins.
	b = bridge(t, ClaudeCode, cfg, Options{ProjectDir: "/proj"})
	b.PreTool(ctx, p, agent.ToolCall{Name: "read", Arguments: []byte(`[1]`)})
	check(t, "env", r.file(t, "env.txt"), "/proj")
	check(t, "non-object arguments", r.file(t, "pre.json"), base+`,"hook_event_name":"PreToolUse","tool_name":"read","tool_input":{},"tool_use_id":""}`+"\n")
}

func TestClaudeDecisions(t *testing.T) {
	ctx := context.Background()
	json := func(s string) string { return "echo '" + s + "'" }
	tests := []struct {
		name    string
		config  string
		do      func(b *Bridge, p *agent.HookPoint) any
		want    any
		results []string // hook/result data
		warns   []string
	}{{
		name: "ask with reason",
		config: `{"PreToolUse":[{"hooks":[{"command":` + q(json(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"sure?"}}`)) + `},
			{"command":` + q(json(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`)) + `}]}]}`,
		do:   func(b *Bridge, p *agent.HookPoint) any { return b.PreTool(ctx, p, bashCall) },
		want: agent.PreToolDecision{Verdict: agent.PreToolAsk, Reason: "sure?"},
		results: []string{
			`{"turn":1,"point":"PreToolUse","handlerId":"claude-code:PreToolUse:1","decision":"ask","exitCode":0,"durationMs":1.5}`,
			`{"turn":1,"point":"PreToolUse","handlerId":"claude-code:PreToolUse:2","decision":"allow","exitCode":0,"durationMs":1.5}`,
		},
	}, {
		name:   "deny beats ask; deny without reason",
		config: `{"PreToolUse":[{"hooks":[{"command":` + q(json(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"q"}}`)) + `},{"command":"exit 2"}]}]}`,
		do:     func(b *Bridge, p *agent.HookPoint) any { return b.PreTool(ctx, p, bashCall) },
		want:   agent.PreToolDecision{Verdict: agent.PreToolDeny, Reason: "blocked by PreToolUse hook"},
		results: []string{
			`{"turn":1,"point":"PreToolUse","handlerId":"claude-code:PreToolUse:1","decision":"ask","exitCode":0,"durationMs":1.5}`,
			`{"turn":1,"point":"PreToolUse","handlerId":"claude-code:PreToolUse:2","decision":"block","exitCode":2,"durationMs":1.5}`,
		},
	}, {
		name:   "exit 1 decides nothing; updatedInput and systemMessage warn",
		config: `{"PreToolUse":[{"hooks":[{"command":"echo bad >&2; exit 1"},{"command":` + q(json(`{"systemMessage":"careful","continue":false,"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"ls"}}}`)) + `}]}]}`,
		do:     func(b *Bridge, p *agent.HookPoint) any { return b.PreTool(ctx, p, bashCall) },
		want:   agent.PreToolDecision{},
		results: []string{
			`{"turn":1,"point":"PreToolUse","handlerId":"claude-code:PreToolUse:1","decision":"pass","exitCode":1,"stderrSummary":"bad","durationMs":1.5}`,
			`{"turn":1,"point":"PreToolUse","handlerId":"claude-code:PreToolUse:2","decision":"stop","exitCode":0,"durationMs":1.5}`,
		},
		warns: []string{
			"hooks-claude-code: PreToolUse hook requested updatedInput, which is not honored (ignored)",
			"hooks-claude-code: PreToolUse hook: careful",
		},
	}, {
		name:   "prompt blocked",
		config: `{"UserPromptSubmit":[{"hooks":[{"command":"echo 'no secrets' >&2; exit 2"},{"command":"exit 2"}]}]}`,
		do:     func(b *Bridge, p *agent.HookPoint) any { return b.PromptSubmit(ctx, p, "hi") },
		want:   agent.PromptDecision{Block: true, Reason: "no secrets"},
		results: []string{
			`{"turn":1,"point":"UserPromptSubmit","handlerId":"claude-code:UserPromptSubmit:1","decision":"block","exitCode":2,"stderrSummary":"no secrets","durationMs":1.5}`,
			`{"turn":1,"point":"UserPromptSubmit","handlerId":"claude-code:UserPromptSubmit:2","decision":"block","exitCode":2,"durationMs":1.5}`,
		},
	}, {
		name:   "prompt context; plain stdout is not context in Claude Code",
		config: `{"UserPromptSubmit":[{"hooks":[{"command":"echo plain"},{"command":` + q(json(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"the date is today"}}`)) + `}]}]}`,
		do:     func(b *Bridge, p *agent.HookPoint) any { return b.PromptSubmit(ctx, p, "hi") },
		want:   agent.PromptDecision{Context: &agent.HookContext{Plugin: "hooks-claude-code", Texts: []string{"the date is today"}}},
		results: []string{
			`{"turn":1,"point":"UserPromptSubmit","handlerId":"claude-code:UserPromptSubmit:1","decision":"pass","exitCode":0,"durationMs":1.5}`,
			`{"turn":1,"point":"UserPromptSubmit","handlerId":"claude-code:UserPromptSubmit:2","decision":"pass","exitCode":0,"durationMs":1.5}`,
		},
	}, {
		name:   "post-tool block with context",
		config: `{"PostToolUse":[{"matcher":"bash","hooks":[{"command":` + q(json(`{"decision":"block","reason":"lint failed","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"run gofmt"}}`)) + `}]}]}`,
		do: func(b *Bridge, p *agent.HookPoint) any {
			return b.PostTool(ctx, p, bashCall, tools.Result{Text: "ok"})
		},
		want: agent.PostToolDecision{Block: true, Feedback: "lint failed", Context: &agent.HookContext{Plugin: "hooks-claude-code", Texts: []string{"run gofmt"}}},
		results: []string{
			`{"turn":1,"point":"PostToolUse","handlerId":"claude-code:PostToolUse:1","decision":"block","exitCode":0,"durationMs":1.5}`,
		},
	}, {
		name:   "post-tool block default feedback",
		config: `{"PostToolUse":[{"hooks":[{"command":"exit 2"}]}]}`,
		do: func(b *Bridge, p *agent.HookPoint) any {
			return b.PostTool(ctx, p, bashCall, tools.Result{Text: "ok"})
		},
		want:    agent.PostToolDecision{Block: true, Feedback: "blocked by PostToolUse hook"},
		results: []string{`{"turn":1,"point":"PostToolUse","handlerId":"claude-code:PostToolUse:1","decision":"block","exitCode":2,"durationMs":1.5}`},
	}, {
		name:    "stop continues",
		config:  `{"Stop":[{"hooks":[{"command":"echo 'Also reply SECOND.' >&2; exit 2"}]}]}`,
		do:      func(b *Bridge, p *agent.HookPoint) any { return b.Stop(ctx, p) },
		want:    agent.StopDecision{Continue: true, Message: "Also reply SECOND.", Plugin: "hooks-claude-code"},
		results: []string{`{"turn":1,"point":"Stop","handlerId":"claude-code:Stop:1","decision":"block","exitCode":2,"stderrSummary":"Also reply SECOND.","durationMs":1.5}`},
	}, {
		name:    "stop default message",
		config:  `{"Stop":[{"hooks":[{"command":` + q(json(`{"decision":"block"}`)) + `}]}]}`,
		do:      func(b *Bridge, p *agent.HookPoint) any { return b.Stop(ctx, p) },
		want:    agent.StopDecision{Continue: true, Message: "continue: blocked by Stop hook", Plugin: "hooks-claude-code"},
		results: []string{`{"turn":1,"point":"Stop","handlerId":"claude-code:Stop:1","decision":"block","exitCode":0,"durationMs":1.5}`},
	}, {
		name:    "stop approve does nothing",
		config:  `{"Stop":[{"hooks":[{"command":` + q(json(`{"decision":"approve","reason":"done"}`)) + `}]}]}`,
		do:      func(b *Bridge, p *agent.HookPoint) any { return b.Stop(ctx, p) },
		want:    agent.StopDecision{},
		results: []string{`{"turn":1,"point":"Stop","handlerId":"claude-code:Stop:1","decision":"approve","exitCode":0,"durationMs":1.5}`},
	}, {
		name:    "timeout",
		config:  `{"Stop":[{"hooks":[{"command":"echo started >&2; sleep 5","timeout":0.2}]}]}`,
		do:      func(b *Bridge, p *agent.HookPoint) any { return b.Stop(ctx, p) },
		want:    agent.StopDecision{},
		results: []string{`{"turn":1,"point":"Stop","handlerId":"claude-code:Stop:1","decision":"pass","stderrSummary":"started\nhook timed out after 0.2 s","durationMs":1.5}`},
		warns:   []string{"hooks-claude-code: a Stop hook ran into its time limit (200ms) and was stopped; the turn goes on"},
	}, {
		name:    "killed by a signal",
		config:  `{"Stop":[{"hooks":[{"command":"kill -9 $$"}]}]}`,
		do:      func(b *Bridge, p *agent.HookPoint) any { return b.Stop(ctx, p) },
		want:    agent.StopDecision{},
		results: []string{`{"turn":1,"point":"Stop","handlerId":"claude-code:Stop:1","decision":"pass","durationMs":1.5}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			b := bridge(t, ClaudeCode, tt.config, Options{})
			check(t, "decision", tt.do(b, r.point(1, nil)), tt.want)
			var results []string
			for _, rec := range r.records {
				if d, ok := strings.CutPrefix(rec, sessionlog.TypeHookResult+" "); ok {
					results = append(results, d)
				}
			}
			check(t, "results", results, tt.results)
			check(t, "warnings", r.warnings, tt.warns)
		})
	}
}

// q quotes s as a JSON string.
func q(s string) string { return string(sessionlog.AppendString(nil, s)) }

func TestCodex(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	cfg := `{"hooks":{
	 "SessionStart":[{"matcher":"^startup$","hooks":[{"command":"echo '  The favourite colour is teal.  '"}]}],
	 "UserPromptSubmit":[{"hooks":[{"command":"cat > prompt.json; echo plain context"},{"command":"echo '{\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":\"json context\"}}'"},{"command":"echo not context; exit 1"}]}],
	 "PreToolUse":[{"matcher":"ash","hooks":[{"command":"cat > pre.json; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\"}}'"}]}],
	 "PostToolUse":[{"hooks":[{"command":"cat > post.json; echo 'output rejected' >&2; exit 2","timeoutSec":7}]}],
	 "Stop":[{"hooks":[{"command":"cat > stop.json"}]}]}}`
	b := bridge(t, Codex, cfg, Options{ProjectDir: "/ignored"})

	got := b.SessionStart(ctx, r.point(0, nil), "startup")
	check(t, "start", got, &agent.HookContext{Plugin: "hooks-codex", Texts: []string{"The favourite colour is teal."}})
	check(t, "resume", b.SessionStart(ctx, r.point(0, nil), "resume"), (*agent.HookContext)(nil))

	p := r.point(2, nil)
	check(t, "prompt", b.PromptSubmit(ctx, p, "hello"),
		agent.PromptDecision{Context: &agent.HookContext{Plugin: "hooks-codex", Texts: []string{"plain context", "json context"}}})
	check(t, "pre: ask is ignored", b.PreTool(ctx, p, bashCall), agent.PreToolDecision{})
	check(t, "post", b.PostTool(ctx, p, bashCall, tools.Result{Text: "out"}), agent.PostToolDecision{Block: true, Feedback: "output rejected"})
	check(t, "stop", b.Stop(ctx, p), agent.StopDecision{})

	dir := string(sessionlog.AppendString(nil, r.dir))
	base := `{"session_id":"s1","transcript_path":null,"cwd":` + dir
	tail := `,"model":"deepseek-chat","permission_mode":"default","turn_id":"2"`
	check(t, "prompt.json", r.file(t, "prompt.json"), base+`,"hook_event_name":"UserPromptSubmit"`+tail+`,"prompt":"hello"}`)
	check(t, "pre.json", r.file(t, "pre.json"), base+`,"hook_event_name":"PreToolUse"`+tail+`,"tool_name":"bash","tool_input":{"command":"ls -la"},"tool_use_id":"call_1"}`)
	check(t, "post.json", r.file(t, "post.json"), base+`,"hook_event_name":"PostToolUse"`+tail+`,"tool_name":"bash","tool_input":{"command":"ls -la"},"tool_use_id":"call_1","tool_response":"out"}`)
	check(t, "stop.json", r.file(t, "stop.json"), base+`,"hook_event_name":"Stop"`+tail+`,"stop_hook_active":false,"last_assistant_message":null}`)

	check(t, "records", r.records, []string{
		`hook/invoked {"turn":2,"point":"UserPromptSubmit","dialect":"codex","handlerId":"codex:UserPromptSubmit:2"}`,
		`hook/result {"turn":2,"point":"UserPromptSubmit","handlerId":"codex:UserPromptSubmit:2","decision":"pass","exitCode":0,"durationMs":1.5}`,
		`hook/invoked {"turn":2,"point":"UserPromptSubmit","dialect":"codex","handlerId":"codex:UserPromptSubmit:3"}`,
		`hook/result {"turn":2,"point":"UserPromptSubmit","handlerId":"codex:UserPromptSubmit:3","decision":"pass","exitCode":0,"durationMs":1.5}`,
		`hook/invoked {"turn":2,"point":"UserPromptSubmit","dialect":"codex","handlerId":"codex:UserPromptSubmit:4"}`,
		`hook/result {"turn":2,"point":"UserPromptSubmit","handlerId":"codex:UserPromptSubmit:4","decision":"pass","exitCode":1,"durationMs":1.5}`,
		`hook/invoked {"turn":2,"point":"PreToolUse","dialect":"codex","handlerId":"codex:PreToolUse:5","matcher":"ash"}`,
		`hook/result {"turn":2,"point":"PreToolUse","handlerId":"codex:PreToolUse:5","decision":"ask","exitCode":0,"durationMs":1.5}`,
		`hook/invoked {"turn":2,"point":"PostToolUse","dialect":"codex","handlerId":"codex:PostToolUse:6"}`,
		`hook/result {"turn":2,"point":"PostToolUse","handlerId":"codex:PostToolUse:6","decision":"block","exitCode":2,"stderrSummary":"output rejected","durationMs":1.5}`,
		`hook/invoked {"turn":2,"point":"Stop","dialect":"codex","handlerId":"codex:Stop:7"}`,
		`hook/result {"turn":2,"point":"Stop","handlerId":"codex:Stop:7","decision":"pass","exitCode":0,"durationMs":1.5}`,
	})
	for _, c := range r.commands {
		if c.Env != nil {
			t.Errorf("codex command %q has env %q", c.Script, c.Env)
		}
	}
	if got := r.commands[len(r.commands)-2].Timeout; got != 7*time.Second {
		t.Errorf("post timeout %v", got)
	}
}

// A command that cannot run is exit-less with the error as its stderr.
func TestRunError(t *testing.T) {
	var records []string
	rec := func(_ context.Context, typ string, p sessionlog.Payload) error {
		records = append(records, string(p.AppendJSON(nil)))
		return errors.New("disk full")
	}
	var warns []string
	run := func(context.Context, agent.HookCommand) agent.HookRun {
		return agent.HookRun{Err: errors.New("bash: not found"), Duration: 2 * time.Millisecond}
	}
	b := bridge(t, Codex, `{"Stop":[{"hooks":[{"command":"x"}]}]}`, Options{})
	p := agent.NewHookPoint(agent.HookPoint{Turn: 4}, run, rec, func(m string) { warns = append(warns, m) })
	check(t, "decision", b.Stop(context.Background(), p), agent.StopDecision{})
	check(t, "records", records, []string{
		`{"turn":4,"point":"Stop","dialect":"codex","handlerId":"codex:Stop:1"}`,
		`{"turn":4,"point":"Stop","handlerId":"codex:Stop:1","decision":"pass","stderrSummary":"bash: not found","durationMs":2}`,
	})
	check(t, "warnings", warns, []string{
		"hooks-codex: cannot record hook/invoked: disk full",
		"hooks-codex: a Stop hook could not run (bash: not found); as a non-blocking error, the turn goes on",
		"hooks-codex: cannot record hook/result: disk full",
	})

	// A HookPoint without a runner fails the same way.
	b.Stop(context.Background(), agent.NewHookPoint(agent.HookPoint{Turn: 1}, nil, rec, nil))
	if got := records[len(records)-1]; !strings.Contains(got, `"stderrSummary":"agent: this hook point cannot run commands"`) {
		t.Errorf("record %s", got)
	}
}

// A done context starts no command.
func TestCancelled(t *testing.T) {
	ran := 0
	run := func(context.Context, agent.HookCommand) agent.HookRun { ran++; return agent.HookRun{Exited: true} }
	b := bridge(t, ClaudeCode, `{"Stop":[{"hooks":[{"command":"a"},{"command":"b"}]}]}`, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b.Stop(ctx, agent.NewHookPoint(agent.HookPoint{Turn: 1}, run, nil, nil))
	check(t, "ran", ran, 0)
}

// Sessions may share a Bridge: handler ids stay unique.
func TestConcurrentIDs(t *testing.T) {
	var mu sync.Mutex
	ids := map[string]bool{}
	rec := func(_ context.Context, typ string, p sessionlog.Payload) error {
		if d, ok := p.(sessionlog.HookInvokedData); ok {
			mu.Lock()
			ids[d.HandlerID] = true
			mu.Unlock()
		}
		return nil
	}
	run := func(context.Context, agent.HookCommand) agent.HookRun { return agent.HookRun{Exited: true} }
	b := bridge(t, ClaudeCode, `{"PreToolUse":[{"hooks":[{"command":"a"},{"command":"b"}]}]}`, Options{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				b.PreTool(context.Background(), agent.NewHookPoint(agent.HookPoint{Turn: 1}, run, rec, nil), bashCall)
			}
		})
	}
	wg.Wait()
	check(t, "distinct ids", len(ids), 8*25*2)
	if !ids["claude-code:PreToolUse:400"] || ids["claude-code:PreToolUse:401"] {
		t.Errorf("ids do not count 1…400")
	}
}
