package sessionlog

import "encoding/json"

// messageCache holds the projections of the surface in order. It grows with
// appends and is rebuilt only when the replace generation moves.
type messageCache struct {
	gen   int
	valid bool
	msgs  []json.RawMessage
}

// Messages returns the derived model messages of the current surface, in
// order. The result shares storage with the cache and is capped, so callers
// may append to it without affecting the log; they must not modify entries.
func (l *Log) Messages() []json.RawMessage {
	c := &l.msgs
	seqs := l.surface.seqs
	if !c.valid || c.gen != l.surface.gen {
		c.msgs = make([]json.RawMessage, 0, len(seqs))
		c.gen, c.valid = l.surface.gen, true
	}
	for _, seq := range seqs[len(c.msgs):] {
		m, _ := ProjectMessage(&l.events[seq]) // validated at append
		c.msgs = append(c.msgs, m)
	}
	return c.msgs[:len(c.msgs):len(c.msgs)]
}

// pairingCache holds, for each surface cut k (before position k, 0…len), the
// number of tool calls opened before the cut whose results come after it.
type pairingCache struct {
	gen     int
	valid   bool
	balance []int // len(surface)+1 entries once filled
}

// PairingBalance returns the tool-pairing balance per surface cut: entry k is
// the number of tool calls made before surface position k whose results are
// at or after it. A cut with balance 0 never separates a call from its
// result. Balances are cached in surface order and extended incrementally;
// a replacement rebuilds them. The slice is shared: do not modify it.
func (l *Log) PairingBalance() []int {
	c := &l.pairs
	seqs := l.surface.seqs
	if !c.valid || c.gen != l.surface.gen {
		c.balance = append(make([]int, 0, len(seqs)+1), 0)
		c.gen, c.valid = l.surface.gen, true
	}
	for k := len(c.balance) - 1; k < len(seqs); k++ {
		b := c.balance[k] + pairingDelta(&l.events[seqs[k]])
		if b < 0 {
			b = 0 // a result whose call was summarized away
		}
		c.balance = append(c.balance, b)
	}
	return c.balance
}

// pairingDelta is +calls for an assistant message, -results for a tool result.
func pairingDelta(e *Event) int {
	raw, err := ProjectMessage(e)
	if err != nil {
		return 0
	}
	m, err := ParseMessage(raw)
	if err != nil {
		return 0
	}
	d := 0
	for _, p := range m.Content {
		switch p.Type {
		case "tool-call":
			d++
		case "tool-result":
			d--
		}
	}
	return d
}
