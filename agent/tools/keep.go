package tools

import (
	"errors"
	"io"
	"sync"
)

// ErrKeepClosed is returned by [Keep.Get] after [Keep.Close]: the session
// is going away and starts nothing more.
var ErrKeepClosed = errors.New("tools: the session's resources are closed")

// Keep holds what tools start for one session on first use and keep for
// the session's life (the lsp tool's language servers), by key; the
// session closes them all when it closes. The zero value is ready to use;
// it is safe for concurrent use.
type Keep struct {
	mu     sync.Mutex
	held   map[string]io.Closer
	closed bool
}

// Get returns the resource held under key, calling open to make it the
// first time. open runs under the Keep's lock: it must only allocate, not
// block (a resource starts its processes later, on its own first use).
func (k *Keep) Get(key string, open func() io.Closer) (io.Closer, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, ErrKeepClosed
	}
	if r, ok := k.held[key]; ok {
		return r, nil
	}
	if k.held == nil {
		k.held = map[string]io.Closer{}
	}
	r := open()
	k.held[key] = r
	return r, nil
}

// Close closes every resource held, once; later calls of Get fail with
// ErrKeepClosed.
func (k *Keep) Close() error {
	return k.release(true)
}

// Reset closes every resource held and keeps the Keep usable: the next
// Get makes them again (the session's sandbox mode changed, and what was
// started under the old one must not keep its rights).
func (k *Keep) Reset() error {
	return k.release(false)
}

// release closes what is held; closing also refuses later Gets.
func (k *Keep) release(closing bool) error {
	k.mu.Lock()
	held := k.held
	k.held = nil
	if closing {
		k.closed = true
	}
	k.mu.Unlock()
	var errs []error
	for _, r := range held {
		if err := r.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
