package hooks

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reel-agent/reel/internal/jsrules"
)

// FuzzParseConfig: any bytes parse or fail with a *ConfigError that has a
// message; what parses keeps only runnable, matchable groups.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"exit 2","timeout":3}]}]}}`), false)
	f.Add([]byte(`{"Stop":[{"matcher":"[","hooks":[{"command":"s"}]}]}`), true)
	f.Fuzz(func(t *testing.T, raw []byte, codex bool) {
		d := ClaudeCode
		if codex {
			d = Codex
		}
		cfg, skipped, err := Parse(d, raw, Substitution{PluginRoot: "/p", ProjectDir: "/d"})
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || err.Error() == "" || strings.HasSuffix(err.Error(), ": ") {
				t.Fatalf("error %#v (%q)", err, err)
			}
			if !errors.Is(err, ErrNotJSON) && !errors.Is(err, ErrInvalidMatcher) {
				t.Fatalf("error %q matches no sentinel", err)
			}
			if cfg != nil || skipped != nil {
				t.Fatal("a config with an error")
			}
			return
		}
		for ev, groups := range cfg.Events {
			if len(groups) == 0 {
				t.Fatalf("event %s without groups", ev)
			}
			for _, g := range groups {
				if len(g.Hooks) == 0 {
					t.Fatalf("group without hooks on %s", ev)
				}
				if (ev == EventStop || ev == EventUserPromptSubmit) && g.Matcher != "" {
					t.Fatalf("matcher %q kept on %s", g.Matcher, ev)
				}
				if _, err := compileMatcher(d, g.Matcher); err != nil {
					t.Fatalf("invalid matcher %q kept", g.Matcher)
				}
				g.matches(d, "bash")
				for _, h := range g.Hooks {
					if h.Timeout < 0 {
						t.Fatalf("negative timeout %v", h.Timeout)
					}
				}
			}
		}
		for _, s := range skipped {
			if s.String() == "" {
				t.Fatal("empty skip warning")
			}
		}
	})
}

// FuzzParseOutput: any output decodes without panic into a consistent
// Output, and re-encoding an updatedInput reads back the same.
func FuzzParseOutput(f *testing.F) {
	f.Add(0, true, `{"decision":"block","reason":"r","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}`, "", "PreToolUse")
	f.Add(2, true, "", "denied", "Stop")
	f.Fuzz(func(t *testing.T, code int, exited bool, stdout, stderr, event string) {
		var exit *int
		if exited {
			exit = &code
		}
		out := ParseOutput(exit, stdout, stderr, event)
		switch out.Decision {
		case "", DecisionApprove, DecisionAllow, DecisionBlock, DecisionDeny, DecisionAsk:
		default:
			t.Fatalf("decision %q", out.Decision)
		}
		if out.Stdout != jsrules.Trim(out.Stdout) || out.Stderr != jsrules.Trim(out.Stderr) {
			t.Fatal("untrimmed stream")
		}
		if exited && code == 2 && (out.Decision != DecisionBlock || out.Reason != out.Stderr) {
			t.Fatalf("exit 2: %+v", out)
		}
		if (!exited || code != 0) && (out.Continue != nil || out.AdditionalContext != "" || out.UpdatedInput != nil) {
			t.Fatalf("JSON read without a clean exit: %+v", out)
		}
		if out.UpdatedInput != nil {
			v, err := jsrules.Parse(out.UpdatedInput)
			ok := err == nil
			if _, isObj := v.(*jsrules.Object); !ok || !isObj {
				t.Fatalf("updatedInput %q is not an object", out.UpdatedInput)
			}
			if again := jsrules.Append(nil, v); !bytes.Equal(again, out.UpdatedInput) {
				t.Fatalf("updatedInput round trip %q → %q", out.UpdatedInput, again)
			}
		}
		m := Merge([]Output{out, out})
		if m.Decision == "" {
			t.Fatal("empty merged decision")
		}
		if s := summarize(out.Stderr, 500); jsrules.UTF16Len(s) > 501 || !utf8.ValidString(s) && utf8.ValidString(out.Stderr) {
			t.Fatalf("summary of %d units", jsrules.UTF16Len(s))
		}
	})
}
