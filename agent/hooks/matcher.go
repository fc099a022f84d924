package hooks

import (
	"regexp"
	"strings"
)

// matchAll reports the match-all sentinels: "" (or absent) and "*".
func matchAll(pattern string) bool { return pattern == "" || pattern == "*" }

// ccLiteral reports a Claude Code literal pattern: only [A-Za-z0-9_|].
func ccLiteral(pattern string) bool {
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '|') {
			return false
		}
	}
	return pattern != ""
}

// compileMatcher compiles pattern as dialect d reads it: nil for a
// match-all or Claude Code literal pattern, else the unanchored regexp.
func compileMatcher(d Dialect, pattern string) (*regexp.Regexp, error) {
	if matchAll(pattern) || d == ClaudeCode && ccLiteral(pattern) {
		return nil, nil
	}
	return regexp.Compile(pattern)
}

// Match reports whether pattern selects query (a tool name, a session
// source) in dialect d: "" and "*" match everything; in Claude Code a
// pattern of only letters, digits, '_' and '|' is a list of exact names
// separated by '|'; any other pattern (every Codex pattern) is an
// unanchored regexp. An invalid regexp matches nothing.
func Match(d Dialect, pattern, query string) bool {
	if matchAll(pattern) {
		return true
	}
	if d == ClaudeCode && ccLiteral(pattern) {
		for alt := range strings.SplitSeq(pattern, "|") {
			if alt == query {
				return true
			}
		}
		return false
	}
	re, err := regexp.Compile(pattern)
	return err == nil && re.MatchString(query)
}

// matches reports whether g selects query, using its compiled regexp when
// Parse made one.
func (g *Group) matches(d Dialect, query string) bool {
	if g.re != nil {
		return g.re.MatchString(query)
	}
	return Match(d, g.Matcher, query)
}
