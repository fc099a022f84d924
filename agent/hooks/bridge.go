package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/internal/jsrules"
	"github.com/reel-agent/reel/sessionlog"
)

// The defaults of Options.
const (
	DefaultTimeout      = 600 * time.Second
	DefaultSummaryLimit = 500
)

// Options tunes a Bridge.
type Options struct {
	// PluginRoot replaces ${CLAUDE_PLUGIN_ROOT} in Claude Code commands
	// (Load only; "" leaves it verbatim).
	PluginRoot string
	// ProjectDir replaces ${CLAUDE_PROJECT_DIR} in Claude Code commands
	// (Load only) and is their CLAUDE_PROJECT_DIR; "" leaves the
	// placeholder verbatim and sets the variable to the session's cwd.
	ProjectDir string
	// DefaultTimeout limits a command without a timeout of its own
	// (0: DefaultTimeout).
	DefaultTimeout time.Duration
	// SummaryLimit bounds hook/result's stderrSummary, in UTF-16 code
	// units (0: DefaultSummaryLimit).
	SummaryLimit int
}

// Bridge runs the command hooks of one config at the engine's extension
// points. It is safe for concurrent use by several sessions.
type Bridge struct {
	cfg     *Config
	opt     Options
	handler atomic.Int64 // the last handler id's number
}

var _ agent.Hook = (*Bridge)(nil)

// New returns a Bridge running c's hooks. c must not change afterwards.
func New(c *Config, o Options) *Bridge {
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = DefaultTimeout
	}
	if o.SummaryLimit <= 0 {
		o.SummaryLimit = DefaultSummaryLimit
	}
	return &Bridge{cfg: c, opt: o}
}

// Load reads the hook config at path, in dialect d, and returns its
// Bridge and the warnings the caller should show (one per skipped hook).
// A config that cannot be read is an error wrapping the os error; one
// that is not JSON or carries an invalid matcher is a *ConfigError naming
// path. On error nothing runs: the caller warns and goes on without it.
func Load(path string, d Dialect, o Options) (*Bridge, []string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("hooks: read config: %w", err)
	}
	cfg, skipped, err := Parse(d, raw, Substitution{PluginRoot: o.PluginRoot, ProjectDir: o.ProjectDir})
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			ce.File = path
		}
		return nil, nil, err
	}
	var warnings []string
	for _, s := range skipped {
		warnings = append(warnings, s.String())
	}
	return New(cfg, o), warnings, nil
}

// SessionStart runs the SessionStart hooks whose matcher selects source;
// their additional context is returned.
func (b *Bridge) SessionStart(ctx context.Context, p *agent.HookPoint, source string) *agent.HookContext {
	m := b.run(ctx, p, EventSessionStart, source, sessionStartPayload(b.cfg.Dialect, p, source))
	return b.context(m)
}

// PromptSubmit runs the UserPromptSubmit hooks: a deny (or block) refuses
// the prompt, else their additional context follows it.
func (b *Bridge) PromptSubmit(ctx context.Context, p *agent.HookPoint, prompt string) agent.PromptDecision {
	m := b.run(ctx, p, EventUserPromptSubmit, "", promptPayload(b.cfg.Dialect, p, prompt))
	if m.Decision == MergedDeny {
		return agent.PromptDecision{Block: true, Reason: m.Reason}
	}
	return agent.PromptDecision{Context: b.context(m)}
}

// PreTool runs the PreToolUse hooks whose matcher selects the tool's
// name: a deny refuses the call; in Claude Code an ask sends it to the
// approver. Allow decides nothing (the sandbox still does).
func (b *Bridge) PreTool(ctx context.Context, p *agent.HookPoint, call agent.ToolCall) agent.PreToolDecision {
	m := b.run(ctx, p, EventPreToolUse, call.Name, preToolPayload(b.cfg.Dialect, p, call))
	switch {
	case m.Decision == MergedDeny:
		return agent.PreToolDecision{Verdict: agent.PreToolDeny, Reason: orDefault(m.Reason, "blocked by PreToolUse hook")}
	case m.Decision == MergedAsk && b.cfg.Dialect == ClaudeCode:
		return agent.PreToolDecision{Verdict: agent.PreToolAsk, Reason: m.Reason}
	}
	return agent.PreToolDecision{}
}

// PostTool runs the PostToolUse hooks whose matcher selects the tool's
// name: a deny replaces the result by the hooks' feedback; their
// additional context follows the step's results either way.
func (b *Bridge) PostTool(ctx context.Context, p *agent.HookPoint, call agent.ToolCall, res tools.Result) agent.PostToolDecision {
	m := b.run(ctx, p, EventPostToolUse, call.Name, postToolPayload(b.cfg.Dialect, p, call, res.Text))
	d := agent.PostToolDecision{Context: b.context(m)}
	if m.Decision == MergedDeny {
		d.Block, d.Feedback = true, orDefault(m.Reason, "blocked by PostToolUse hook")
	}
	return d
}

