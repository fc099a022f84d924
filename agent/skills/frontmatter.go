package skills

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The one parser of the SKILL.md format: a "---" header holding a YAML
// mapping, then the Markdown body. The subset of YAML it accepts is given
// in the package documentation (section Format); everything outside it is
// a *FrontmatterError naming the line, never a guess.

// FrontmatterError is a SKILL.md file whose header cannot be used: the
// reason the skill was skipped. Line is 1-based in the file; 0 means the
// file as a whole.
type FrontmatterError struct {
	Line int
	Msg  string
}

// Error implements error.
func (e *FrontmatterError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

func syntaxErr(line int, format string, args ...any) error {
	return &FrontmatterError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// valueKind is the YAML type a header value resolved to.
type valueKind uint8

const (
	kindNull valueKind = iota
	kindBool
	kindNumber
	kindString
	kindMap
	kindSeq
)

func (k valueKind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindMap:
		return "a mapping"
	}
	return "a list"
}

// value is one top-level header value. Nested mappings and lists are kept
// opaque: no key reel reads holds one.
type value struct {
	kind valueKind
	str  string  // kindString
	b    bool    // kindBool
	num  float64 // kindNumber
	line int     // the line of its key
}

// header is a parsed SKILL.md file.
type header struct {
	keys []string // in file order
	vals map[string]value
	body string // everything after the closing "---" line
}

// srcLine is one line of the header with its 1-based line number in the
// file, a trailing "\r" removed.
type srcLine struct {
	n    int
	text string
}

// parseHeader splits raw into its header and body and parses the header.
func parseHeader(raw string) (header, error) {
	raw = strings.TrimPrefix(raw, "\uFEFF")
	if !utf8.ValidString(raw) {
		raw = strings.ToValidUTF8(raw, "\uFFFD")
	}
	first, rest, ok := strings.Cut(raw, "\n")
	if !ok || strings.TrimSuffix(first, "\r") != "---" {
		return header{}, syntaxErr(1, `missing frontmatter: the file must begin with a line "---"`)
	}
	var lines []srcLine
	n := 1
	closed := false
	for {
		n++
		line, more, found := strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "---" {
			closed = true
			if found {
				rest = more
			} else {
				rest = ""
			}
			break
		}
		if !found {
			break
		}
		lines = append(lines, srcLine{n: n, text: line})
		rest = more
	}
	if !closed {
		return header{}, syntaxErr(1, `frontmatter is not closed: no line "---" follows the opening one`)
	}
	p := &parser{lines: lines}
	h, err := p.mapping()
	if err != nil {
		return header{}, err
	}
	if len(h.keys) == 0 {
		return header{}, syntaxErr(1, "frontmatter is empty: it must be a mapping with name and description")
	}
	h.body = rest
	return h, nil
}

type parser struct {
	lines []srcLine
	i     int
}

// blankOrComment reports a line holding only white space or a comment.
func blankOrComment(s string) bool {
	t := strings.TrimLeft(s, " \t")
	return t == "" || t[0] == '#'
}

func isBlank(s string) bool { return strings.TrimLeft(s, " \t") == "" }

// indentOf is the number of leading spaces.
func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// mapping parses the top-level block mapping.
func (p *parser) mapping() (header, error) {
	h := header{vals: map[string]value{}}
	for p.i < len(p.lines) {
		ln := p.lines[p.i]
		s := ln.text
		if blankOrComment(s) {
			p.i++
			continue
		}
		switch {
		case s[0] == ' ':
			return h, syntaxErr(ln.n, "unexpected indentation: a top-level key must start in the first column")
		case s[0] == '\t':
			return h, syntaxErr(ln.n, "a tab cannot indent YAML; use spaces")
		case s == "-" || strings.HasPrefix(s, "- "):
			return h, syntaxErr(ln.n, "frontmatter must be a mapping of keys to values, not a list")
		case s == "..." || strings.HasPrefix(s, "... "):
			return h, syntaxErr(ln.n, `unsupported YAML: document end marker "..."`)
		}
		key, rest, err := splitKey(ln)
		if err != nil {
			return h, err
		}
		if prev, dup := h.vals[key]; dup {
			return h, syntaxErr(ln.n, "duplicate key %q (first on line %d)", key, prev.line)
		}
		p.i++
		v, err := p.value(ln.n, rest)
		if err != nil {
			return h, err
		}
		v.line = ln.n
		h.keys = append(h.keys, key)
		h.vals[key] = v
	}
	return h, nil
}

// splitKey splits a top-level line into its key and the text after the
// key's ":".
func splitKey(ln srcLine) (string, string, error) {
	s := ln.text
	switch s[0] {
	case '"', '\'':
		q, end, err := quotedOnLine(ln, s)
		if err != nil {
			return "", "", err
		}
		after := strings.TrimLeft(s[end:], " \t")
		if !strings.HasPrefix(after, ":") || (len(after) > 1 && after[1] != ' ' && after[1] != '\t') {
			return "", "", syntaxErr(ln.n, `expected ":" after the quoted key`)
		}
		return q, after[1:], nil
	case '?':
		return "", "", syntaxErr(ln.n, "unsupported YAML: complex key")
	case '[', '{', '&', '*', '!', '|', '>', '%', '@', '`', ',', '#':
		return "", "", syntaxErr(ln.n, "unsupported YAML: a key cannot begin with %q", s[0])
	}
	for j := 0; j < len(s); j++ {
		if s[j] == ':' && (j+1 == len(s) || s[j+1] == ' ' || s[j+1] == '\t') {
			key := strings.TrimRight(s[:j], " \t")
			return key, s[j+1:], nil
		}
		if s[j] == '#' && j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			break
		}
	}
	return "", "", syntaxErr(ln.n, `expected "key: value"`)
}

