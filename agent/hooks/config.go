package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/reel-agent/reel/internal/jsrules"
	"github.com/reel-agent/reel/sessionlog"
)

// Dialect is the hook protocol a config file is written in.
type Dialect string

// The two dialects, spelt as the hook/invoked record writes them.
const (
	ClaudeCode Dialect = sessionlog.DialectClaudeCode
	Codex      Dialect = sessionlog.DialectCodex
)

// The hook events a config may configure. Claude Code knows all seven,
// Codex the first five; the bridge runs SubagentStart and SubagentStop
// nowhere yet (the engine has no such point).
const (
	EventSessionStart     = "SessionStart"
	EventUserPromptSubmit = "UserPromptSubmit"
	EventPreToolUse       = "PreToolUse"
	EventPostToolUse      = "PostToolUse"
	EventStop             = "Stop"
	EventSubagentStart    = "SubagentStart"
	EventSubagentStop     = "SubagentStop"
)

// events lists each dialect's supported events in the order the parser
// visits them (the order decides which invalid matcher is reported).
var events = map[Dialect][]string{
	ClaudeCode: {EventSessionStart, EventUserPromptSubmit, EventPreToolUse, EventPostToolUse,
		EventStop, EventSubagentStart, EventSubagentStop},
	Codex: {EventPreToolUse, EventPostToolUse, EventSessionStart, EventUserPromptSubmit, EventStop},
}

// plugin is the plugin name of the context a dialect's bridge adds.
func (d Dialect) plugin() string {
	if d == Codex {
		return "hooks-codex"
	}
	return "hooks-claude-code"
}

// Config is a parsed hook config: per event, its matcher groups in file
// order, each holding only runnable command hooks. Events without a
// runnable group are absent.
type Config struct {
	Dialect Dialect
	Events  map[string][]Group
}

// Group is one matcher group: Matcher selects the event's subject (the
// tool name, the session source); "" and "*" match everything.
type Group struct {
	Matcher string
	Hooks   []Command
	re      *regexp.Regexp // compiled by Parse; nil for a literal or match-all
}

// Command is one command hook: a bash script and its own time limit (0:
// the bridge's default).
type Command struct {
	Command string
	Timeout time.Duration
}

// Skipped is a hook the parser did not keep: a hook of another type than
// command (CC "prompt", "agent", "http", …) or a Codex async command.
type Skipped struct {
	Dialect Dialect
	Event   string
	Type    string // the hook's type ("command" for an async one)
	Async   bool
}

// String is the warning the caller shows for s.
func (s Skipped) String() string {
	if s.Dialect == Codex {
		what := fmt.Sprintf("unsupported %q hook", s.Type)
		if s.Async {
			what = "async hook"
		}
		return fmt.Sprintf("hooks-codex: skipping %s on %s (only sync command hooks run)", what, s.Event)
	}
	return fmt.Sprintf("hooks-claude-code: skipping unsupported %q hook on %s (only command hooks run)", s.Type, s.Event)
}

// Substitution holds the values of the Claude Code command placeholders,
// replaced at parse time; a placeholder whose value is "" stays verbatim.
// Codex has no placeholders.
type Substitution struct {
	PluginRoot string // ${CLAUDE_PLUGIN_ROOT}
	ProjectDir string // ${CLAUDE_PROJECT_DIR}
}

func (v Substitution) apply(cmd string) string {
	if v.PluginRoot != "" {
		cmd = strings.ReplaceAll(cmd, "${CLAUDE_PLUGIN_ROOT}", v.PluginRoot)
	}
	if v.ProjectDir != "" {
		cmd = strings.ReplaceAll(cmd, "${CLAUDE_PROJECT_DIR}", v.ProjectDir)
	}
	return cmd
}

