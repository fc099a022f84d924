package llm

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Memo keeps a provider's work on the history messages of one
// conversation from one request to the next, so that a step costs what is
// new rather than the whole history: the session log's surface never
// changes a message once it is there, and only a replacement (compaction,
// rewind) changes what is at a position.
//
// Entries are positional: the value made for Messages[i] is reused while
// the message at i is the same bytes (compared with bytes.Equal, which is
// O(1) for the same slice, as the log hands out its cached projections
// until the replace generation moves). From the first position that
// differs on, values are made again. The owner (the provider) is part of
// the key: a request to another provider starts over.
//
// The zero Memo is ready to use; it is safe for concurrent use. A caller
// that sets [Request.Memo] must not modify the bytes of a message after
// passing it.
type Memo struct {
	mu    sync.Mutex
	owner any
	raws  []json.RawMessage
	vals  []any
}

// Each calls use with the value build gives each message of msgs, in
// order, reusing the values an earlier call with the same owner made for
// the same messages at the same positions. use runs under the Memo's lock
// (it may update the values, and must not keep the slice). A nil Memo
// makes every value afresh. The first error of build or use is returned;
// the values made before it are kept.
func (m *Memo) Each(owner any, msgs []json.RawMessage, build func(raw json.RawMessage) (any, error), use func(vals []any) error) error {
	if m == nil {
		vals := make([]any, 0, len(msgs))
		for _, raw := range msgs {
			v, err := build(raw)
			if err != nil {
				return err
			}
			vals = append(vals, v)
		}
		return use(vals)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.owner != owner {
		m.owner, m.raws, m.vals = owner, nil, nil
	}
	keep := 0
	for keep < len(msgs) && keep < len(m.raws) && bytes.Equal(m.raws[keep], msgs[keep]) {
		keep++
	}
	clear(m.raws[keep:])
	clear(m.vals[keep:])
	m.raws, m.vals = m.raws[:keep], m.vals[:keep]
	for _, raw := range msgs[keep:] {
		v, err := build(raw)
		if err != nil {
			return err
		}
		m.raws = append(m.raws, raw)
		m.vals = append(m.vals, v)
	}
	return use(m.vals)
}
