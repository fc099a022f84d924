package termtext

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// escaped reports whether the character r (decoded from valid UTF-8) is
// shown as an escape.
func escaped(r rune) bool {
	switch {
	case r == '\n', r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r < 0x80:
		return false
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// Escape returns s with every character a terminal would act on, or that
// hides or reorders text, shown as an escape (see the package doc).
// Newlines and tabs stay.
func Escape(s string) string {
	if clean(s) {
		return s
	}
	return string(appendEscaped(make([]byte, 0, len(s)+16), s))
}

// clean reports whether s passes unchanged: no escaped character, no
// invalid UTF-8 and no backslash that needs escaping.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 0x20 && b < 0x7f && b != '\\' || b == '\n' || b == '\t' {
			continue
		}
		return false
	}
	return true
}

// appendEscaped appends Escape(s) to dst.
func appendEscaped[T string | []byte](dst []byte, s T) []byte {
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '\\' && i+2 < len(s) && (s[i+1] == 'x' || s[i+1] == 'u') && s[i+2] == '{':
				dst = appendByte(dst, b)
			case escaped(rune(b)):
				dst = appendByte(dst, b)
			default:
				dst = append(dst, b)
			}
			i++
			continue
		}
		r, n := decodeRune(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = appendByte(dst, b)
		case escaped(r):
			dst = append(dst, `\u{`...)
			dst = strconv.AppendUint(dst, uint64(r), 16)
			dst = append(dst, '}')
		default:
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

func decodeRune[T string | []byte](s T) (rune, int) {
	switch s := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(s)
	case []byte:
		return utf8.DecodeRune(s)
	}
	panic("unreachable")
}

// appendByte appends the escape \x{HH} of one byte.
func appendByte(dst []byte, b byte) []byte {
	return append(dst, '\\', 'x', '{', hexDigits[b>>4], hexDigits[b&0xf], '}')
}

// ErrMalformed reports a backslash followed by "x{" or "u{" that does not
// form an escape Escape writes.
var ErrMalformed = errors.New("termtext: malformed escape")

// Unescape returns the text that Escape turned into s: Unescape(Escape(t))
// is t for every t. An escape Escape would not write is an error wrapping
// ErrMalformed, naming its offset.
func Unescape(s string) (string, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] != '\\' || i+2 >= len(s) || s[i+2] != '{' || (s[i+1] != 'x' && s[i+1] != 'u') {
			out = append(out, s[i])
			i++
			continue
		}
		end := i + 3
		for end < len(s) && end-i-3 <= 6 && isHex(s[end]) {
			end++
		}
		digits := s[i+3 : end]
		if end >= len(s) || s[end] != '}' || len(digits) == 0 {
			return "", fmt.Errorf("%w at byte %d: %q", ErrMalformed, i, s[i:min(len(s), end+1)])
		}
		v, _ := strconv.ParseUint(digits, 16, 32)
		switch s[i+1] {
		case 'x':
			if len(digits) != 2 {
				return "", fmt.Errorf("%w at byte %d: %q wants two hex digits", ErrMalformed, i, s[i:end+1])
			}
			out = append(out, byte(v))
		case 'u':
			r := rune(v)
			if v > unicode.MaxRune || !utf8.ValidRune(r) || r < 0x80 {
				return "", fmt.Errorf("%w at byte %d: %q is not a multi-byte character", ErrMalformed, i, s[i:end+1])
			}
			out = utf8.AppendRune(out, r)
		}
		i = end + 1
	}
	return string(out), nil
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f'
}

// EscapeJSON rewrites, in JSON text b, DEL and every non-ASCII character
// Escape would escape as a \uXXXX JSON escape (a surrogate pair beyond
// U+FFFF), and a byte of invalid UTF-8 as \ufffd, which is what a JSON
// decoder reads it as. In valid JSON these occur only inside strings, so
// the result decodes to exactly the values b does; C0 controls are left
// alone, since valid JSON has them only as whitespace between tokens.
func EscapeJSON(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < 0x7f {
		i++
	}
	if i == len(b) {
		return b
	}
	out := append(make([]byte, 0, len(b)+16), b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case r == 0x7f || r >= 0x80 && escaped(r):
			if r > 0xffff {
				hi, lo := 0xd800+(r-0x10000)>>10, 0xdc00+(r-0x10000)&0x3ff
				out = appendU4(appendU4(out, hi), lo)
			} else {
				out = appendU4(out, r)
			}
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// appendU4 appends the JSON escape \uXXXX of a UTF-16 code unit.
func appendU4(dst []byte, u rune) []byte {
	return append(dst, '\\', 'u', hexDigits[u>>12&0xf], hexDigits[u>>8&0xf], hexDigits[u>>4&0xf], hexDigits[u&0xf])
}

// Writer escapes everything written through it, as Escape, onto an
// underlying writer. A trailing partial UTF-8 character, or a trailing
// backslash whose escaping depends on what follows, is held back until the
// next Write or Flush, so the output is Escape of all the bytes written,
// however they were cut into writes. It is safe for concurrent use; each
// Write reaches the underlying writer in one call.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer escaping onto w. If w is already a *Writer,
// it is returned as is, so that layers which each protect their output
// (cmd/reel's stderr, a command's stdout) never escape text twice; a Flush
// through either layer then flushes the one Writer.
func NewWriter(w io.Writer) *Writer {
	if tw, ok := w.(*Writer); ok {
		return tw
	}
	return &Writer{w: w}
}

// Write escapes p (after any bytes held back) onto the underlying writer.
// It reports len(p) unless the underlying writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	buf := append(w.pending, p...)
	cut := safeCut(buf)
	out := appendEscaped(make([]byte, 0, cut+16), buf[:cut])
	w.pending = append(w.pending[:0:0], buf[cut:]...)
	if len(out) > 0 {
		if _, err := w.w.Write(out); err != nil {
			return 0, fmt.Errorf("termtext: write: %w", err)
		}
	}
	return len(p), nil
}

// Flush writes the bytes held back, escaped as the end of the text.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	out := appendEscaped(nil, w.pending)
	w.pending = nil
	if _, err := w.w.Write(out); err != nil {
		return fmt.Errorf("termtext: flush: %w", err)
	}
	return nil
}

// safeCut is the length of the prefix of buf whose escaping cannot change
// with what is written next: it leaves out a trailing partial UTF-8
// character and a trailing "\", "\x" or "\u".
func safeCut(buf []byte) int {
	n := len(buf)
	for back := 1; back <= utf8.UTFMax-1 && back <= n; back++ {
		c := buf[n-back]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(buf[n-back:]) {
				return n - back
			}
			break
		}
	}
	switch {
	case n >= 1 && buf[n-1] == '\\':
		return n - 1
	case n >= 2 && buf[n-2] == '\\' && (buf[n-1] == 'x' || buf[n-1] == 'u'):
		return n - 2
	}
	return n
}
