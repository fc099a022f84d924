package tsstrip

import (
	"fmt"
	"strings"
)

// kind is what a token is.
type kind uint8

const (
	kIdent kind = iota // identifier or keyword
	kNum
	kStr
	kTmpl     // a whole template without substitutions
	kTmplHead // `...${
	kTmplMid  // }...${
	kTmplTail // }...`
	kRegex
	kPunct
	kPrivate // #name
	kEOF
)

// tok is one token of the source.
type tok struct {
	k    kind
	s, e int    // byte offsets [s, e)
	text string // the token's text for identifiers and punctuators
	nl   bool   // a line terminator stands between this token and the one before
	// ends says the token ends an expression (so a following / divides).
	ends bool
}

// Error is a program the stripper refuses: non-erasable TypeScript, or a
// source it cannot read. Line and Col are 1-based (Col in bytes).
type Error struct {
	Line, Col int
	Msg       string
	// Unreadable says the source is not even well-formed tokens and
	// brackets (an unterminated string, comment or template, an unmatched
	// bracket): a JavaScript parser would refuse it too.
	Unreadable bool
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("TypeScript strip: line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// errAt builds an *Error at byte offset off of src.
func errAt(src string, off int, format string, a ...any) *Error {
	if off > len(src) {
		off = len(src)
	}
	line := 1 + strings.Count(src[:off], "\n")
	col := off - strings.LastIndexByte(src[:off], '\n')
	return &Error{Line: line, Col: col, Msg: fmt.Sprintf(format, a...)}
}

// puncts are the punctuators, longest first. > is always its own token
// (type argument lists close with it), so >=, >> and >>> are read as
// several tokens; nothing here depends on them.
var puncts = []string{
	"...", "===", "!==", "**=", "<<=", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<",
	"{", "}", "(", ")", "[", "]", ";", ",", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "!", "~", "?", ":", "=", ".", "@",
}

// beforeRegex are keywords after which / starts a regular expression.
var beforeRegex = map[string]bool{
	"return": true, "typeof": true, "instanceof": true, "in": true, "of": true, "new": true, "delete": true,
	"void": true, "throw": true, "case": true, "do": true, "else": true, "yield": true, "await": true,
	"extends": true,
}

// ctrlKeywords are the keywords whose parenthesis is followed by a
// statement, not by an operator.
var ctrlKeywords = map[string]bool{"if": true, "while": true, "for": true, "with": true}

// isIDStart says whether c may start an identifier (any non-ASCII byte is
// taken as part of one).
func isIDStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || c == '\\'
}

// isIDPart says whether c may continue an identifier.
func isIDPart(c byte) bool { return isIDStart(c) || c >= '0' && c <= '9' }

// lineTerm reports the length of a line terminator at src[i:], or 0.
func lineTerm(src string, i int) int {
	switch {
	case src[i] == '\n' || src[i] == '\r':
		return 1
	case strings.HasPrefix(src[i:], "\u2028") || strings.HasPrefix(src[i:], "\u2029"):
		return 3
	}
	return 0
}

// lex tokenizes src. The regular-expression-or-division question is
// answered from the token before, with the brace and parenthesis kinds
// tracked: after a block's } or a control statement's ) a / starts a
// regular expression.
func lex(src string) ([]tok, error) {
	var toks []tok
	// stack holds, per open bracket: '{' block, 'o' expression brace,
	// 'T' template substitution, 'c' control paren, '(' other paren, '['.
	var stack []byte
	prev := func() *tok {
		if len(toks) == 0 {
			return nil
		}
		return &toks[len(toks)-1]
	}
	i, nl := 0, false
	for {
		// Whitespace and comments.
		for i < len(src) {
			if n := lineTerm(src, i); n > 0 {
				nl = true
				i += n
				continue
			}
			c := src[i]
			if c == ' ' || c == '\t' || c == '\v' || c == '\f' {
				i++
				continue
			}
			if strings.HasPrefix(src[i:], "\u00a0") || strings.HasPrefix(src[i:], "\ufeff") {
				i += len("\u00a0")
				if src[i-2] == 0xef {
					i++
				}
				continue
			}
			if strings.HasPrefix(src[i:], "//") {
				for i < len(src) && lineTerm(src, i) == 0 {
					i++
				}
				continue
			}
			if strings.HasPrefix(src[i:], "/*") {
				end := strings.Index(src[i+2:], "*/")
				if end < 0 {
					return nil, errAt(src, i, "unterminated comment")
				}
				body := src[i : i+2+end+2]
				if strings.ContainsAny(body, "\n\r\u2028\u2029") {
					nl = true
				}
				i += len(body)
				continue
			}
			break
		}
		if i >= len(src) {
			if len(stack) > 0 && stack[len(stack)-1] == 'T' {
				return nil, errAt(src, i, "unterminated template literal")
			}
			toks = append(toks, tok{k: kEOF, s: i, e: i, nl: nl})
			return toks, nil
		}
		t := tok{s: i, nl: nl}
		nl = false
		c := src[i]
		p := prev()
		regexOK := p == nil || !p.ends
		switch {
		case c == '#' && i+1 < len(src) && isIDStart(src[i+1]):
			j := i + 1
			for j < len(src) && isIDPart(src[j]) {
				j++
			}
			t.k, t.e, t.ends = kPrivate, j, true
		case isIDStart(c):
			j := i
			for j < len(src) && isIDPart(src[j]) {
				j++
			}
			t.k, t.e, t.text = kIdent, j, src[i:j]
			t.ends = !beforeRegex[t.text] && !ctrlKeywords[t.text] && t.text != "typeof"
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (isIDPart(src[j]) || src[j] == '.' ||
				(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E') && !strings.HasPrefix(src[i:], "0x") && !strings.HasPrefix(src[i:], "0X")) {
				j++
			}
			t.k, t.e, t.ends = kNum, j, true
		case c == '"' || c == '\'':
			j := i + 1
			for ; ; j++ {
				if j >= len(src) || src[j] == '\n' || src[j] == '\r' {
					return nil, errAt(src, i, "unterminated string literal")
				}
				if src[j] == '\\' {
					j++
					if j < len(src) && src[j] == '\r' && j+1 < len(src) && src[j+1] == '\n' {
						j++
					}
					continue
				}
				if src[j] == c {
					break
				}
			}
			t.k, t.e, t.ends = kStr, j+1, true
		case c == '`' || c == '}' && len(stack) > 0 && stack[len(stack)-1] == 'T':
			head := c == '`'
			if !head {
				stack = stack[:len(stack)-1]
			}
			j := i + 1
			for {
				if j >= len(src) {
					return nil, errAt(src, i, "unterminated template literal")
				}
				if src[j] == '\\' {
					j += 2
					continue
				}
				if src[j] == '`' {
					t.e, t.ends = j+1, true
					t.k = kTmplTail
					if head {
						t.k = kTmpl
					}
					break
				}
				if strings.HasPrefix(src[j:], "${") {
					t.e = j + 2
					t.k = kTmplMid
					if head {
						t.k = kTmplHead
					}
					stack = append(stack, 'T')
					break
				}
				j++
			}
		case c == '/' && regexOK:
			j, class := i+1, false
			for ; ; j++ {
				if j >= len(src) || lineTerm(src, j) > 0 {
					return nil, errAt(src, i, "unterminated regular expression")
				}
				switch src[j] {
				case '\\':
					j++
					if j < len(src) && lineTerm(src, j) > 0 {
						return nil, errAt(src, i, "unterminated regular expression")
					}
					continue
				case '[':
					class = true
				case ']':
					class = false
				}
				if src[j] == '/' && !class {
					break
				}
			}
			j++
			for j < len(src) && isIDPart(src[j]) {
				j++
			}
			t.k, t.e, t.ends = kRegex, j, true
		default:
			for _, pu := range puncts {
				if strings.HasPrefix(src[i:], pu) {
					if pu == "?." && i+2 < len(src) && src[i+2] >= '0' && src[i+2] <= '9' {
						continue
					}
					t.k, t.e, t.text = kPunct, i+len(pu), pu
					break
				}
			}
			if t.k != kPunct {
				return nil, errAt(src, i, "unexpected character %q", c)
			}
			switch pu := t.text; pu {
			case ")":
				t.ends = len(stack) == 0 || stack[len(stack)-1] != 'c'
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			case "]":
				t.ends = true
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			case "}":
				t.ends = len(stack) > 0 && stack[len(stack)-1] == 'o'
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			case "++", "--":
				t.ends = p != nil && p.ends
			case "(":
				if p != nil && p.k == kIdent && ctrlKeywords[p.text] {
					stack = append(stack, 'c')
				} else {
					stack = append(stack, '(')
				}
			case "[":
				stack = append(stack, '[')
			case "{":
				if braceIsExpr(p) {
					stack = append(stack, 'o')
				} else {
					stack = append(stack, '{')
				}
			}
		}
		toks = append(toks, t)
		i = t.e
	}
}

// braceIsExpr says whether a { after token p opens an expression (an
// object literal) rather than a block.
func braceIsExpr(p *tok) bool {
	if p == nil {
		return false
	}
	switch p.k {
	case kPunct:
		switch p.text {
		case ")", ";", "{", "}", "=>":
			return false
		}
		return true
	case kTmplHead, kTmplMid:
		return true
	case kIdent:
		return beforeRegex[p.text] && p.text != "do" && p.text != "else"
	}
	return false
}
