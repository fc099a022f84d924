package mcp_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reel-agent/reel/agent/mcp"
	"github.com/reel-agent/reel/agent/mcp/mcptest"
)

// httpServer serves the test MCP server with handler (streamable HTTP or
// SSE) and records the Authorization headers it receives.
type httpServer struct {
	*httptest.Server
	state *mcptest.State
	mu    sync.Mutex
	auth  map[string]bool
}

func newHTTPServer(t *testing.T, sse bool) *httpServer {
	t.Helper()
	hs := &httpServer{state: new(mcptest.State), auth: map[string]bool{}}
	srv := mcptest.New(mcptest.ModeTools, hs.state)
	get := func(*http.Request) *sdk.Server { return srv }
	var h http.Handler = sdk.NewStreamableHTTPHandler(get, nil)
	if sse {
		h = sdk.NewSSEHandler(get, nil)
	}
	hs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs.mu.Lock()
		hs.auth[r.Header.Get("Authorization")] = true
		hs.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs
}

// authSeen returns the Authorization values received.
func (hs *httpServer) authSeen() []string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	var out []string
	for a := range hs.auth {
		out = append(out, a)
	}
	return out
}

func TestHTTPTransports(t *testing.T) {
	for _, tt := range []struct {
		transport mcp.Transport
		sse       bool
	}{{mcp.TransportHTTP, false}, {mcp.TransportSSE, true}} {
		t.Run(string(tt.transport), func(t *testing.T) {
			hs := newHTTPServer(t, tt.sse)
			set := mustConnect(t, mcp.Options{}, mcp.ServerConfig{
				Name: "web", Transport: tt.transport, URL: hs.URL,
				Headers: []mcp.Header{{Name: "Authorization", Value: "Bearer s3cret"}},
			})
			info := set.Servers()[0]
			if info.Transport != tt.transport || info.Implementation != "reel-testserver" || info.PID != 0 || len(info.Tools) != len(toolsModeNames) {
				t.Errorf("info = %+v", info)
			}
			if res := call(t, set, "mcp__web__echo", `{"text":"over http"}`); res.Text != "over http" || res.IsError {
				t.Errorf("echo = %+v", res)
			}
			if res := call(t, set, "mcp__web__fail", `{"message":"no"}`); res.Text != "no" || !res.IsError {
				t.Errorf("fail = %+v", res)
			}
			testCancel(t, set, "web", func() string {
				return fmt.Sprintf("started=%d cancelled=%d", hs.state.Started.Load(), hs.state.Cancelled.Load())
			})
			if a := hs.authSeen(); len(a) != 1 || a[0] != "Bearer s3cret" {
				t.Errorf("Authorization headers seen = %q", a)
			}
		})
	}
}

func TestHTTPServerDown(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	for _, tr := range []mcp.Transport{mcp.TransportHTTP, mcp.TransportSSE} {
		_, err := connect(t, mcp.Options{}, mcp.ServerConfig{Name: "down", Transport: tr, URL: url})
		f := serverError(t, err)
		want := mcp.StageInitialize // streamable HTTP dials with its first request
		if tr == mcp.TransportSSE {
			want = mcp.StageStart // SSE dials to open its stream
		}
		if f.Server != "down" || f.Stage != want || f.Transport != tr {
			t.Errorf("%s: failure = %v (stage %q)", tr, f, f.Stage)
		}
	}
}

func TestInvalidConfigs(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  mcp.ServerConfig
		want string
	}{
		{"no name", mcp.ServerConfig{Transport: mcp.TransportStdio, Command: "x"}, "no name"},
		{"no transport", mcp.ServerConfig{Name: "a", Command: "x"}, "no transport"},
		{"name with __", mcp.ServerConfig{Name: "a__b", Transport: mcp.TransportStdio, Command: "x"}, `the server name "a__b" contains "__"`},
		{"acp transport", mcp.ServerConfig{Name: "a", Transport: "acp"}, `transport "acp" is not supported`},
		{"stdio without command", mcp.ServerConfig{Name: "a", Transport: mcp.TransportStdio}, "needs a command"},
		{"stdio with url", mcp.ServerConfig{Name: "a", Transport: mcp.TransportStdio, Command: "x", URL: "http://h"}, "takes no url"},
		{"bad env", mcp.ServerConfig{Name: "a", Transport: mcp.TransportStdio, Command: "x", Env: []mcp.EnvVar{{Name: "A=B", Value: "c"}}}, "not a valid name=value"},
		{"http with command", mcp.ServerConfig{Name: "a", Transport: mcp.TransportHTTP, Command: "x", URL: "http://h"}, "takes no command"},
		{"file url", mcp.ServerConfig{Name: "a", Transport: mcp.TransportHTTP, URL: "file:///etc/passwd"}, "not an http or https URL"},
		{"password redacted", mcp.ServerConfig{Name: "a", Transport: mcp.TransportSSE, URL: "ftp://u:hunter2@h/"}, "ftp://u:xxxxx@h/"},
		{"header injection", mcp.ServerConfig{Name: "a", Transport: mcp.TransportHTTP, URL: "http://h", Headers: []mcp.Header{{Name: "X", Value: "a\r\nEvil: 1"}}}, `header "X" is not a valid`},
		{"header name", mcp.ServerConfig{Name: "a", Transport: mcp.TransportHTTP, URL: "http://h", Headers: []mcp.Header{{Name: "X Y", Value: "1"}}}, `header "X Y" is not a valid`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set, err := connect(t, mcp.Options{}, tt.cfg)
			f := serverError(t, err)
			if f.Stage != mcp.StageConfig || !errors.Is(f, mcp.ErrInvalidConfig) || !strings.Contains(f.Error(), tt.want) {
				t.Errorf("failure = %v (stage %q), want one containing %q", f, f.Stage, tt.want)
			}
			if strings.Contains(f.Error(), "hunter2") {
				t.Errorf("the password leaked: %v", f)
			}
			if len(set.Servers()) != 0 || len(set.Tools()) != 0 {
				t.Errorf("set = %+v", set.Servers())
			}
		})
	}
}
