package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrMalformed reports a server's answer that is not the shape the
// protocol gives it.
var ErrMalformed = errors.New("lsp: malformed answer")

// position is a zero-based LSP position (UTF-16 character offset).
type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// location is one place an answer names: a URI and the start of its
// range.
type location struct {
	URI   string
	Start position
}

// wireRange is an LSP Range as a server sends it.
type wireRange struct {
	Start *wirePosition `json:"start"`
	End   *wirePosition `json:"end"`
}

// wirePosition is an LSP Position as a server sends it, its members
// checked to be integers of range.
type wirePosition struct {
	Line      json.Number `json:"line"`
	Character json.Number `json:"character"`
}

// valid converts the wire position, refusing what is not a non-negative
// integer.
func (p *wirePosition) valid() (position, bool) {
	if p == nil {
		return position{}, false
	}
	l, err1 := strconv.ParseUint(p.Line.String(), 10, 31)
	c, err2 := strconv.ParseUint(p.Character.String(), 10, 31)
	if err1 != nil || err2 != nil {
		return position{}, false
	}
	return position{Line: int(l), Character: int(c)}, true
}

// rangeStart is the start of a valid range.
func (r *wireRange) rangeStart() (position, bool) {
	if r == nil {
		return position{}, false
	}
	s, ok := r.Start.valid()
	if _, ok2 := r.End.valid(); !ok || !ok2 {
		return position{}, false
	}
	return s, true
}

// decodeLocations reduces the answer to textDocument/definition,
// references or implementation — null, a Location, or an array of
// Locations or LocationLinks — to its locations, in order. A LocationLink
// names its targetUri at its targetSelectionRange.
func decodeLocations(raw json.RawMessage) ([]location, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: no result", ErrMalformed)
	}
	if string(raw) == "null" {
		return nil, nil
	}
	var elems []json.RawMessage
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &elems); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
	} else {
		elems = []json.RawMessage{raw}
	}
	out := make([]location, 0, len(elems))
	for _, e := range elems {
		var w struct {
			URI                  *string    `json:"uri"`
			Range                *wireRange `json:"range"`
			TargetURI            *string    `json:"targetUri"`
			TargetSelectionRange *wireRange `json:"targetSelectionRange"`
		}
		e = bytes.TrimSpace(e)
		if len(e) == 0 || e[0] != '{' {
			return nil, fmt.Errorf("%w: a location that is not an object", ErrMalformed)
		}
		if err := json.Unmarshal(e, &w); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if w.TargetURI != nil {
			if s, ok := w.TargetSelectionRange.rangeStart(); ok {
				out = append(out, location{URI: *w.TargetURI, Start: s})
				continue
			}
		}
		if w.URI != nil {
			if s, ok := w.Range.rangeStart(); ok {
				out = append(out, location{URI: *w.URI, Start: s})
				continue
			}
		}
		return nil, fmt.Errorf("%w: an entry that is neither a Location nor a LocationLink", ErrMalformed)
	}
	return out, nil
}

// decodeHover reduces the answer to textDocument/hover to its text: ""
// for null or empty contents. MarkupContent gives its value, a
// MarkedString its text or a fenced block in its language, an array its
// parts joined by an empty line.
func decodeHover(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", fmt.Errorf("%w: no result", ErrMalformed)
	}
	if string(raw) == "null" {
		return "", nil
	}
	if raw[0] != '{' {
		return "", fmt.Errorf("%w: a hover that is not an object", ErrMalformed)
	}
	var h struct {
		Contents json.RawMessage `json:"contents"`
		Range    *wireRange      `json:"range"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if h.Range != nil {
		if _, ok := h.Range.rangeStart(); !ok {
			return "", fmt.Errorf("%w: a hover with a malformed range", ErrMalformed)
		}
	}
	c := bytes.TrimSpace(h.Contents)
	if len(c) == 0 || string(c) == "null" {
		return "", fmt.Errorf("%w: a hover without contents", ErrMalformed)
	}
	switch c[0] {
	case '"':
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return "", fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		return s, nil
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(c, &parts); err != nil {
			return "", fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		texts := make([]string, 0, len(parts))
		for _, p := range parts {
			s, ok := markedString(p)
			if !ok {
				return "", fmt.Errorf("%w: hover contents with a malformed MarkedString", ErrMalformed)
			}
			texts = append(texts, s)
		}
		return strings.Join(texts, "\n\n"), nil
	case '{':
		var m struct {
			Kind     *string `json:"kind"`
			Language *string `json:"language"`
			Value    *string `json:"value"`
		}
		if err := json.Unmarshal(c, &m); err != nil {
			return "", fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if m.Kind != nil && (*m.Kind == "markdown" || *m.Kind == "plaintext") && m.Value != nil {
			return *m.Value, nil
		}
		if s, ok := markedString(c); ok {
			return s, nil
		}
	}
	return "", fmt.Errorf("%w: hover contents that are neither MarkupContent nor MarkedString", ErrMalformed)
}

// markedString renders one MarkedString: a string as is, {language,
// value} as a fenced block.
func markedString(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var m struct {
		Language *string `json:"language"`
		Value    *string `json:"value"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Language == nil || m.Value == nil {
		return "", false
	}
	return "```" + *m.Language + "\n" + *m.Value + "\n```", true
}

