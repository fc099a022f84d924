package terminal

import (
	"bytes"
	"crypto/subtle"
)

// promptMarker starts the content of the private OSC sequence
// PROMPT_COMMAND prints before every prompt: `133;D;STATUS;NONCE`, the
// command's exit status and the terminal's nonce (see [Sanitizer.Nonce]).
const promptMarker = "133;D;"

// maxOSC bounds what of one OSC sequence's content the sanitizer keeps to
// recognize a marker: the prefix, a status of up to 3 digits, a separator
// and a nonce of up to maxNonce bytes.
const (
	maxNonce = 64
	maxOSC   = len(promptMarker) + 3 + 1 + maxNonce
)

// Prompt is the shell's prompt (PS1).
const Prompt = "reel> "

// Sanitizer turns what a PTY prints into line-oriented text, one chunk at
// a time: escape sequences are removed (split ones included), CR LF and a
// lone CR become LF, BEL is dropped, and every other byte is kept. It
// holds no more than a few bytes between chunks, however long a sequence
// runs. The zero value is ready to use; it is not safe for concurrent use.
type Sanitizer struct {
	// Nonce, when set, is the terminal's secret part of the prompt
	// marker: only an OSC `133;D;STATUS;NONCE` counts as one, so output
	// that prints a marker without it (a log of another terminal, a
	// command imitating the shell) does not. Unset, any OSC starting
	// `133;D;` counts. It is at most 64 bytes.
	Nonce string

	state   sanState
	osc     [maxOSC]byte // the start of the OSC content
	oscN    int          // bytes of it kept; maxOSC+1: too long to be a marker
	pending bool         // a CR ended the previous chunk
	// tail is what was printed since the last prompt marker, up to
	// len(Prompt)+1 bytes.
	tail   []byte
	marked bool // a prompt marker was seen (and not reset since)
}

type sanState uint8

const (
	sText   sanState = iota
	sEsc             // after ESC
	sCSI             // in ESC [ … final
	sOSC             // in ESC ] … BEL or ESC \
	sOSCEsc          // ESC seen inside an OSC
)

// Push cleans one chunk and returns its text; prompt reports that a prompt
// marker ended in it.
func (s *Sanitizer) Push(chunk []byte) (text []byte, prompt bool) {
	out := make([]byte, 0, len(chunk)+1)
	emit := func(b byte) {
		out = append(out, b)
		if s.marked && len(s.tail) <= len(Prompt) {
			s.tail = append(s.tail, b)
		}
	}
	for _, b := range chunk {
		switch s.state {
		case sText:
			if s.pending {
				s.pending = false
				emit('\n')
				if b == '\n' {
					continue
				}
			}
			switch b {
			case 0x1b:
				s.state = sEsc
			case '\r':
				s.pending = true
			case 0x07:
			default:
				emit(b)
			}
		case sEsc:
			switch b {
			case '[':
				s.state = sCSI
			case ']':
				s.state, s.oscN = sOSC, 0
			case 0x1b:
				// ESC ESC: the first is dropped, the second starts anew.
			default:
				s.state = sText
			}
		case sCSI:
			if b >= 0x40 && b <= 0x7e {
				s.state = sText
			}
		case sOSC, sOSCEsc:
			switch {
			case b == 0x07 || s.state == sOSCEsc && b == '\\':
				if s.oscN <= maxOSC && s.isMarker(s.osc[:s.oscN]) {
					prompt, s.marked, s.tail = true, true, s.tail[:0]
				}
				s.state = sText
			case b == 0x1b:
				s.state = sOSCEsc
			default:
				s.state = sOSC
				if s.oscN < len(s.osc) {
					s.osc[s.oscN] = b
					s.oscN++
				} else {
					s.oscN = len(s.osc) + 1 // too long for the marker; keep discarding
				}
			}
		}
	}
	return out, prompt
}

// isMarker reports whether an OSC's content is the prompt marker: the
// prefix, an exit status of digits and, when the sanitizer has a nonce,
// `;NONCE` after it.
func (s *Sanitizer) isMarker(content []byte) bool {
	rest, ok := bytes.CutPrefix(content, []byte(promptMarker))
	if !ok {
		return false
	}
	if s.Nonce == "" {
		return true
	}
	status, nonce, ok := bytes.Cut(rest, []byte{';'})
	if !ok || len(status) == 0 || len(status) > 3 {
		return false
	}
	for _, c := range status {
		if c < '0' || c > '9' {
			return false
		}
	}
	return subtle.ConstantTimeCompare(nonce, []byte(s.Nonce)) == 1
}

// AtPrompt reports whether a prompt marker was seen and exactly the prompt
// was printed after it (nothing more yet).
func (s *Sanitizer) AtPrompt() bool { return s.marked && string(s.tail) == Prompt }

// Reset forgets the prompt marker (before new input is written).
func (s *Sanitizer) Reset() { s.marked, s.tail = false, s.tail[:0] }

// Flush returns what a CR at the very end left pending, at the end of the
// output.
func (s *Sanitizer) Flush() []byte {
	if s.pending {
		s.pending = false
		return []byte{'\n'}
	}
	return nil
}
