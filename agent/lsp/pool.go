package lsp

import (
	"context"
	"sync"

	"github.com/reel-agent/reel/agent/tools"
)

// keepKey is the pool's key in a session's tools.Keep.
const keepKey = "lsp"

// pool is one session's language servers: at most one per configured
// server and workspace, started on the first call that needs it, stopped
// when the session closes (Close). A server found dead, or started under
// another sandbox mode than the call's, is stopped and started again.
type pool struct {
	mu      sync.Mutex
	servers map[poolKey]*slot
	closed  bool
}

// poolKey names a server for a workspace root.
type poolKey struct{ name, root string }

// slot is a server being started (ready open) or running.
type slot struct {
	ready chan struct{} // closed when the start ended
	srv   *server       // set before ready closes; nil when it failed
	err   error
}

// get returns the running server of cfg for root under env's mode,
// starting it within ctx when there is none. Concurrent calls share one
// start.
func (p *pool) get(ctx context.Context, cfg *Server, c *Config, env *tools.Env, root string) (*server, error) {
	k := poolKey{cfg.Name, root}
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, tools.ErrKeepClosed
		}
		sl, ok := p.servers[k]
		if !ok {
			sl = &slot{ready: make(chan struct{})}
			if p.servers == nil {
				p.servers = map[poolKey]*slot{}
			}
			p.servers[k] = sl
			p.mu.Unlock()
			sl.srv, sl.err = startServer(ctx, cfg, c, env, root)
			close(sl.ready)
			p.mu.Lock()
			closed := p.closed
			if sl.err != nil && p.servers[k] == sl {
				delete(p.servers, k)
			}
			p.mu.Unlock()
			if closed && sl.srv != nil {
				sl.srv.stop()
				return nil, tools.ErrKeepClosed
			}
			return sl.srv, sl.err
		}
		p.mu.Unlock()
		select {
		case <-sl.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if sl.err != nil {
			// Another call's start failed; start again for this one.
			continue
		}
		if !sl.srv.dead() && sl.srv.mode == env.Mode {
			return sl.srv, nil
		}
		p.drop(k, sl)
	}
}

// drop stops the server of sl and forgets it, unless another took its
// place.
func (p *pool) drop(k poolKey, sl *slot) {
	p.mu.Lock()
	if p.servers[k] == sl {
		delete(p.servers, k)
	}
	p.mu.Unlock()
	if sl.srv != nil {
		sl.srv.stop()
	}
}

// Close stops every server and refuses new ones. It waits for starts in
// progress to end (bounded by their calls' timeouts).
func (p *pool) Close() error {
	p.mu.Lock()
	p.closed = true
	slots := p.servers
	p.servers = nil
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, sl := range slots {
		wg.Go(func() {
			<-sl.ready
			if sl.srv != nil {
				sl.srv.stop()
			}
		})
	}
	wg.Wait()
	return nil
}