// Parse parses a hook config of dialect d: a settings file whose "hooks"
// member is the event map, or the bare event map. Unknown events and
// malformed entries (a group without a hooks array, a hook without a
// string command) are ignored; hooks of another type than command, and
// Codex async hooks, are returned as skipped. A runnable group whose
// matcher is not a valid regexp makes the whole config an error (a
// *ConfigError wrapping a *MatcherError), as does raw that is not JSON (a
// *ConfigError matching ErrNotJSON). vars applies to Claude Code only.
func Parse(d Dialect, raw []byte, vars Substitution) (*Config, []Skipped, error) {
	list, ok := events[d]
	if !ok {
		return nil, nil, fmt.Errorf("hooks: unknown dialect %q", d)
	}
	root, err := decodeJSON(raw)
	if err != nil {
		return nil, nil, err
	}
	if d == Codex {
		vars = Substitution{}
	}
	cfg := &Config{Dialect: d, Events: map[string][]Group{}}
	var skipped []Skipped
	m, _ := root.(*jsrules.Object)
	if m == nil {
		return cfg, nil, nil
	}
	if inner, ok := m.Get("hooks").(*jsrules.Object); ok {
		m = inner
	}
	for _, event := range list {
		rawGroups, ok := m.Get(event).([]any)
		if !ok {
			continue
		}
		var groups []Group
		for _, rg := range rawGroups {
			g, ok := rg.(*jsrules.Object)
			if !ok {
				continue
			}
			rawHooks, ok := g.Get("hooks").([]any)
			if !ok {
				continue
			}
			var cmds []Command
			for _, rh := range rawHooks {
				h, ok := rh.(*jsrules.Object)
				if !ok {
					continue
				}
				typ := "command"
				if t, ok := h.Get("type").(string); ok {
					typ = t
				}
				if typ != "command" {
					skipped = append(skipped, Skipped{Dialect: d, Event: event, Type: typ})
					continue
				}
				if a, ok := h.Get("async").(bool); d == Codex && ok && a {
					skipped = append(skipped, Skipped{Dialect: d, Event: event, Type: typ, Async: true})
					continue
				}
				script, ok := h.Get("command").(string)
				if !ok {
					continue
				}
				cmds = append(cmds, Command{Command: vars.apply(script), Timeout: timeoutOf(d, h)})
			}
			if len(cmds) == 0 {
				continue
			}
			group := Group{Hooks: cmds}
			if event != EventUserPromptSubmit && event != EventStop {
				group.Matcher, _ = g.Get("matcher").(string)
			}
			re, err := compileMatcher(d, group.Matcher)
			if err != nil {
				return nil, nil, &ConfigError{Err: &MatcherError{Dialect: d, Event: event, Pattern: group.Matcher, Err: err}}
			}
			group.re = re
			groups = append(groups, group)
		}
		if len(groups) > 0 {
			cfg.Events[event] = groups
		}
	}
	return cfg, skipped, nil
}

// timeoutOf is a hook's own time limit: "timeout" in seconds (Codex also
// "timeoutSec"); 0 when absent, not a number, not positive or NaN.
func timeoutOf(d Dialect, h *jsrules.Object) time.Duration {
	n, ok := h.Get("timeout").(jsrules.Number)
	if !ok && d == Codex {
		n, ok = h.Get("timeoutSec").(jsrules.Number)
	}
	if !ok {
		return 0
	}
	sec := float64(n)
	switch {
	case !(sec > 0):
		return 0
	case sec*float64(time.Second) >= math.MaxInt64:
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(sec * float64(time.Second))
}

// decodeJSON parses raw as JSON.parse would (jsrules.Parse); malformed
// JSON is a *ConfigError naming its line.
func decodeJSON(raw []byte) (any, error) {
	v, err := jsrules.Parse(raw)
	if err != nil {
		ce := &ConfigError{Err: err}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			ce.Line = 1 + bytes.Count(raw[:min(int(se.Offset), len(raw))], []byte{'\n'})
		}
		return nil, ce
	}
	return v, nil
}
