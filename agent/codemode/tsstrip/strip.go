package tsstrip

// frameKind is what an open bracket holds.
type frameKind uint8

const (
	fBlock  frameKind = iota // statements
	fExpr                    // parenthesis, bracket, template substitution
	fObject                  // object literal or pattern
	fParams                  // a parameter list
	fClass                   // class body
)

// frame is an open bracket's state.
type frame struct {
	k       frameKind
	close   int  // index of the closing token
	ternary int  // open ? of conditionals
	member  bool // fObject/fClass: at a member's start
	// fParams: a binding was read (so ? and : mark the parameter), a
	// default value is being read.
	bound, dflt bool
	// decl: a let/const/var declarator is open; declBind: its binding is
	// being read (a : starts its type).
	decl, declBind bool
	// init: fClass: a field initializer is being read.
	init bool
	// fn: after this frame closes, a : starts a return type.
	fn bool
	// sig: fParams of a function or method: the index of its first token
	// (erased whole when no body follows: an overload or a bodiless
	// member); -1 else. mstart: fClass: the first token of the member
	// being read, -1 before it.
	sig, mstart int
}

// stripper holds one strip.
type stripper struct {
	src    string
	toks   []tok
	match  []int  // index of each bracket's partner, -1 else
	erased []bool // per token
	semi   []int  // token indexes whose first byte becomes ;
}

// Strip erases src's erasable TypeScript syntax (see the package
// documentation) and returns code of the same length. A program it refuses
// returns an *Error.
func Strip(src string) (string, error) {
	toks, err := lex(src)
	if err != nil {
		err.(*Error).Unreadable = true
		return "", err
	}
	s := &stripper{src: src, toks: toks, match: make([]int, len(toks)), erased: make([]bool, len(toks))}
	if err := s.pair(); err != nil {
		err.(*Error).Unreadable = true
		return "", err
	}
	if err := s.run(); err != nil {
		return "", err
	}
	out := s.render()
	if err := s.verify(out); err != nil {
		return "", err
	}
	return out, nil
}

// pair matches brackets and template pieces.
func (s *stripper) pair() error {
	var open []int
	for i, t := range s.toks {
		s.match[i] = -1
		isOpen := t.k == kPunct && (t.text == "(" || t.text == "[" || t.text == "{") || t.k == kTmplHead
		isClose := t.k == kPunct && (t.text == ")" || t.text == "]" || t.text == "}") || t.k == kTmplTail
		if t.k == kTmplMid {
			isOpen, isClose = true, true
		}
		if isClose {
			if len(open) == 0 {
				return errAt(s.src, t.s, "unmatched %q", s.src[t.s:t.e][:1])
			}
			o := open[len(open)-1]
			open = open[:len(open)-1]
			want := closer(s.toks[o].text)
			okPair := s.toks[o].k == kPunct && t.k == kPunct && want == t.text ||
				(s.toks[o].k == kTmplHead || s.toks[o].k == kTmplMid) && (t.k == kTmplMid || t.k == kTmplTail)
			if !okPair {
				return errAt(s.src, t.s, "mismatched bracket")
			}
			s.match[o], s.match[i] = i, o
		}
		if isOpen {
			open = append(open, i)
		}
	}
	if len(open) > 0 {
		return errAt(s.src, s.toks[open[len(open)-1]].s, "unclosed bracket")
	}
	return nil
}

// is says whether token i is the punctuator or identifier text.
func (s *stripper) is(i int, text string) bool {
	t := s.at(i)
	return (t.k == kPunct || t.k == kIdent) && t.text == text
}

// erase marks tokens [from, to) erased.
func (s *stripper) erase(from, to int) {
	for i := from; i < to && i < len(s.toks)-1; i++ {
		s.erased[i] = true
	}
}

// refuse is the error for non-erasable syntax at token i.
func (s *stripper) refuse(i int, what string) error {
	return errAt(s.src, s.toks[i].s, "%s is not erasable TypeScript (only erasable syntax is accepted: no enum, namespace, parameter property or <T>x assertion)", what)
}

// render writes the source with erased tokens (and what lies between two
// erased tokens) blanked.
func (s *stripper) render() string {
	b := []byte(s.src)
	for i := 0; i < len(s.toks); i++ {
		if !s.erased[i] {
			continue
		}
		j := i
		for j+1 < len(s.toks) && s.erased[j+1] {
			j++
		}
		blank(b, s.toks[i].s, s.toks[j].e)
		i = j
	}
	for _, i := range s.semi {
		b[s.toks[i].s] = ';'
	}
	return string(b)
}

// blank replaces b[from:to] with spaces, keeping line terminators.
func blank(b []byte, from, to int) {
	for k := from; k < to; k++ {
		switch {
		case b[k] == '\n' || b[k] == '\r':
		case b[k] == 0xe2 && k+2 < to && b[k+1] == 0x80 && (b[k+2] == 0xa8 || b[k+2] == 0xa9):
			k += 2
		default:
			b[k] = ' '
		}
	}
}

// verify tokenizes out again: its tokens must be the input's kept tokens
// and the inserted semicolons, at the same offsets.
func (s *stripper) verify(out string) error {
	got, err := lex(out)
	if err != nil {
		return errAt(s.src, 0, "the stripped program no longer reads as the original did (%v); rewrite the type syntax", err)
	}
	semi := map[int]bool{}
	for _, i := range s.semi {
		semi[s.toks[i].s] = true
	}
	g := 0
	for i, t := range s.toks {
		if s.erased[i] && !semi[t.s] {
			continue
		}
		if g >= len(got) || got[g].s != t.s || (!semi[t.s] && (got[g].e != t.e || got[g].k != t.k)) {
			at := t.s
			return errAt(s.src, at, "erasing the types here would change how the code reads; rewrite it (for example with parentheses or a semicolon)")
		}
		g++
	}
	if g != len(got) {
		return errAt(s.src, len(s.src), "erasing the types would change how the code reads")
	}
	return nil
}

// at is token i, or the end-of-input token past the end.
func (s *stripper) at(i int) tok {
	if i < 0 || i >= len(s.toks) {
		return s.toks[len(s.toks)-1]
	}
	return s.toks[i]
}

// closer is the bracket that closes open.
func closer(open string) string {
	switch open {
	case "(":
		return ")"
	case "[":
		return "]"
	case "{":
		return "}"
	}
	return ""
}
