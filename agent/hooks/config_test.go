package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// groups is a readable form of a Config: event → "matcher: cmd@timeout; …".
func groups(c *Config) map[string][]string {
	m := map[string][]string{}
	for ev, gs := range c.Events {
		for _, g := range gs {
			var cmds []string
			for _, h := range g.Hooks {
				cmds = append(cmds, h.Command+"@"+h.Timeout.String())
			}
			m[ev] = append(m[ev], g.Matcher+": "+strings.Join(cmds, "; "))
		}
	}
	return m
}

func TestParseFiles(t *testing.T) {
	tests := []struct {
		file    string
		dialect Dialect
		vars    Substitution
		want    map[string][]string
		skipped []string
	}{{
		file: "claude-settings.json", dialect: ClaudeCode,
		vars: Substitution{PluginRoot: "/plug", ProjectDir: "/proj"},
		want: map[string][]string{
			EventSessionStart:     {"startup|resume: cat /plug/context.md@0s"},
			EventUserPromptSubmit: {": echo prompt@5s"},
			EventPreToolUse:       {"bash: /proj/check.sh@1.5s"},
			EventPostToolUse:      {"write|edit: fmt.sh@0s"},
			EventStop:             {": stop.sh@0s"},
			EventSubagentStop:     {": sub.sh@0s"},
		},
		skipped: []string{
			`hooks-claude-code: skipping unsupported "prompt" hook on PreToolUse (only command hooks run)`,
			`hooks-claude-code: skipping unsupported "http" hook on PreToolUse (only command hooks run)`,
		},
	}, {
		file: "claude-settings.json", dialect: ClaudeCode,
		want: map[string][]string{
			EventSessionStart:     {"startup|resume: cat ${CLAUDE_PLUGIN_ROOT}/context.md@0s"},
			EventUserPromptSubmit: {": echo prompt@5s"},
			EventPreToolUse:       {"bash: ${CLAUDE_PROJECT_DIR}/check.sh@1.5s"},
			EventPostToolUse:      {"write|edit: fmt.sh@0s"},
			EventStop:             {": stop.sh@0s"},
			EventSubagentStop:     {": sub.sh@0s"},
		},
		skipped: []string{
			`hooks-claude-code: skipping unsupported "prompt" hook on PreToolUse (only command hooks run)`,
			`hooks-claude-code: skipping unsupported "http" hook on PreToolUse (only command hooks run)`,
		},
	}, {
		file: "codex-hooks.json", dialect: Codex, vars: Substitution{PluginRoot: "/plug"},
		want: map[string][]string{
			EventSessionStart: {"^startup$: echo hello ${CLAUDE_PLUGIN_ROOT}@3s"},
			EventPreToolUse:   {"bash: guard.sh@2s"},
			EventStop:         {": stop.sh@0s"},
		},
		skipped: []string{
			`hooks-codex: skipping async hook on PreToolUse (only sync command hooks run)`,
			`hooks-codex: skipping unsupported "prompt" hook on PreToolUse (only sync command hooks run)`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.file+"/"+string(tt.dialect), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			cfg, skipped, err := Parse(tt.dialect, raw, tt.vars)
			if err != nil {
				t.Fatal(err)
			}
			if got := groups(cfg); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("groups:\n got %q\nwant %q", got, tt.want)
			}
			var sk []string
			for _, s := range skipped {
				sk = append(sk, s.String())
			}
			if !reflect.DeepEqual(sk, tt.skipped) {
				t.Errorf("skipped:\n got %q\nwant %q", sk, tt.skipped)
			}
		})
	}
}

