package normalize

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Placeholders written in place of run-specific values.
const (
	// Cwd replaces the scenario's cwd.
	Cwd = "{{cwd}}"
	// Time replaces an ISO-8601 timestamp string.
	Time = "{{time}}"
)

// minSubstring is the shortest session id or message id that is also
// replaced where it occurs inside a longer string; shorter ones are only
// replaced where they are a whole value.
const minSubstring = 8

// Options says what is run-specific besides the built-in rules.
type Options struct {
	// Cwd is the scenario's working directory, replaced by {{cwd}}
	// wherever it occurs in a string. "" and "/" are ignored.
	Cwd string
	// TempDirs are replaced by {{tmp}}, {{tmp2}}, … (in this order)
	// wherever they occur in a string. "" and "/" are ignored.
	TempDirs []string
	// SessionKeys are extra object keys whose string values are session ids.
	SessionKeys []string
	// IDKeys are extra object keys whose UUID values are message ids.
	IDKeys []string
	// ZeroKeys are extra object keys whose numeric values become 0.
	ZeroKeys []string
}

// defaultZeroKeys are the keys whose numbers (and arrays of numbers) are
// timestamps, time deltas, process ids or durations.
func defaultZeroKeys() []string {
	return []string{
		"time", "time0", "dt", "createdAt", "updatedAt", "startedAt", "endedAt", "finishedAt", "timestamp",
		"pid", "ppid",
		"durationMs", "elapsedMs", "latencyMs", "wall_ms", "duration_ms", "elapsed_ms",
	}
}

// Normalizer rewrites the lines of one run. It is stateful: session ids and
// message ids are numbered in order of first appearance across every line
// it sees, so one run normalizes to the same bytes every time. A Normalizer
// is not safe for concurrent use.
type Normalizer struct {
	literals    []pair // cwd and temp dirs, in priority order
	sessionKeys []string
	idKeys      []string
	zeroKeys    []string

	sessions map[string]string // session id → placeholder
	ids      map[string]string // message id → placeholder
	known    []pair            // sessions and ids in registration order
	replacer *strings.Replacer // nil when stale

	// listed are the session ids of the paged session/list listing under
	// way (listing.go), in listing order; inListing says the last list
	// answer had a nextCursor.
	listed    []string
	inListing bool
}

type pair struct{ old, new string }

// New returns a Normalizer for one run.
func New(opts Options) *Normalizer {
	n := &Normalizer{
		sessionKeys: slices.Clone(opts.SessionKeys),
		idKeys:      slices.Clone(opts.IDKeys),
		zeroKeys:    append(defaultZeroKeys(), opts.ZeroKeys...),
		sessions:    make(map[string]string),
		ids:         make(map[string]string),
	}
	add := func(dir, placeholder string) {
		if len(dir) > 1 {
			dir = strings.TrimRight(dir, "/")
		}
		if dir != "" && dir != "/" {
			n.literals = append(n.literals, pair{dir, placeholder})
		}
	}
	add(opts.Cwd, Cwd)
	for i, d := range opts.TempDirs {
		p := "{{tmp}}"
		if i > 0 {
			p = "{{tmp" + strconv.Itoa(i+1) + "}}"
		}
		add(d, p)
	}
	return n
}

// Line normalizes one line: a JSON value (an object of the wire transcript
// or a session log record) is rewritten and written back compact, with keys
// in their original order and untouched scalars byte for byte; anything
// else only has the known literals (cwd, temp dirs, ids seen so far)
// replaced. A trailing "\n" or "\r\n" is kept.
func (n *Normalizer) Line(line []byte) []byte {
	body, eol := splitEOL(line)
	if len(bytes.TrimSpace(body)) == 0 {
		return slices.Clone(line)
	}
	var out []byte
	if json.Valid(body) {
		if v, ok := parse(body); ok {
			n.register(v)
			n.listing(v)
			out = n.emit(nil, v, "")
		}
	}
	if out == nil {
		out = []byte(n.replace(string(body)))
	}
	return append(out, eol...)
}

// Transcript normalizes every line read from r and returns the result.
func (n *Normalizer) Transcript(r io.Reader) ([]byte, error) {
	br := bufio.NewReader(r)
	var out []byte
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			out = append(out, n.Line(line)...)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("normalize: reading transcript: %w", err)
		}
	}
}

func splitEOL(line []byte) (body, eol []byte) {
	if b, ok := bytes.CutSuffix(line, []byte("\r\n")); ok {
		return b, line[len(b):]
	}
	if b, ok := bytes.CutSuffix(line, []byte("\n")); ok {
		return b, line[len(b):]
	}
	return line, nil
}

// register numbers the session ids, then the message ids, of one line in
// document order.
func (n *Normalizer) register(root *value) {
	var walk func(v *value, depth int, ids bool)
	walk = func(v *value, depth int, ids bool) {
		switch v.kind {
		case kArray:
			for _, e := range v.elems {
				walk(e, depth+1, ids)
			}
		case kObject:
			header := depth == 0 && isSessionHeader(v)
			for _, m := range v.members {
				if m.val.kind == kString {
					s := m.val.str
					switch {
					case !ids && (n.isSessionKey(m.key) || (header && m.key == "id")):
						n.addSession(s)
					case ids && n.isIDKey(m.key) && isUUID(s):
						n.addID(s)
					}
				}
				walk(m.val, depth+1, ids)
			}
		}
	}
	walk(root, 0, false)
	walk(root, 0, true)
}

