package tsstrip

// The type grammar, read over tokens. Each function takes the index of the
// type's first token and returns the index after it, or -1 when the tokens
// there are not a type.

// typeOperators are the prefix operators of a type.
var typeOperators = map[string]bool{"keyof": true, "unique": true, "readonly": true}

// typ reads a type: a function or constructor type, a union, or a
// conditional type.
func (s *stripper) typ(i int) int {
	return s.typDepth(i, 0)
}

// maxTypeDepth bounds the nesting the type reader follows.
const maxTypeDepth = 200

// typDepth is typ at nesting depth d.
func (s *stripper) typDepth(i, d int) int {
	if d > maxTypeDepth {
		return -1
	}
	if s.is(i, "abstract") && s.is(i+1, "new") {
		i++
	}
	if s.is(i, "new") {
		i++
	}
	if s.is(i, "<") {
		j := s.typeParams(i, d)
		if j < 0 || !s.is(j, "(") {
			return -1
		}
		i = j
	}
	if s.is(i, "(") {
		if c := s.match[i]; c > 0 && s.is(c+1, "=>") {
			return s.typDepth(c+2, d+1)
		}
	}
	j := s.union(i, d)
	if j < 0 {
		return -1
	}
	if s.is(j, "extends") && !s.at(j).nl {
		k := s.union(j+1, d+1)
		if k < 0 || !s.is(k, "?") {
			return -1
		}
		k = s.typDepth(k+1, d+1)
		if k < 0 || !s.is(k, ":") {
			return -1
		}
		return s.typDepth(k+1, d+1)
	}
	return j
}

// union reads operands joined by | and &, with an optional leading one.
func (s *stripper) union(i, d int) int {
	if s.is(i, "|") || s.is(i, "&") {
		i++
	}
	for {
		j := s.operand(i, d)
		if j < 0 {
			return -1
		}
		if !s.is(j, "|") && !s.is(j, "&") {
			return j
		}
		i = j + 1
	}
}

// operand reads a type operator's operand with its [] suffixes.
func (s *stripper) operand(i, d int) int {
	if d > maxTypeDepth {
		return -1
	}
	t := s.at(i)
	if t.k == kIdent && typeOperators[t.text] && s.startsType(i+1) {
		return s.operand(i+1, d+1)
	}
	if s.is(i, "infer") && s.at(i+1).k == kIdent {
		j := i + 2
		if s.is(j, "extends") {
			if k := s.union(j+1, d+1); k >= 0 && !s.is(k, "?") {
				j = k
			}
		}
		return j
	}
	j := s.primary(i, d)
	for j >= 0 && s.is(j, "[") && !s.at(j).nl {
		j = s.match[j] + 1
	}
	return j
}

// startsType says whether token i may start a type.
func (s *stripper) startsType(i int) bool {
	t := s.at(i)
	switch t.k {
	case kIdent, kStr, kNum, kTmpl, kTmplHead:
		return true
	case kPunct:
		switch t.text {
		case "{", "[", "(", "-", "<", "|", "&":
			return true
		}
	}
	return false
}

// primary reads a type reference, literal, object, tuple, parenthesized
// type or typeof query.
func (s *stripper) primary(i, d int) int {
	t := s.at(i)
	switch t.k {
	case kIdent:
		switch t.text {
		case "typeof":
			j := i + 1
			if s.at(j).k != kIdent {
				return -1
			}
			j++
			for s.is(j, ".") && s.at(j+1).k == kIdent {
				j += 2
			}
			if s.is(j, "<") && !s.at(j).nl {
				if k := s.typeArgs(j, d+1); k >= 0 {
					j = k
				}
			}
			return j
		case "asserts":
			if s.at(i+1).k == kIdent && !s.at(i+1).nl {
				j := i + 2
				if s.is(j, "is") {
					return s.typDepth(j+1, d+1)
				}
				return j
			}
		}
		j := i + 1
		if s.is(j, "is") && !s.at(j).nl {
			return s.typDepth(j+1, d+1)
		}
		for s.is(j, ".") && s.at(j+1).k == kIdent {
			j += 2
		}
		if s.is(j, "<") && !s.at(j).nl {
			return s.typeArgs(j, d+1)
		}
		return j
	case kStr, kNum, kTmpl:
		return i + 1
	case kTmplHead:
		// A template literal type: each substitution holds a type.
		j := i
		for s.at(j).k == kTmplHead || s.at(j).k == kTmplMid {
			k := s.typDepth(j+1, d+1)
			if k < 0 || k != s.match[j] {
				return -1
			}
			j = k
		}
		return j + 1
	case kPunct:
		switch t.text {
		case "-":
			if s.at(i+1).k == kNum {
				return i + 2
			}
		case "{", "[", "(":
			return s.match[i] + 1
		}
	}
	return -1
}

// typeArgs reads <T, U> at token i (a <); -1 if it is not a type argument
// list.
func (s *stripper) typeArgs(i, d int) int {
	j := i + 1
	for {
		j = s.typDepth(j, d+1)
		if j < 0 {
			return -1
		}
		if s.is(j, ">") {
			return j + 1
		}
		if !s.is(j, ",") {
			return -1
		}
		j++
	}
}

// typeParams reads <T extends U = V, ...> at token i (a <).
func (s *stripper) typeParams(i, d int) int {
	j := i + 1
	for {
		if s.is(j, "const") || s.is(j, "in") || s.is(j, "out") {
			if s.at(j+1).k == kIdent {
				j++
			}
		}
		if s.at(j).k != kIdent {
			return -1
		}
		j++
		if s.is(j, "extends") {
			if j = s.typDepth(j+1, d+1); j < 0 {
				return -1
			}
		}
		if s.is(j, "=") {
			if j = s.typDepth(j+1, d+1); j < 0 {
				return -1
			}
		}
		if s.is(j, ">") {
			return j + 1
		}
		if !s.is(j, ",") {
			return -1
		}
		j++
		if s.is(j, ">") {
			return j + 1
		}
	}
}