// quotedOnLine reads a quoted scalar that must end on its line (a key);
// end is the index just past the closing quote.
func quotedOnLine(ln srcLine, s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for j := 1; j < len(s); j++ {
		c := s[j]
		switch {
		case q == '\'' && c == '\'':
			if j+1 < len(s) && s[j+1] == '\'' {
				b.WriteByte('\'')
				j++
				continue
			}
			return b.String(), j + 1, nil
		case q == '"' && c == '"':
			return b.String(), j + 1, nil
		case q == '"' && c == '\\':
			if j+1 >= len(s) {
				return "", 0, syntaxErr(ln.n, "unterminated quoted key")
			}
			r, w, err := escape(s[j+1:])
			if err != nil {
				return "", 0, syntaxErr(ln.n, "%v", err)
			}
			b.WriteString(r)
			j += w
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, syntaxErr(ln.n, "unterminated quoted key")
}

// value parses the value of the key on line n; rest is the text after
// the key's ":".
func (p *parser) value(n int, rest string) (value, error) {
	t := strings.TrimLeft(rest, " \t")
	if t == "" || t[0] == '#' {
		return p.nested(n)
	}
	switch t[0] {
	case '"', '\'':
		s, err := p.quoted(n, t)
		return value{kind: kindString, str: s}, err
	case '|', '>':
		s, err := p.block(n, t)
		return value{kind: kindString, str: s}, err
	case '[', '{':
		kind := kindSeq
		if t[0] == '{' {
			kind = kindMap
		}
		return value{kind: kind}, p.flow(n, t)
	case '&':
		return value{}, syntaxErr(n, "unsupported YAML: anchor")
	case '*':
		return value{}, syntaxErr(n, "unsupported YAML: alias")
	case '!':
		return value{}, syntaxErr(n, "unsupported YAML: tag")
	case '%', '@', '`':
		return value{}, syntaxErr(n, "a plain value cannot begin with %q; quote the value", t[0])
	case '-':
		if len(t) == 1 || t[1] == ' ' || t[1] == '\t' {
			return value{}, syntaxErr(n, "a list cannot start on the line of its key")
		}
	case '?', ':':
		if len(t) == 1 || t[1] == ' ' || t[1] == '\t' {
			return value{}, syntaxErr(n, "a plain value cannot begin with %q; quote the value", t[0])
		}
	}
	s, err := p.plain(n, t)
	if err != nil {
		return value{}, err
	}
	return resolvePlain(s), nil
}

// nested parses what follows a key with nothing after it: an indented
// mapping or list (or a list at the key's own indentation), an indented
// plain scalar, or nothing (null).
func (p *parser) nested(n int) (value, error) {
	j := p.i
	for j < len(p.lines) && blankOrComment(p.lines[j].text) {
		j++
	}
	if j == len(p.lines) {
		return value{kind: kindNull}, nil
	}
	s := p.lines[j].text
	if s[0] == '\t' {
		return value{}, syntaxErr(p.lines[j].n, "a tab cannot indent YAML; use spaces")
	}
	if s == "-" || strings.HasPrefix(s, "- ") {
		// A list at the key's indentation, and its indented continuations.
		for j < len(p.lines) {
			t := p.lines[j].text
			if !blankOrComment(t) && t[0] != ' ' && t != "-" && !strings.HasPrefix(t, "- ") {
				break
			}
			j++
		}
		p.i = j
		return value{kind: kindSeq}, nil
	}
	if s[0] != ' ' {
		return value{kind: kindNull}, nil
	}
	t := strings.TrimLeft(s, " ")
	if t == "-" || strings.HasPrefix(t, "- ") || looksLikeKey(t) {
		kind := kindMap
		if t == "-" || strings.HasPrefix(t, "- ") {
			kind = kindSeq
		}
		for j < len(p.lines) {
			t := p.lines[j].text
			if !isBlank(t) && t[0] != ' ' {
				if t[0] == '\t' {
					return value{}, syntaxErr(p.lines[j].n, "a tab cannot indent YAML; use spaces")
				}
				if t[0] != '#' {
					break
				}
			}
			j++
		}
		p.i = j
		return value{kind: kind}, nil
	}
	// An indented scalar on the following lines.
	p.i = j + 1
	return p.valueOn(p.lines[j], t)
}

// valueOn parses a scalar that starts on its own (indented) line.
func (p *parser) valueOn(ln srcLine, t string) (value, error) {
	switch t[0] {
	case '"', '\'':
		s, err := p.quoted(ln.n, t)
		return value{kind: kindString, str: s}, err
	case '[', '{':
		kind := kindSeq
		if t[0] == '{' {
			kind = kindMap
		}
		return value{kind: kind}, p.flow(ln.n, t)
	case '|', '>', '&', '*', '!', '%', '@', '`':
		return value{}, syntaxErr(ln.n, "unsupported YAML: %q at the start of an indented value", t[0])
	}
	s, err := p.plain(ln.n, t)
	if err != nil {
		return value{}, err
	}
	return resolvePlain(s), nil
}

// looksLikeKey reports whether an indented line starts a mapping entry.
func looksLikeKey(t string) bool {
	if t == "" {
		return false
	}
	if t[0] == '"' || t[0] == '\'' {
		// A quoted key followed by ":".
		q := t[0]
		for j := 1; j < len(t); j++ {
			if t[j] == '\\' && q == '"' {
				j++
				continue
			}
			if t[j] == q {
				if q == '\'' && j+1 < len(t) && t[j+1] == '\'' {
					j++
					continue
				}
				after := strings.TrimLeft(t[j+1:], " \t")
				return strings.HasPrefix(after, ":")
			}
		}
		return false
	}
	return colonSpace(t) >= 0
}

// colonSpace returns the index of the first ": " (or a final ":") of a
// plain scalar, before any comment; -1 when there is none.
func colonSpace(t string) int {
	for j := 0; j < len(t); j++ {
		switch t[j] {
		case ':':
			if j+1 == len(t) || t[j+1] == ' ' || t[j+1] == '\t' {
				return j
			}
		case '#':
			if j == 0 || t[j-1] == ' ' || t[j-1] == '\t' {
				return -1
			}
		}
	}
	return -1
}

// stripComment cuts a plain scalar's line at " #"; cut reports a comment.
func stripComment(t string) (s string, cut bool) {
	for j := 0; j < len(t); j++ {
		if t[j] == '#' && (j == 0 || t[j-1] == ' ' || t[j-1] == '\t') {
			return strings.TrimRight(t[:j], " \t"), true
		}
	}
	return strings.TrimRight(t, " \t"), false
}

// plain parses a plain scalar beginning with first (on line n) and its
// continuation lines: indented lines, folded with single spaces, empty
// lines kept as line breaks.
func (p *parser) plain(n int, first string) (string, error) {
	s, cut := stripComment(first)
	if colonSpace(s) >= 0 {
		return "", syntaxErr(n, `a plain value cannot contain ": "; quote the value`)
	}
	var b strings.Builder
	b.WriteString(s)
	if cut {
		return b.String(), p.noContinuation()
	}
	breaks := 0
	for p.i < len(p.lines) {
		ln := p.lines[p.i]
		t := ln.text
		if isBlank(t) {
			breaks++
			p.i++
			continue
		}
		if t[0] != ' ' && t[0] != '\t' {
			break
		}
		if t[0] == '\t' {
			return "", syntaxErr(ln.n, "a tab cannot indent YAML; use spaces")
		}
		t = strings.TrimLeft(t, " \t")
		if t[0] == '#' {
			p.i++
			return b.String(), p.noContinuation()
		}
		seg, cut := stripComment(t)
		if colonSpace(seg) >= 0 {
			return "", syntaxErr(ln.n, `a plain value cannot contain ": "; quote the value`)
		}
		if breaks == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString(strings.Repeat("\n", breaks))
		}
		breaks = 0
		b.WriteString(seg)
		p.i++
		if cut {
			return b.String(), p.noContinuation()
		}
	}
	// Blank lines that ended the scalar belong to nobody.
	return b.String(), nil
}

// noContinuation refuses indented text after a value that a comment ended.
func (p *parser) noContinuation() error {
	for p.i < len(p.lines) {
		t := p.lines[p.i].text
		if blankOrComment(t) {
			p.i++
			continue
		}
		if t[0] == ' ' || t[0] == '\t' {
			return syntaxErr(p.lines[p.i].n, "unexpected indented text after a comment")
		}
		break
	}
	return nil
}

// quoted parses a single- or double-quoted scalar beginning with first
// (on line n), which may continue over the following lines: a line break
// folds to a space, each empty line is a line break, white space around a
// break goes, and in double quotes a backslash at the end of a line joins
// the lines without a space.
func (p *parser) quoted(n int, first string) (string, error) {
	q := first[0]
	var buf []byte
	line, lineNo := first[1:], n
	const (
		inLine  = -1 // scanning a line
		escaped = -2 // after an escaped line break
	)
	breaks := inLine // else: line breaks being folded
	for {
		if breaks >= 0 {
			line = strings.TrimLeft(line, " \t")
		}
		if breaks == escaped {
			line = strings.TrimLeft(line, " \t")
			breaks = inLine
		}
		if breaks >= 0 && line == "" {
			breaks++ // an empty line inside the scalar
		} else {
			if breaks == 0 {
				buf = append(buf, ' ')
			}
			for ; breaks > 0; breaks-- {
				buf = append(buf, '\n')
			}
			breaks = inLine
			for j := 0; j < len(line); j++ {
				c := line[j]
				switch {
				case c == q && q == '\'' && j+1 < len(line) && line[j+1] == '\'':
					buf = append(buf, '\'')
					j++
				case c == q:
					return string(buf), p.afterQuoted(lineNo, line[j+1:])
				case c == '\\' && q == '"' && j+1 == len(line):
					breaks = escaped
				case c == '\\' && q == '"':
					r, w, err := escape(line[j+1:])
					if err != nil {
						return "", syntaxErr(lineNo, "%v", err)
					}
					buf = append(buf, r...)
					j += w
				default:
					buf = append(buf, c)
				}
			}
			if breaks != escaped {
				buf = bytes.TrimRight(buf, " \t")
				breaks = 0
			}
		}
		if p.i >= len(p.lines) {
			return "", syntaxErr(n, "unterminated quoted value (the frontmatter ends before its closing %c)", q)
		}
		line, lineNo = p.lines[p.i].text, p.lines[p.i].n
		p.i++
	}
}

// afterQuoted checks that only a comment follows a closing quote.
func (p *parser) afterQuoted(n int, rest string) error {
	t := strings.TrimLeft(rest, " \t")
	if t == "" {
		return nil
	}
	if t[0] == '#' && len(t) < len(rest) {
		return p.noContinuation()
	}
	if strings.HasPrefix(t, ":") {
		return syntaxErr(n, "a quoted value cannot be a key here (nested mapping on one line)")
	}
	return syntaxErr(n, "unexpected text after the closing quote")
}

// simpleEscapes are the one-character escapes of double-quoted YAML.
var simpleEscapes = map[byte]string{
	'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v", 'f': "\f",
	'r': "\r", 'e': "\x1b", ' ': " ", '"': `"`, '/': "/", '\\': `\`, 'N': "\u0085", '_': "\u00a0",
	'L': "\u2028", 'P': "\u2029",
}

// escape decodes the double-quoted escape at the start of s (after the
// backslash); w is how many bytes it used.
func escape(s string) (string, int, error) {
	c := s[0]
	if r, ok := simpleEscapes[c]; ok {
		return r, 1, nil
	}
	width := 0
	switch c {
	case 'x':
		width = 2
	case 'u':
		width = 4
	case 'U':
		width = 8
	default:
		return "", 0, fmt.Errorf("unknown escape \\%c in a double-quoted value", c)
	}
	if len(s) < 1+width {
		return "", 0, fmt.Errorf("short escape \\%c in a double-quoted value", c)
	}
	v, err := strconv.ParseUint(s[1:1+width], 16, 32)
	if err != nil || v > utf8.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
		return "", 0, fmt.Errorf("invalid escape \\%s in a double-quoted value", s[:1+width])
	}
	return string(rune(v)), 1 + width, nil
}

// block parses a literal (|) or folded (>) block scalar whose header
// (indicators, then an optional comment) is first, on line n.
func (p *parser) block(n int, first string) (string, error) {
	folded := first[0] == '>'
	chomp := byte(0)
	indent := 0
	h := first[1:]
	for k := 0; k < 2 && h != ""; k++ {
		switch c := h[0]; {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = c
			h = h[1:]
		case c >= '1' && c <= '9' && indent == 0:
			indent = int(c - '0')
			h = h[1:]
		}
	}
	if t := strings.TrimLeft(h, " \t"); t != "" && (t[0] != '#' || len(t) == len(h)) {
		return "", syntaxErr(n, "invalid block scalar header %q", first)
	}
	// The content: lines indented by at least indent spaces (detected from
	// the first non-empty line when not given), and empty lines.
	var lines []string
	for p.i < len(p.lines) {
		t := p.lines[p.i].text
		if isBlank(t) {
			if indent > 0 && len(t) > indent {
				lines = append(lines, t[indent:])
			} else {
				lines = append(lines, "")
			}
			p.i++
			continue
		}
		ind := indentOf(t)
		if indent == 0 {
			if ind == 0 {
				break
			}
			indent = ind
		}
		if ind < indent {
			if ind > 0 {
				return "", syntaxErr(p.lines[p.i].n, "block scalar line is indented less than its first line")
			}
			break
		}
		lines = append(lines, t[indent:])
		p.i++
	}
	// Trailing empty lines are chomping's business.
	end := len(lines)
	for end > 0 && strings.Trim(lines[end-1], " \t") == "" {
		end--
	}
	trailing := len(lines) - end
	lines = lines[:end]
	var b strings.Builder
	if folded {
		foldLines(&b, lines)
	} else {
		b.WriteString(strings.Join(lines, "\n"))
	}
	switch {
	case chomp == '-' || len(lines) == 0 && chomp != '+':
	case chomp == '+':
		if len(lines) > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.Repeat("\n", trailing))
	default:
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// foldLines writes the content lines of a folded block scalar: lines of
// text joined by a space, an empty line a line break, and more-indented
// lines kept on their own.
func foldLines(b *strings.Builder, lines []string) {
	started, prevMore, empties := false, false, 0
	for _, l := range lines {
		if strings.Trim(l, " \t") == "" {
			empties++
			continue
		}
		more := l[0] == ' ' || l[0] == '\t'
		switch {
		case !started:
			b.WriteString(strings.Repeat("\n", empties))
		case !more && !prevMore && empties == 0:
			b.WriteByte(' ')
		case !more && !prevMore:
			b.WriteString(strings.Repeat("\n", empties))
		default:
			b.WriteString(strings.Repeat("\n", empties+1))
		}
		b.WriteString(l)
		started, prevMore, empties = true, more, 0
	}
}

// flow skips a flow collection ([…] or {…}) that begins with first, on
// line n, and may continue over further lines; its content stays opaque.
func (p *parser) flow(n int, first string) error {
	depth := 0
	var quote byte
	line := first
	for {
		for j := 0; j < len(line); j++ {
			c := line[j]
			switch {
			case quote == '"' && c == '\\':
				j++
			case quote != 0 && c == quote:
				if quote == '\'' && j+1 < len(line) && line[j+1] == '\'' {
					j++
					continue
				}
				quote = 0
			case quote != 0:
			case c == '"' || c == '\'':
				quote = c
			case c == '#' && (j == 0 || line[j-1] == ' ' || line[j-1] == '\t'):
				j = len(line)
			case c == '[' || c == '{':
				depth++
			case c == ']' || c == '}':
				depth--
				if depth == 0 {
					rest := strings.TrimLeft(line[j+1:], " \t")
					if rest != "" && rest[0] != '#' {
						return syntaxErr(n, "unexpected text after a flow collection")
					}
					return nil
				}
			}
		}
		if p.i >= len(p.lines) {
			return syntaxErr(n, "unterminated flow collection")
		}
		line = p.lines[p.i].text
		p.i++
	}
}

// resolvePlain types a plain scalar by the YAML 1.2 core schema.
func resolvePlain(s string) value {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return value{kind: kindNull}
	case "true", "True", "TRUE":
		return value{kind: kindBool, b: true}
	case "false", "False", "FALSE":
		return value{kind: kindBool, b: false}
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return value{kind: kindNumber, num: math.Inf(1)}
	case "-.inf", "-.Inf", "-.INF":
		return value{kind: kindNumber, num: math.Inf(-1)}
	case ".nan", ".NaN", ".NAN":
		return value{kind: kindNumber, num: math.NaN()}
	}
	if f, ok := coreNumber(s); ok {
		return value{kind: kindNumber, num: f}
	}
	return value{kind: kindString, str: s}
}

// coreNumber parses the core schema's integers (decimal, 0o, 0x) and
// floats.
func coreNumber(s string) (float64, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x') {
		base := 8
		if s[1] == 'x' {
			base = 16
		}
		for _, c := range s[2:] {
			if !isDigit(c, base) {
				return 0, false
			}
		}
		v, err := strconv.ParseUint(s[2:], base, 64)
		if err != nil {
			return math.Inf(1), true // too large for 64 bits: still a number
		}
		return float64(v), true
	}
	t := strings.TrimLeft(s, "+-")
	if len(s)-len(t) > 1 || t == "" {
		return 0, false
	}
	// [0-9]+ | [0-9]+ . [0-9]* | . [0-9]+, then an optional exponent.
	j, digits := 0, 0
	for j < len(t) && isDigit(rune(t[j]), 10) {
		j++
		digits++
	}
	if j < len(t) && t[j] == '.' {
		j++
		for j < len(t) && isDigit(rune(t[j]), 10) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if j < len(t) && (t[j] == 'e' || t[j] == 'E') {
		j++
		if j < len(t) && (t[j] == '+' || t[j] == '-') {
			j++
		}
		k := j
		for j < len(t) && isDigit(rune(t[j]), 10) {
			j++
		}
		if j == k {
			return 0, false
		}
	}
	if j != len(t) {
		return 0, false
	}
	// The syntax is checked: an error can only be a range error, and f is
	// then ±Inf or 0, as in JavaScript.
	f, _ := strconv.ParseFloat(s, 64)
	return f, true
}

func isDigit(c rune, base int) bool {
	switch {
	case c >= '0' && c <= '7':
		return true
	case c == '8' || c == '9':
		return base >= 10
	case c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		return base == 16
	}
	return false
}
