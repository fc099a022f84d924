package sessionlog

// validJSON reports whether b is one JSON value, with whitespace around
// it, exactly as encoding/json.Valid decides: the same grammar (a string
// holds no byte below 0x20 and only the escapes \" \\ \/ \b \f \n \r \t
// and \uXXXX; invalid UTF-8 is accepted, as encoding/json accepts it), the
// same limit of 10,000 nested objects and arrays. It is a loop over the
// bytes with no state machine per byte: reading a long log, json.Valid of
// every record was an eighth of the CPU of session/load.
// valid_test.go and FuzzValidJSON hold it to json.Valid.
func validJSON(b []byte) bool {
	// stack holds, per open container, whether it is an object.
	var buf [64]bool
	stack := buf[:0]
	i := skipWS(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		switch c := b[i]; c {
		case '{':
			if len(stack) >= maxNesting {
				return false
			}
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			stack = append(stack, true)
			var ok bool
			if i, ok = objectKey(b, i); !ok {
				return false
			}
			continue
		case '[':
			if len(stack) >= maxNesting {
				return false
			}
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == ']' {
				i++
				break
			}
			stack = append(stack, false)
			continue
		case '"':
			var ok bool
			if i, ok = validString(b, i); !ok {
				return false
			}
		case 't':
			if !hasWord(b, i, "true") {
				return false
			}
			i += 4
		case 'f':
			if !hasWord(b, i, "false") {
				return false
			}
			i += 5
		case 'n':
			if !hasWord(b, i, "null") {
				return false
			}
			i += 4
		default:
			var ok bool
			if i, ok = validNumber(b, i); !ok {
				return false
			}
		}
		// A value ended at i: close containers, or go on to the next
		// element or member.
		for {
			i = skipWS(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			obj := stack[len(stack)-1]
			if b[i] == ',' {
				i = skipWS(b, i+1)
				if obj {
					var ok bool
					if i, ok = objectKey(b, i); !ok {
						return false
					}
				}
				break
			}
			if (obj && b[i] != '}') || (!obj && b[i] != ']') {
				return false
			}
			stack = stack[:len(stack)-1]
			i++
		}
	}
}

// maxNesting is encoding/json's limit on nested objects and arrays.
const maxNesting = 10000

// objectKey checks a member's key and colon at i and returns where its
// value starts.
func objectKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	i, ok := validString(b, i)
	if !ok {
		return 0, false
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return skipWS(b, i+1), true
}

// validString checks the string starting at b[i] == '"' and returns its end.
func validString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			i++
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return 0, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// hasWord reports whether b holds word at i.
func hasWord(b []byte, i int, word string) bool {
	return len(b)-i >= len(word) && string(b[i:i+len(word)]) == word
}

// validNumber checks the number starting at i and returns its end:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, false
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i, true
}
