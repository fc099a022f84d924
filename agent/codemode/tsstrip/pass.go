package tsstrip

// classModifiers are the TypeScript-only class member modifiers.
var classModifiers = map[string]bool{"public": true, "private": true, "protected": true, "readonly": true, "override": true, "abstract": true, "declare": true}

// paramModifiers make a parameter a parameter property.
var paramModifiers = map[string]bool{"public": true, "private": true, "protected": true, "readonly": true, "override": true}

// run walks the tokens, marking the erasable syntax.
func (s *stripper) run() error {
	stack := []*frame{{k: fBlock, close: len(s.toks) - 1, sig: -1, mstart: -1}}
	fnStart := -1
	prevKept := -1
	ends := func() bool { return prevKept >= 0 && s.toks[prevKept].ends }
	prevIs := func(text string) bool { return prevKept >= 0 && s.is(prevKept, text) }
	fnPending, classPending := false, false
	last := len(s.toks) - 1
	for i := 0; i < last; {
		f := stack[len(stack)-1]
		t := s.toks[i]
		if i == f.close {
			stack = stack[:len(stack)-1]
			top := stack[len(stack)-1]
			if top.k == fClass && !top.init {
				top.member = true
			}
			if top.k == fParams && !top.dflt {
				top.bound = true
			}
			if top.k == fClass && !top.init {
				top.mstart = -1
			}
			if t.k == kTmplMid {
				stack = append(stack, &frame{k: fExpr, close: s.match[i], sig: -1, mstart: -1})
			}
			prevKept = i
			i++
			if f.fn && s.is(i, ":") {
				j := s.typ(i + 1)
				if j < 0 {
					return errAt(s.src, s.toks[i].s, "cannot read the return type")
				}
				s.erase(i, j)
				i = j
			}
			if f.sig >= 0 && !s.is(i, "{") && !s.is(i, "=>") {
				// A signature without a body: an overload or a bodiless
				// class member, erased whole.
				j := i
				if s.is(j, ";") {
					j++
				}
				s.erase(f.sig, j)
				if top.k == fClass {
					top.member, top.mstart = true, -1
				}
				i = j
			}
			continue
		}
		if t.nl && ends() {
			f.decl, f.declBind = false, false
			if f.k == fClass && f.ternary == 0 && !(t.k == kPunct && t.text != "[" && t.text != "*" && t.text != "@") {
				f.init, f.member, f.mstart = false, true, -1
			}
		}
		if f.k == fClass && f.member && f.mstart < 0 {
			f.mstart = i
		}
		stmt := f.k == fBlock && (prevKept < 0 || !ends() || t.nl)
		sameLine := func(j int) bool { return !s.at(j).nl }
		if t.k == kIdent && stmt {
			next := s.at(i + 1)
			nextIdent := next.k == kIdent && sameLine(i+1)
			switch {
			case t.text == "type" && nextIdent && (s.is(i+2, "=") || s.is(i+2, "<")):
				j := i + 2
				if s.is(j, "<") {
					if j = s.typeParams(j, 0); j < 0 {
						return errAt(s.src, t.s, "cannot read the type alias's parameters")
					}
				}
				if !s.is(j, "=") {
					return errAt(s.src, t.s, "a type alias needs =")
				}
				if j = s.typ(j + 1); j < 0 {
					return errAt(s.src, t.s, "cannot read the type alias")
				}
				if s.is(j, ";") {
					j++
				}
				s.erase(i, j)
				s.semi = append(s.semi, i)
				i = j
				continue
			case t.text == "interface" && nextIdent:
				j := i + 2
				if s.is(j, "<") {
					if j = s.typeParams(j, 0); j < 0 {
						return errAt(s.src, t.s, "cannot read the interface's parameters")
					}
				}
				if s.is(j, "extends") {
					for j++; ; j++ {
						if j = s.typ(j); j < 0 {
							return errAt(s.src, t.s, "cannot read the interface's extends list")
						}
						if !s.is(j, ",") {
							break
						}
					}
				}
				if !s.is(j, "{") {
					return errAt(s.src, t.s, "an interface needs a body")
				}
				j = s.match[j] + 1
				s.erase(i, j)
				s.semi = append(s.semi, i)
				i = j
				continue
			case t.text == "declare" && (nextIdent || next.k == kIdent && next.text == "global"):
				// declare enum, declare namespace and declare global are
				// ambient, so erasable too: the whole statement goes.
				j := s.statementEnd(i + 1)
				s.erase(i, j)
				s.semi = append(s.semi, i)
				i = j
				continue
			case t.text == "abstract" && next.k == kIdent && next.text == "class" && sameLine(i+1):
				s.erase(i, i+1)
				i++
				continue
			case t.text == "enum" && next.k == kIdent, t.text == "const" && next.k == kIdent && next.text == "enum":
				return s.refuse(i, "an enum")
			case (t.text == "namespace" || t.text == "module") && (nextIdent || next.k == kStr && sameLine(i+1)):
				return s.refuse(i, "a "+t.text)
			}
		}
		if t.k == kIdent && f.k == fParams && !f.bound && !f.dflt {
			next := s.at(i + 1)
			if paramModifiers[t.text] && sameLine(i+1) && (next.k == kIdent || s.is(i+1, "{") || s.is(i+1, "[")) {
				return s.refuse(i, "a parameter property ("+t.text+")")
			}
			if t.text == "this" && s.is(i+1, ":") {
				j := s.typ(i + 2)
				if j < 0 {
					return errAt(s.src, t.s, "cannot read the this parameter's type")
				}
				if s.is(j, ",") {
					j++
				}
				s.erase(i, j)
				i = j
				continue
			}
		}
		if t.k == kIdent && f.k == fClass && f.member && !f.init && classModifiers[t.text] && sameLine(i+1) {
			next := s.at(i + 1)
			if next.k == kIdent || next.k == kStr || next.k == kNum || next.k == kPrivate || s.is(i+1, "[") || s.is(i+1, "*") {
				if t.text == "declare" || t.text == "abstract" {
					j := s.statementEnd(i + 1)
					s.erase(i, j)
					i = j
					continue
				}
				s.erase(i, i+1)
				i++
				continue
			}
		}
		if t.k == kIdent && (t.text == "as" || t.text == "satisfies") && ends() && !t.nl {
			j := -1
			if t.text == "as" && s.is(i+1, "const") {
				j = i + 2
			} else if s.startsType(i + 1) {
				j = s.typ(i + 1)
			}
			if j > 0 {
				s.erase(i, j)
				n := s.at(j)
				if n.nl && (s.is(j, "(") || s.is(j, "[") || n.k == kTmpl || n.k == kTmplHead) {
					s.semi = append(s.semi, i)
				}
				i = j
				continue
			}
		}
		if t.k == kIdent && t.text == "implements" && classPending {
			j := i + 1
			for {
				if j = s.typ(j); j < 0 {
					return errAt(s.src, t.s, "cannot read the implements list")
				}
				if !s.is(j, ",") {
					break
				}
				j++
			}
			s.erase(i, j)
			i = j
			continue
		}
		if t.k == kPunct {
			switch t.text {
			case "!":
				if ends() && !t.nl {
					s.erase(i, i+1)
					i++
					continue
				}
			case "?":
				n := s.at(i + 1)
				if f.k == fParams && f.bound && !f.dflt && (s.is(i+1, ":") || s.is(i+1, ",") || s.is(i+1, ")") || s.is(i+1, "=")) ||
					f.k == fClass && !f.init && ends() && (s.is(i+1, ":") || s.is(i+1, ";") || s.is(i+1, "(") || s.is(i+1, "=") || s.is(i+1, "<") || n.nl) {
					s.erase(i, i+1)
					i++
					continue
				}
				f.ternary++
			case ":":
				if f.ternary == 0 && (f.k == fParams && !f.dflt || f.declBind || f.k == fClass && !f.init) {
					j := s.typ(i + 1)
					if j < 0 {
						return errAt(s.src, t.s, "cannot read the type after ':'")
					}
					s.erase(i, j)
					i = j
					continue
				}
				if f.ternary > 0 {
					f.ternary--
				}
			case "=":
				switch {
				case f.k == fParams:
					f.dflt = true
				case f.k == fClass:
					f.init = true
				}
				f.declBind = false
			case ",":
				if f.k == fParams {
					f.bound, f.dflt = false, false
				}
				if f.decl && f.ternary == 0 {
					f.declBind = true
				}
				if f.k == fObject {
					f.member = true
				}
			case ";":
				f.decl, f.declBind, f.ternary = false, false, 0
				if f.k == fClass {
					f.init, f.member, f.mstart = false, true, -1
				}
			case "<":
				generic := fnPending || classPending || (f.k == fClass || f.k == fObject) && f.member || prevIs("async")
				if generic {
					if j := s.typeParams(i, 0); j > 0 {
						s.erase(i, j)
						i = j
						continue
					}
				}
				if ends() && !prevIs("async") {
					if j := s.typeArgs(i, 0); j > 0 {
						n := s.at(j)
						if s.is(j, "(") || n.k == kTmpl || n.k == kTmplHead || classPending && (s.is(j, "{") || s.is(j, "implements")) {
							s.erase(i, j)
							i = j
							continue
						}
					}
				} else {
					if j := s.typeParams(i, 0); j > 0 && s.is(j, "(") && s.arrowAfter(s.match[j]) {
						s.erase(i, j)
						i = j
						continue
					}
					return s.refuse(i, "an angle-bracket type assertion (write `x as T`)")
				}
			case "(":
				nf := &frame{k: fExpr, close: s.match[i], sig: -1, mstart: -1}
				switch {
				case fnPending:
					nf.k, nf.fn, nf.sig = fParams, true, fnStart
					fnPending = false
				case prevIs("catch"):
					nf.k = fParams
				case (f.k == fObject || f.k == fClass) && f.member && !f.init && prevKept >= 0 && s.toks[prevKept].ends:
					nf.k, nf.fn = fParams, true
					if f.k == fClass {
						nf.sig = f.mstart
					}
				case (!ends() || prevIs("async")) && f.ternary == 0 && s.arrowAfter(s.match[i]):
					nf.k, nf.fn = fParams, true
				case (!ends() || prevIs("async")) && s.is(s.match[i]+1, "=>"):
					nf.k, nf.fn = fParams, true
				}
				if f.k == fObject || f.k == fClass {
					f.member = false
				}
				stack = append(stack, nf)
				prevKept = i
				i++
				continue
			case "[", "{":
				nf := &frame{k: fExpr, close: s.match[i], sig: -1, mstart: -1}
				if t.text == "[" && f.k == fClass && f.member && !f.init && s.at(i+1).k == kIdent && s.is(i+2, ":") {
					// An index signature.
					j := s.statementEnd(i)
					s.erase(i, j)
					i = j
					continue
				}
				if t.text == "{" {
					switch {
					case classPending:
						nf.k, nf.member = fClass, true
						classPending = false
					case f.declBind || f.k == fParams && !f.dflt || prevKept >= 0 && braceIsExpr(&s.toks[prevKept]):
						nf.k, nf.member = fObject, true
					default:
						nf.k = fBlock
					}
				}
				if f.k == fObject || f.k == fClass {
					f.member = false
				}
				stack = append(stack, nf)
				prevKept = i
				i++
				continue
			}
		}
		switch t.k {
		case kTmplHead:
			stack = append(stack, &frame{k: fExpr, close: s.match[i], sig: -1, mstart: -1})
		case kIdent:
			switch t.text {
			case "function":
				fnPending, fnStart = true, i
				if prevIs("async") && !s.toks[i].nl {
					fnStart = prevKept
				}
			case "class":
				classPending = true
			case "let", "const", "var":
				n := s.at(i + 1)
				if n.k == kIdent || s.is(i+1, "{") || s.is(i+1, "[") {
					f.decl, f.declBind = true, true
				}
			}
			if f.k == fParams && !f.dflt {
				f.bound = true
			}
		}
		if (f.k == fObject || f.k == fClass) && !s.is(i, ";") && !s.is(i, ",") && !(t.k == kIdent && (t.text == "get" || t.text == "set" || t.text == "async" || t.text == "static")) && !s.is(i, "*") {
			// The member's key was read: a ( next opens its parameters.
			if !(t.k == kIdent || t.k == kStr || t.k == kNum || t.k == kPrivate) {
				f.member = false
			}
		}
		prevKept = i
		i++
	}
	return nil
}

// arrowAfter says whether the ) at c is followed by => or by a return type
// and =>.
func (s *stripper) arrowAfter(c int) bool {
	if c < 0 {
		return false
	}
	if s.is(c+1, "=>") {
		return true
	}
	if s.is(c+1, ":") {
		j := s.typ(c + 2)
		return j > 0 && s.is(j, "=>")
	}
	return false
}

// statementEnd is the index after the statement or member starting at i:
// through a ; at its level, or before a token on a new line after a
// complete bracket group or identifier, or after a closing } of a body.
func (s *stripper) statementEnd(i int) int {
	last := len(s.toks) - 1
	for j := i; j < last; {
		t := s.toks[j]
		if j > i && t.nl {
			return j
		}
		if s.is(j, ";") {
			return j + 1
		}
		if s.is(j, ")") || s.is(j, "]") || s.is(j, "}") || t.k == kTmplMid || t.k == kTmplTail {
			return j
		}
		if s.match[j] > j {
			j = s.match[j] + 1
			continue
		}
		j++
	}
	return last
}