func TestParseCases(t *testing.T) {
	tests := []struct {
		name    string
		dialect Dialect
		raw     string
		want    map[string][]string
		err     string // the error's message; "" for none
		is      error
	}{
		{"bare map", ClaudeCode, `{"Stop":[{"hooks":[{"command":"s"}]}]}`,
			map[string][]string{EventStop: {": s@0s"}}, "", nil},
		{"hooks not an object: the root is the map", ClaudeCode,
			`{"hooks":[1],"PreToolUse":[{"matcher":"x","hooks":[{"command":"p"}]}]}`,
			map[string][]string{EventPreToolUse: {"x: p@0s"}}, "", nil},
		{"hooks null", Codex, `{"hooks":null}`, map[string][]string{}, "", nil},
		{"root an array", ClaudeCode, `[{"Stop":[]}]`, map[string][]string{}, "", nil},
		{"root a string", Codex, `"hooks"`, map[string][]string{}, "", nil},
		{"event not a list", ClaudeCode, `{"Stop":{"hooks":[]}}`, map[string][]string{}, "", nil},
		{"matcher not a string is match-all", ClaudeCode,
			`{"PreToolUse":[{"matcher":7,"hooks":[{"command":"p"}]}]}`,
			map[string][]string{EventPreToolUse: {": p@0s"}}, "", nil},
		{"matcher dropped on UserPromptSubmit", Codex,
			`{"UserPromptSubmit":[{"matcher":"(","hooks":[{"command":"u"}]}]}`,
			map[string][]string{EventUserPromptSubmit: {": u@0s"}}, "", nil},
		{"invalid matcher of a group without runnable hooks is fine", ClaudeCode,
			`{"PreToolUse":[{"matcher":"[","hooks":[{"type":"prompt"}]}]}`,
			map[string][]string{}, "", nil},
		{"codex subagent events unknown", Codex,
			`{"SubagentStop":[{"hooks":[{"command":"s"}]}]}`, map[string][]string{}, "", nil},
		{"negative and NaN-ish timeouts are the default", ClaudeCode,
			`{"Stop":[{"hooks":[{"command":"a","timeout":-1},{"command":"b","timeout":0},{"command":"c","timeout":1e400}]}]}`,
			map[string][]string{EventStop: {": a@0s; b@0s; c@2562047h47m16.854775807s"}}, "", nil},
		{"cc timeoutSec is not read", ClaudeCode,
			`{"Stop":[{"hooks":[{"command":"a","timeoutSec":4}]}]}`,
			map[string][]string{EventStop: {": a@0s"}}, "", nil},
		{"cc async runs", ClaudeCode,
			`{"Stop":[{"hooks":[{"command":"a","async":true}]}]}`,
			map[string][]string{EventStop: {": a@0s"}}, "", nil},
		{"duplicate key: last wins", ClaudeCode,
			`{"Stop":[{"hooks":[{"command":"a"}]}],"Stop":[{"hooks":[{"command":"b"}]}]}`,
			map[string][]string{EventStop: {": b@0s"}}, "", nil},
		{"cc literal is not a regexp", ClaudeCode,
			`{"PreToolUse":[{"matcher":"a|b_c","hooks":[{"command":"p"}]}]}`,
			map[string][]string{EventPreToolUse: {"a|b_c: p@0s"}}, "", nil},

		{"not JSON", ClaudeCode, "{\n\"Stop\": [,]}", nil,
			"hooks: line 2: config is not JSON: invalid character ',' looking for beginning of value", ErrNotJSON},
		{"empty", Codex, "", nil, "hooks: line 1: config is not JSON: unexpected end of JSON input", ErrNotJSON},
		{"trailing data", Codex, `{} {}`, nil,
			"hooks: line 1: config is not JSON: invalid character '{' after top-level value", ErrNotJSON},
		{"invalid cc regex", ClaudeCode, `{"PreToolUse":[{"matcher":"[","hooks":[{"command":"p"}]}]}`, nil,
			`hooks: invalid claude-code regex matcher "[" on event "PreToolUse" (missing closing ])`, ErrInvalidMatcher},
		{"invalid codex regex", Codex, `{"PostToolUse":[{"matcher":"a(","hooks":[{"command":"p"}]}]}`, nil,
			`hooks: invalid codex regex matcher "a(" on event "PostToolUse" (missing closing ))`, ErrInvalidMatcher},
		{"codex literal-looking pattern is still checked, and fine", Codex,
			`{"PreToolUse":[{"matcher":"Bash|Write","hooks":[{"command":"p"}]}]}`,
			map[string][]string{EventPreToolUse: {"Bash|Write: p@0s"}}, "", nil},
		{"lookahead is refused (RE2)", ClaudeCode,
			`{"PreToolUse":[{"matcher":"^(?!read)","hooks":[{"command":"p"}]}]}`, nil,
			`hooks: invalid claude-code regex matcher "^(?!read)" on event "PreToolUse" (invalid or unsupported Perl syntax)`, ErrInvalidMatcher},
		{"invalid matcher anywhere voids everything", Codex,
			`{"PreToolUse":[{"hooks":[{"command":"ok"}]}],"SessionStart":[{"matcher":"*(","hooks":[{"command":"p"}]}]}`, nil,
			`hooks: invalid codex regex matcher "*(" on event "SessionStart" (missing argument to repetition operator)`, ErrInvalidMatcher},
		{"unknown dialect", Dialect("gemini"), `{}`, nil, `hooks: unknown dialect "gemini"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Parse(tt.dialect, []byte(tt.raw), Substitution{})
			if tt.err != "" {
				if err == nil {
					t.Fatalf("no error, config %q", groups(cfg))
				}
				if err.Error() != tt.err {
					t.Errorf("error %q, want %q", err, tt.err)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("error %v is not %v", err, tt.is)
				}
				if cfg != nil {
					t.Errorf("config %q with an error", groups(cfg))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := groups(cfg); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("ok", func(t *testing.T) {
		p := write("ok.json", `{"hooks":{"Stop":[{"hooks":[{"type":"agent"},{"command":"${CLAUDE_PLUGIN_ROOT}/s"}]}]}}`)
		b, warns, err := Load(p, ClaudeCode, Options{PluginRoot: "/r"})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{`hooks-claude-code: skipping unsupported "agent" hook on Stop (only command hooks run)`}; !reflect.DeepEqual(warns, want) {
			t.Errorf("warnings %q, want %q", warns, want)
		}
		if got := b.cfg.Events[EventStop][0].Hooks[0].Command; got != "/r/s" {
			t.Errorf("command %q", got)
		}
		if b.opt.DefaultTimeout != 600*time.Second || b.opt.SummaryLimit != 500 {
			t.Errorf("defaults %+v", b.opt)
		}
	})
	t.Run("not JSON names the file", func(t *testing.T) {
		p := write("bad.json", "{\n\n  oops\n}")
		_, _, err := Load(p, Codex, Options{})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.File != p || ce.Line != 3 || !errors.Is(err, ErrNotJSON) {
			t.Fatalf("error %#v", err)
		}
		if want := "hooks: " + p + ":3: config is not JSON: invalid character 'o' looking for beginning of object key string"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	})
	t.Run("invalid matcher names the file", func(t *testing.T) {
		p := write("m.json", `{"PreToolUse":[{"matcher":"[","hooks":[{"command":"p"}]}]}`)
		_, _, err := Load(p, ClaudeCode, Options{})
		var me *MatcherError
		if !errors.As(err, &me) || me.Pattern != "[" || me.Event != EventPreToolUse {
			t.Fatalf("error %#v", err)
		}
		if want := "hooks: " + p + `: invalid claude-code regex matcher "[" on event "PreToolUse" (missing closing ])`; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, _, err := Load(filepath.Join(dir, "none.json"), ClaudeCode, Options{})
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("error %v", err)
		}
	})
}
