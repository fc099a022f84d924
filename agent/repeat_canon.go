package agent

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/reel-agent/reel/sessionlog"
)

// canonicalArguments is the canonical form of a tool call's raw arguments
// as the reference agent computes it: the JSON value with every object's
// keys sorted, written as JavaScript's JSON.stringify writes it; arguments
// that are not JSON are the JSON string of their raw text.
func canonicalArguments(raw string) string {
	if !json.Valid([]byte(raw)) {
		return string(sessionlog.AppendString(nil, raw))
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(sessionlog.AppendString(nil, raw))
	}
	return string(appendJS(nil, v))
}

// appendJS appends v as JSON.stringify writes a value JSON.parse made:
// objects with their keys in JavaScript's own-property order (array-index
// keys ascending, then the rest in order — here sorted by UTF-16 code
// units), numbers as JavaScript prints a double.
func appendJS(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case json.Number:
		// JSON.parse makes a double of every number; one beyond its range
		// is Infinity, which JSON.stringify writes as null.
		f, _ := strconv.ParseFloat(string(v), 64)
		if math.IsInf(f, 0) {
			return append(b, "null"...)
		}
		return append(b, jsNumber(f)...)
	case string:
		return sessionlog.AppendString(b, v)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJS(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareJSKeys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = sessionlog.AppendString(b, k)
			b = append(b, ':')
			b = appendJS(b, v[k])
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}

// compareJSKeys orders object keys as a JavaScript object that was built
// from sorted keys enumerates them: array indexes first, numerically, then
// the other keys by UTF-16 code units (Array.prototype.sort's order).
func compareJSKeys(a, b string) int {
	ia, aIdx := arrayIndex(a)
	ib, bIdx := arrayIndex(b)
	switch {
	case aIdx && bIdx:
		return cmpUint(ia, ib)
	case aIdx:
		return -1
	case bIdx:
		return 1
	}
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// arrayIndex reports whether k is a canonical array index ("0", "17", …
// below 2³²−1) and its value.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n >= math.MaxUint32 {
		return 0, false
	}
	return n, true
}

// jsNumber formats f as JavaScript's Number.prototype.toString does (the
// shortest digits that round-trip, plain up to 21 digits, exponent
// notation beyond, "-0" as "0").
func jsNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	var sign string
	if f < 0 {
		sign, f = "-", -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±x
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k, n := len(digits), x+1
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		es := "+"
		if n-1 < 0 {
			es = "-"
		}
		abs := n - 1
		if abs < 0 {
			abs = -abs
		}
		s = digits[:1]
		if k > 1 {
			s += "." + digits[1:]
		}
		s += "e" + es + strconv.Itoa(abs)
	}
	return sign + s
}

// utf16Len is the length of s in UTF-16 code units (JavaScript's length).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// utf16Prefix is the longest prefix of s of at most n UTF-16 code units
// that does not split a surrogate pair, and its length in code units.
func utf16Prefix(s string, n int) (string, int) {
	units := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			return s[:i], units
		}
		units += w
	}
	return s, units
}

// jsField is one member of an object appendJSObject writes: a string, an
// int or a list of strings.
type jsField struct {
	key string
	val any // string, int or []string
}

// appendJSObject appends {"key":val,…} in field order, as JSON.stringify
// writes an object literal.
func appendJSObject(b []byte, fields ...jsField) []byte {
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = sessionlog.AppendString(b, f.key)
		b = append(b, ':')
		switch v := f.val.(type) {
		case string:
			b = sessionlog.AppendString(b, v)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case []string:
			b = append(b, '[')
			for j, s := range v {
				if j > 0 {
					b = append(b, ',')
				}
				b = sessionlog.AppendString(b, s)
			}
			b = append(b, ']')
		}
	}
	return append(b, '}')
}
