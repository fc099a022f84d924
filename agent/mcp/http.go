package mcp

import (
	"context"
	"net/http"
	"net/url"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpClient is the client of one HTTP or SSE server: opts.HTTPClient (or
// a default one) with the server's headers added to its requests.
func httpClient(opts *Options, cfg *ServerConfig) *http.Client {
	var c http.Client
	if opts.HTTPClient != nil {
		c = *opts.HTTPClient
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if len(cfg.Headers) > 0 {
		u, _ := url.Parse(cfg.URL) // validated
		base = &headerTransport{base: base, host: u.Host, headers: cfg.Headers}
	}
	c.Transport = base
	return &c
}

// headerTransport adds configured headers to the requests it sends to the
// configured host, and to no other (a redirect elsewhere must not carry a
// token meant for the server).
type headerTransport struct {
	base    http.RoundTripper
	host    string
	headers []Header
}

// RoundTrip implements http.RoundTripper.
func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != t.host {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for _, h := range t.headers {
		r.Header.Del(h.Name)
	}
	for _, h := range t.headers {
		r.Header.Add(h.Name, h.Value)
	}
	return t.base.RoundTrip(r)
}

// lifeTransport gives the underlying transport the connection's lifetime
// context instead of the connect call's one (the SSE transport ties its
// stream to the context Connect is given), and ends that lifetime should
// the connect call's context end while the transport is connecting.
type lifeTransport struct {
	inner sdk.Transport
	life  context.Context
	end   context.CancelFunc
	// connected is set when the underlying Connect succeeded, telling a
	// failure to start apart from one of the handshake.
	connected bool
}

// Connect implements sdk.Transport.
func (t *lifeTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stop := context.AfterFunc(ctx, t.end)
	defer stop()
	conn, err := t.inner.Connect(t.life)
	t.connected = err == nil
	return conn, err
}
