package tools

import (
	"errors"
	"path"
	"strings"
)

// maxBraceExpansions bounds how many patterns one glob's braces expand to.
const maxBraceExpansions = 1024

// errBadGlob reports a malformed glob pattern.
var errBadGlob = errors.New("malformed glob pattern")

// globPattern is a compiled glob: each alternative of its braces, split into
// slash-separated segments. A "**" segment matches any number of path
// segments, including none; other segments follow path.Match.
type globPattern [][]string

// compileGlob expands braces ({a,b}, nestable) and checks every segment.
func compileGlob(pattern string) (globPattern, error) {
	alts, err := expandBraces(pattern, 0)
	if err != nil {
		return nil, err
	}
	g := make(globPattern, 0, len(alts))
	for _, alt := range alts {
		alt = strings.TrimPrefix(alt, "./")
		var segs []string
		for _, s := range strings.Split(alt, "/") {
			if s == "" || s == "." {
				continue
			}
			if s == "**" {
				if len(segs) > 0 && segs[len(segs)-1] == "**" {
					continue // a/**/**/b is a/**/b
				}
			} else if _, err := path.Match(s, ""); err != nil {
				return nil, errBadGlob
			}
			segs = append(segs, s)
		}
		g = append(g, segs)
	}
	return g, nil
}

// match reports whether the slash-separated relative path rel matches.
func (g globPattern) match(rel string) bool {
	segs := strings.Split(rel, "/")
	for _, p := range g {
		if matchSegments(p, segs) {
			return true
		}
	}
	return false
}

// mayContain reports whether some path below the directory rel could match,
// so a walk can skip directories that cannot.
func (g globPattern) mayContain(rel string) bool {
	segs := strings.Split(rel, "/")
	for _, p := range g {
		if prefixMatches(p, segs) {
			return true
		}
	}
	return false
}

// matchSegments matches path segments against pattern segments.
func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(segs); i++ {
				if matchSegments(rest, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// prefixMatches reports whether dir (segments) can be extended by at least
// one more segment into a path that matches pat.
func prefixMatches(pat, dir []string) bool {
	for len(dir) > 0 {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[0], dir[0]); !ok {
			return false
		}
		pat, dir = pat[1:], dir[1:]
	}
	return len(pat) > 0
}

// expandBraces expands the first top-level {a,b,…} group of s, recursively.
// An unmatched brace is literal. A backslash escapes the next character.
func expandBraces(s string, depth int) ([]string, error) {
	if depth > 16 {
		return nil, errBadGlob
	}
	lbrace, rbrace := -1, -1
	var commas []int
	level := 0
scan:
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			if level == 0 {
				lbrace = i
				commas = commas[:0]
			}
			level++
		case ',':
			if level == 1 {
				commas = append(commas, i)
			}
		case '}':
			if level == 0 {
				continue
			}
			level--
			if level == 0 {
				rbrace = i
				break scan
			}
		}
	}
	if lbrace < 0 || rbrace < 0 {
		return []string{s}, nil
	}
	prefix, suffix := s[:lbrace], s[rbrace+1:]
	var parts []string
	start := lbrace + 1
	for _, c := range commas {
		parts = append(parts, s[start:c])
		start = c + 1
	}
	parts = append(parts, s[start:rbrace])
	var out []string
	for _, part := range parts {
		alts, err := expandBraces(prefix+part+suffix, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, alts...)
		if len(out) > maxBraceExpansions {
			return nil, errBadGlob
		}
	}
	return out, nil
}
