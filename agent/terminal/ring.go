package terminal

import "unicode/utf8"

// ring keeps the newest max bytes written to it; older bytes are dropped
// (and dropped says so). It grows as written, up to max.
type ring struct {
	max     int
	buf     []byte // len(buf) == max once full
	head    int    // where the oldest byte is, once full
	full    bool
	dropped bool
}

func newRing(max int) *ring { return &ring{max: max} }

// Write appends p, dropping the oldest bytes beyond max.
func (r *ring) Write(p []byte) {
	if len(p) == 0 {
		return
	}
	if len(p) >= r.max {
		r.dropped = r.dropped || len(p) > r.max || r.len() > 0
		r.buf = append(r.buf[:0], p[len(p)-r.max:]...)
		r.head, r.full = 0, len(r.buf) == r.max
		return
	}
	if !r.full {
		if len(r.buf)+len(p) <= r.max {
			r.buf = append(r.buf, p...)
			r.full = len(r.buf) == r.max
			return
		}
		// Becomes full: keep the newest max bytes, in order.
		keep := r.max - len(p)
		old := r.buf[len(r.buf)-keep:]
		nb := make([]byte, r.max)
		copy(nb, old)
		copy(nb[keep:], p)
		r.buf, r.head, r.full, r.dropped = nb, 0, true, true
		return
	}
	r.dropped = true
	n := copy(r.buf[r.head:], p)
	copy(r.buf, p[n:])
	r.head = (r.head + len(p)) % r.max
}

func (r *ring) len() int { return len(r.buf) }

// Bytes returns the kept bytes in order, starting at a character boundary
// when bytes were dropped (a cut character's rest is left out).
func (r *ring) Bytes() []byte {
	var out []byte
	if !r.full {
		out = append(out, r.buf...)
	} else {
		out = make([]byte, 0, r.max)
		out = append(out, r.buf[r.head:]...)
		out = append(out, r.buf[:r.head]...)
	}
	if r.dropped {
		// A cut character leaves at most UTFMax-1 continuation bytes.
		for i := 0; i < utf8.UTFMax-1 && len(out) > 0 && !utf8.RuneStart(out[0]); i++ {
			out = out[1:]
		}
	}
	return out
}

// Reset empties the ring.
func (r *ring) Reset() { r.buf, r.head, r.full, r.dropped = r.buf[:0], 0, false, false }