// formatLocations renders locations one per line as path:line:character
// (one-based), grouped by file in the order each file first appears, at
// most maxLocations of them followed by a note of how many were left
// out; the whole within maxChars (boundText). roots are the workspace as
// the session names it and with its links resolved (see displayPath).
func formatLocations(locs []location, roots []string, maxLocations, maxChars int) string {
	if len(locs) == 0 {
		return boundText("No results.", maxChars, "locations")
	}
	shown := locs[:min(len(locs), maxLocations)]
	var order []string
	byPath := map[string][]string{}
	for _, l := range shown {
		p := displayPath(l.URI, roots)
		if _, ok := byPath[p]; !ok {
			order = append(order, p)
		}
		byPath[p] = append(byPath[p], fmt.Sprintf("%s:%d:%d", p, l.Start.Line+1, l.Start.Character+1))
	}
	var lines []string
	for _, p := range order {
		lines = append(lines, byPath[p]...)
	}
	if n := len(locs) - len(shown); n > 0 {
		s := "s"
		if n == 1 {
			s = ""
		}
		lines = append(lines, fmt.Sprintf("… %d more location%s omitted (limit %d).", n, s, maxLocations))
	}
	return boundText(strings.Join(lines, "\n"), maxChars, "locations")
}

// formatHover renders a hover's text, or says there is none.
func formatHover(text string, maxChars int) string {
	if text == "" {
		text = "No hover information."
	}
	return boundText(text, maxChars, "hover")
}

// boundText cuts text to maxChars UTF-16 code units, the truncation note
// included, never inside a character.
func boundText(text string, maxChars int, label string) string {
	if utf16Len(text) <= maxChars {
		return text
	}
	note := fmt.Sprintf("\n… %s truncated (limit %d characters).", label, maxChars)
	if utf16Len(note) >= maxChars {
		return prefixUTF16(note, maxChars)
	}
	return prefixUTF16(text, maxChars-utf16Len(note)) + note
}

// utf16Len is the length of s in UTF-16 code units (JavaScript's
// String.length, the unit of the reference's caps).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}

// prefixUTF16 is the longest prefix of s of at most n UTF-16 code units
// that ends on a character boundary.
func prefixUTF16(s string, n int) string {
	used := 0
	for i, r := range s {
		w := max(utf16.RuneLen(r), 1)
		if used+w > n {
			return s[:i]
		}
		used += w
	}
	return s
}

// displayPath is how a location's URI is shown: a file: URI beneath one
// of roots as a path relative to it ("." for the root), another file: URI
// as its absolute path, anything else as given. Locations outside the
// workspace are shown, not refused: they name what the code uses (a
// library's declaration, the standard library), which the model may want
// to read; reel reads none of them. A path or URI holding a control
// character, or one that is not UTF-8, is shown quoted (Go syntax) so it
// cannot forge a line of the result.
func displayPath(uri string, roots []string) string {
	p, ok := filePath(uri)
	if !ok {
		return quoteUnsafe(uri)
	}
	for _, r := range roots {
		if r == "" {
			continue
		}
		if rel, err := filepath.Rel(r, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel) {
			return quoteUnsafe(rel)
		}
	}
	return quoteUnsafe(p)
}

// filePath is the local path of a file: URI (no host, or localhost).
func filePath(uri string) (string, bool) {
	if !strings.HasPrefix(uri, "file:") {
		return "", false
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.Opaque != "" {
		return "", false
	}
	p := u.Path
	if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return "", false
	}
	return filepath.Clean(p), true
}

// quoteUnsafe returns s, or s quoted when it holds a control character or
// is not UTF-8.
func quoteUnsafe(s string) string {
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == 0x2028 || r == 0x2029 }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// fileURI is the file: URI of the absolute path p.
func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}
