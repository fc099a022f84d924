package sessionlog

import "encoding/binary"

// validJSON reports whether b is one JSON value, with whitespace around
// it, exactly as encoding/json.Valid decides: the same grammar (a string
// holds no byte below 0x20 and only the escapes \" \\ \/ \b \f \n \r \t
// and \uXXXX; invalid UTF-8 is accepted, as encoding/json accepts it), the
// same limit of 10,000 nested objects and arrays. It is a loop over the
// bytes with no state machine per byte: reading a long log, json.Valid of
// every record was an eighth of the CPU of session/load.
// valid_test.go and FuzzValidJSON hold it to json.Valid.
func validJSON(b []byte) bool {
	v := validator{b: b}
	return v.valid()
}

// validator checks one JSON text (validJSON); with top set it also
// records the members of a top-level object, and ws says whether any
// whitespace stood between tokens.
type validator struct {
	b      []byte
	ws     bool
	top    *topMembers
	keyEnd int // where the last key read ended
}

// topMembers are the spans of a top-level object's first members: key
// (quotes included) and value. over is set when it has more than fit.
type topMembers struct {
	n        int
	over     bool
	key, val [8][2]int
}

// skip skips whitespace at i.
func (v *validator) skip(i int) int {
	j := skipWS(v.b, i)
	if j != i {
		v.ws = true
	}
	return j
}

// recordKey notes the key [from,to) of the top-level member n.
func (v *validator) recordKey(from, to int) {
	t := v.top
	if t.n == len(t.key) {
		t.over = true
		return
	}
	t.key[t.n] = [2]int{from, to}
	t.val[t.n][0] = -1
}

func (v *validator) valid() bool {
	b := v.b
	// stack holds, per open container, whether it is an object.
	var buf [64]bool
	stack := buf[:0]
	i := v.skip(0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		if t := v.top; t != nil && len(stack) == 1 && stack[0] && !t.over { // a member of the top-level object
			v.top.val[v.top.n][0] = i
		}
		switch c := b[i]; c {
		case '{':
			if len(stack) >= maxNesting {
				return false
			}
			i = v.skip(i + 1)
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			stack = append(stack, true)
			k := i
			var ok bool
			if i, ok = v.objectKey(i); !ok {
				return false
			}
			if t := v.top; t != nil && len(stack) == 1 && stack[0] && !t.over { // a member of the top-level object
				v.recordKey(k, v.keyEnd)
			}
			continue
		case '[':
			if len(stack) >= maxNesting {
				return false
			}
			i = v.skip(i + 1)
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
			if t := v.top; t != nil && len(stack) == 1 && stack[0] && !t.over { // a member of the top-level object
				v.top.val[v.top.n][1] = i
				v.top.n++
			}
			i = v.skip(i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			obj := stack[len(stack)-1]
			if b[i] == ',' {
				i = v.skip(i + 1)
				if obj {
					k := i
					var ok bool
					if i, ok = v.objectKey(i); !ok {
						return false
					}
					if t := v.top; t != nil && len(stack) == 1 && stack[0] && !t.over { // a member of the top-level object
						v.recordKey(k, v.keyEnd)
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
// value starts; keyEnd is where the key ended.
func (v *validator) objectKey(i int) (int, bool) {
	b := v.b
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	i, ok := validString(b, i)
	if !ok {
		return 0, false
	}
	v.keyEnd = i
	i = v.skip(i)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return v.skip(i + 1), true
}

// validString checks the string starting at b[i] == '"' and returns its end.
func validString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		// Plain bytes eight at a time: a string's text is most of a log.
		if i = skipPlain(b, i); i >= len(b) {
			break
		}
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

// Eight bytes at a time (the bytes of a word, little-endian).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// skipPlain returns the first index from i, in steps of eight, of a word
// that may hold a byte a string cannot hold as it is: a quote, a
// backslash or a control byte. Bytes past it are for the caller to read
// one by one.
func skipPlain(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (ones * '"')
		bs := x ^ (ones * '\\')
		// A zero byte of q or bs, or a byte of x below 0x20.
		if ((q-ones)&^q|(bs-ones)&^bs|(x-ones*0x20)&^x)&highs != 0 {
			return i
		}
	}
	return i
}