// isSessionHeader reports whether an object is a session log header
// ({"type":"session",…}), whose "id" is the session id.
func isSessionHeader(v *value) bool {
	for _, m := range v.members {
		if m.key == "type" && m.val.kind == kString && m.val.str == "session" {
			return true
		}
	}
	return false
}

func isPlaceholder(s string) bool {
	return strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}")
}

func (n *Normalizer) addSession(s string) {
	if s == "" || isPlaceholder(s) || n.sessions[s] != "" {
		return
	}
	p := "{{sessionId}}"
	if k := len(n.sessions) + 1; k > 1 {
		p = "{{sessionId" + strconv.Itoa(k) + "}}"
	}
	n.sessions[s] = p
	n.known = append(n.known, pair{s, p})
	n.replacer = nil
}

func (n *Normalizer) addID(s string) {
	if n.sessions[s] != "" || n.ids[s] != "" {
		return
	}
	p := "{{id:" + strconv.Itoa(len(n.ids)+1) + "}}"
	n.ids[s] = p
	n.known = append(n.known, pair{s, p})
	n.replacer = nil
}

func (n *Normalizer) isSessionKey(k string) bool {
	return k == "sessionId" || k == "session_id" || k == "parentSession" ||
		strings.HasSuffix(k, "SessionId") || slices.Contains(n.sessionKeys, k)
}

func (n *Normalizer) isIDKey(k string) bool {
	return k == "id" || strings.HasSuffix(k, "Id") || strings.HasSuffix(k, "ID") ||
		strings.HasSuffix(k, "_id") || slices.Contains(n.idKeys, k)
}

// replace substitutes a whole known id, then every literal and every long
// enough known id inside s.
func (n *Normalizer) replace(s string) string {
	if p := n.sessions[s]; p != "" {
		return p
	}
	if p := n.ids[s]; p != "" {
		return p
	}
	if n.replacer == nil {
		pairs := slices.Clone(n.literals)
		for _, k := range n.known {
			if len(k.old) >= minSubstring {
				pairs = append(pairs, k)
			}
		}
		// Longest first, so a cwd inside a temp dir wins over the temp dir;
		// the stable sort keeps the priority order among equal lengths.
		slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(len(b.old), len(a.old)) })
		args := make([]string, 0, 2*len(pairs))
		for _, p := range pairs {
			args = append(args, p.old, p.new)
		}
		n.replacer = strings.NewReplacer(args...)
	}
	return n.replacer.Replace(s)
}

// emit appends the normalized value; key is the object key the value
// belongs to (array elements inherit their array's key).
func (n *Normalizer) emit(dst []byte, v *value, key string) []byte {
	switch v.kind {
	case kObject:
		dst = append(dst, '{')
		for i, m := range v.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			if k := n.replace(m.key); k != m.key {
				dst = appendString(dst, k)
			} else {
				dst = append(dst, m.rawKey...)
			}
			dst = append(dst, ':')
			dst = n.emit(dst, m.val, m.key)
		}
		return append(dst, '}')
	case kArray:
		dst = append(dst, '[')
		for i, e := range v.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = n.emit(dst, e, key)
		}
		return append(dst, ']')
	case kString:
		if isISOTime(v.str) {
			return appendString(dst, Time)
		}
		if s := n.replace(v.str); s != v.str {
			return appendString(dst, s)
		}
		return append(dst, v.raw...)
	case kNumber:
		if slices.Contains(n.zeroKeys, key) {
			return append(dst, '0')
		}
		return append(dst, v.raw...)
	default:
		return append(dst, v.raw...)
	}
}

// isUUID reports whether s is a textual UUID (8-4-4-4-12 hex digits).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// isISOTime reports whether s is an ISO-8601 date-time:
// YYYY-MM-DDTHH:MM[:SS[.fraction]][Z|±HH[:]MM].
func isISOTime(s string) bool {
	digits := func(k int) bool {
		if len(s) < k {
			return false
		}
		for i := 0; i < k; i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		s = s[k:]
		return true
	}
	lit := func(c byte) bool {
		if len(s) == 0 || s[0] != c {
			return false
		}
		s = s[1:]
		return true
	}
	if !(digits(4) && lit('-') && digits(2) && lit('-') && digits(2) && (lit('T') || lit('t')) && digits(2) && lit(':') && digits(2)) {
		return false
	}
	if lit(':') {
		if !digits(2) {
			return false
		}
		if lit('.') || lit(',') {
			if !digits(1) {
				return false
			}
			more := true
			for more {
				more = digits(1)
			}
		}
	}
	switch {
	case s == "":
		return true
	case lit('Z') || lit('z'):
		return s == ""
	case lit('+') || lit('-'):
		if !digits(2) {
			return false
		}
		lit(':')
		return digits(2) && s == ""
	}
	return false
}