// Stop runs the Stop hooks: a deny (exit 2) makes the turn go on with
// the hooks' reason.
func (b *Bridge) Stop(ctx context.Context, p *agent.HookPoint) agent.StopDecision {
	m := b.run(ctx, p, EventStop, "", stopPayload(b.cfg.Dialect, p))
	if m.Decision != MergedDeny {
		return agent.StopDecision{}
	}
	return agent.StopDecision{Continue: true, Message: orDefault(m.Reason, "continue: blocked by Stop hook"), Plugin: b.cfg.Dialect.plugin()}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// context is m's additional context as one message of the bridge's
// plugin, nil when there is none.
func (b *Bridge) context(m Merged) *agent.HookContext {
	if len(m.Contexts) == 0 {
		return nil
	}
	return &agent.HookContext{Plugin: b.cfg.Dialect.plugin(), Texts: m.Contexts}
}

// run runs, serially and in config order, every command of event's
// groups whose matcher selects query, each fed stdin, and merges what
// they said. Each writes hook/invoked before it runs and hook/result
// after. Once ctx is done no further command starts.
func (b *Bridge) run(ctx context.Context, p *agent.HookPoint, event, query string, stdin []byte) Merged {
	d := b.cfg.Dialect
	if d == ClaudeCode {
		stdin = append(stdin, '\n')
	}
	var env []string
	if d == ClaudeCode {
		if dir := orDefault(b.opt.ProjectDir, p.Cwd); dir != "" {
			env = []string{"CLAUDE_PROJECT_DIR=" + dir}
		}
	}
	plainContext := d == Codex && (event == EventSessionStart || event == EventUserPromptSubmit)
	var outs []Output
	groups := b.cfg.Events[event]
	for gi := range groups {
		g := &groups[gi]
		if !g.matches(d, query) {
			continue
		}
		for _, h := range g.Hooks {
			if ctx.Err() != nil {
				return Merge(outs)
			}
			id := string(d) + ":" + event + ":" + strconv.FormatInt(b.handler.Add(1), 10)
			b.record(ctx, p, sessionlog.TypeHookInvoked, sessionlog.HookInvokedData{
				Turn: p.Turn, Point: event, Dialect: string(d), HandlerID: id, Matcher: g.Matcher,
			})
			timeout := h.Timeout
			if timeout <= 0 {
				timeout = b.opt.DefaultTimeout
			}
			run := p.Run(ctx, agent.HookCommand{Script: h.Command, Stdin: stdin, Env: env, Timeout: timeout})
			out := outputOf(run, event, timeout)
			switch {
			case run.Err != nil:
				p.Warn(fmt.Sprintf("%s: a %s hook could not run (%v); as a non-blocking error, the turn goes on", d.plugin(), event, run.Err))
			case run.TimedOut:
				p.Warn(fmt.Sprintf("%s: a %s hook ran into its time limit (%s) and was stopped; the turn goes on", d.plugin(), event, timeout))
			}
			if plainContext && out.ExitCode != nil && *out.ExitCode == 0 && out.AdditionalContext == "" &&
				out.Stdout != "" && out.Stdout[0] != '{' {
				out.AdditionalContext = out.Stdout
			}
			outs = append(outs, out)
			if out.UpdatedInput != nil {
				p.Warn(fmt.Sprintf("%s: %s hook requested updatedInput, which is not honored (ignored)", d.plugin(), event))
			}
			if out.SystemMessage != "" {
				p.Warn(fmt.Sprintf("%s: %s hook: %s", d.plugin(), event, out.SystemMessage))
			}
			b.record(ctx, p, sessionlog.TypeHookResult, sessionlog.HookResultData{
				Turn: p.Turn, Point: event, HandlerID: id, Decision: out.resultDecision(),
				ExitCode: out.ExitCode, StderrSummary: summarize(out.Stderr, b.opt.SummaryLimit),
				DurationMs: float64(run.Duration) / float64(time.Millisecond),
			})
		}
	}
	return Merge(outs)
}

// record writes a hook record; a failure is warned about, not fatal.
func (b *Bridge) record(ctx context.Context, p *agent.HookPoint, typ string, data sessionlog.Payload) {
	if err := p.Record(ctx, typ, data); err != nil {
		p.Warn(fmt.Sprintf("%s: cannot record %s: %v", b.cfg.Dialect.plugin(), typ, err))
	}
}

// outputOf decodes how a command ended. One that could not run has no
// exit status and its error as stderr; one that timed out has no exit
// status and a last stderr line saying so.
func outputOf(run agent.HookRun, event string, timeout time.Duration) Output {
	switch {
	case run.Err != nil:
		return ParseOutput(nil, "", run.Err.Error(), "")
	case run.TimedOut:
		note := "hook timed out after " + strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64) + " s"
		stderr := run.Stderr
		if jsrules.Trim(stderr) != "" {
			stderr = jsrules.Trim(stderr) + "\n" + note
		} else {
			stderr = note
		}
		return ParseOutput(nil, run.Stdout, stderr, event)
	case !run.Exited:
		return ParseOutput(nil, run.Stdout, run.Stderr, event)
	}
	code := run.ExitCode
	return ParseOutput(&code, run.Stdout, run.Stderr, event)
}
