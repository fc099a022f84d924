package jsrules

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// ArrayIndex reports whether k is a canonical array index ("0", "17", …
// below 2³²−1), which JavaScript orders before every other key, and its
// value.
func ArrayIndex(k string) (uint32, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n >= math.MaxUint32 {
		return 0, false
	}
	return uint32(n), true
}

// OwnKeys orders keys (in order of first appearance) as JavaScript
// enumerates an object's own keys: array indexes ascending, then the
// others as they came.
func OwnKeys(keys []string) []string {
	var idx, rest []string
	for _, k := range keys {
		if _, ok := ArrayIndex(k); ok {
			idx = append(idx, k)
		} else {
			rest = append(rest, k)
		}
	}
	slices.SortFunc(idx, func(a, b string) int {
		x, _ := ArrayIndex(a)
		y, _ := ArrayIndex(b)
		return cmp.Compare(x, y)
	})
	return append(idx, rest...)
}

// CompareKeys orders keys as an object built from them in sorted order
// enumerates them: array indexes ascending first, then the others by
// their UTF-16 code units (JavaScript's string order).
func CompareKeys(a, b string) int {
	ia, aIdx := ArrayIndex(a)
	ib, bIdx := ArrayIndex(b)
	switch {
	case aIdx && bIdx:
		return cmp.Compare(ia, ib)
	case aIdx:
		return -1
	case bIdx:
		return 1
	}
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// UTF16Len is the length of s in UTF-16 code units (JavaScript's length).
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// UTF16Prefix is the longest prefix of s of at most n UTF-16 code units
// that does not split a surrogate pair (JavaScript would keep the lone
// half, which a Go string cannot hold), and its length in code units.
func UTF16Prefix(s string, n int) (string, int) {
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

// IsSpace reports whether r is white space to JavaScript (`\s`, what
// String.prototype.trim removes).
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// Trim is s.trim() in JavaScript.
func Trim(s string) string { return strings.TrimFunc(s, IsSpace) }
