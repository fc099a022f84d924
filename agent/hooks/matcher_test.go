package hooks

import "testing"

func TestMatch(t *testing.T) {
	tests := []struct {
		d              Dialect
		pattern, query string
		want           bool
	}{
		{ClaudeCode, "", "bash", true},
		{ClaudeCode, "*", "anything", true},
		{Codex, "*", "", true},
		{ClaudeCode, "bash", "bash", true},
		{ClaudeCode, "bash", "bash_output", false}, // literal: exact
		{ClaudeCode, "Bash", "bash", false},
		{ClaudeCode, "read|write|edit", "write", true},
		{ClaudeCode, "read|write|edit", "rea", false},
		{ClaudeCode, "a||b", "", true}, // an empty alternative matches ""
		{ClaudeCode, "mcp__.*", "mcp__fs__read", true},
		{ClaudeCode, "^(read|grep)$", "grep", true},
		{ClaudeCode, "wri.e", "overwrite!", true}, // regexp: unanchored
		{ClaudeCode, "[", "[", false},             // invalid: no match
		{Codex, "bash", "my_bash_tool", true},     // Codex: always a regexp
		{Codex, "bash", "Bash", false},
		{Codex, "^bash$", "bash", true},
		{Codex, "read|write", "overwrite", true},
		{Codex, "(", "(", false},
		{Codex, "^startup$", "resume", false},
	}
	for _, tt := range tests {
		if got := Match(tt.d, tt.pattern, tt.query); got != tt.want {
			t.Errorf("Match(%s, %q, %q) = %v, want %v", tt.d, tt.pattern, tt.query, got, tt.want)
		}
		// A parsed group decides the same.
		re, err := compileMatcher(tt.d, tt.pattern)
		if err != nil {
			continue
		}
		g := Group{Matcher: tt.pattern, re: re}
		if got := g.matches(tt.d, tt.query); got != tt.want {
			t.Errorf("group %s %q matches %q = %v, want %v", tt.d, tt.pattern, tt.query, got, tt.want)
		}
	}
}
