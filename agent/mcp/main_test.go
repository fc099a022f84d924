package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/mcp"
	"github.com/reel-agent/reel/agent/mcp/mcptest"
)

// serverEnv, set to a testserver mode, makes the test binary an MCP stdio
// server in that mode.
const serverEnv = "REEL_MCP_TESTSERVER"

// TestMain turns the test binary into the test MCP server when serverEnv
// is set, the way agent/sandbox's tests re-execute themselves.
func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(mcptest.Main(mode))
	}
	os.Exit(m.Run())
}

// stdioServer is the configuration of the test binary as a stdio server.
func stdioServer(t *testing.T, name, mode string) mcp.ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcp.ServerConfig{
		Name: name, Transport: mcp.TransportStdio, Command: exe,
		Args: []string{"-test.run=^$"},
		Env:  []mcp.EnvVar{{Name: serverEnv, Value: mode}},
	}
}

// connect connects servers and closes the set when the test ends.
func connect(t *testing.T, opts mcp.Options, servers ...mcp.ServerConfig) (*mcp.Set, error) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(newRecorder().handler())
	}
	set, err := mcp.Connect(context.Background(), servers, opts)
	if set == nil {
		t.Fatal("Connect returned a nil Set")
	}
	t.Cleanup(func() { _ = set.Close() })
	return set, err
}

// mustConnect connects servers that must all connect.
func mustConnect(t *testing.T, opts mcp.Options, servers ...mcp.ServerConfig) *mcp.Set {
	t.Helper()
	set, err := connect(t, opts, servers...)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return set
}

// serverError returns the only failure of err, which must be a
// *mcp.ConnectError.
func serverError(t *testing.T, err error) *mcp.ServerError {
	t.Helper()
	var ce *mcp.ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *ConnectError", err, err)
	}
	if len(ce.Failures) != 1 {
		t.Fatalf("failures = %v, want one", ce.Failures)
	}
	return ce.Failures[0]
}

// recorder collects log records.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func newRecorder() *recorder { return &recorder{} }

func (r *recorder) handler() slog.Handler { return &recordHandler{r: r} }

// messages returns the records whose message is msg, as attribute maps.
func (r *recorder) messages(msg string) []map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]string
	for _, rec := range r.records {
		if rec.Message != msg {
			continue
		}
		m := map[string]string{}
		rec.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value.String()
			return true
		})
		out = append(out, m)
	}
	return out
}

// all returns every record as "message key=value …" lines.
func (r *recorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, rec := range r.records {
		b.WriteString(rec.Message)
		rec.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.String())
			return true
		})
		b.WriteByte('\n')
	}
	return b.String()
}

type recordHandler struct {
	r     *recorder
	attrs []slog.Attr
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *recordHandler) Handle(_ context.Context, rec slog.Record) error {
	rec = rec.Clone()
	rec.AddAttrs(h.attrs...)
	h.r.mu.Lock()
	h.r.records = append(h.r.records, rec)
	h.r.mu.Unlock()
	return nil
}

func (h *recordHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &recordHandler{r: h.r, attrs: append(slices.Clone(h.attrs), as...)}
}

func (h *recordHandler) WithGroup(string) slog.Handler { return h }

// children returns the pids of this process's children (reaped ones are
// not children any more; zombies still are).
func children(t *testing.T) []int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil || len(tasks) == 0 {
		t.Skip("no /proc/self/task/*/children on this system")
	}
	var pids []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	slices.Sort(pids)
	return pids
}

// waitGone waits until pid no longer exists (a zombie counts as existing).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			state := "?"
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
				state = string(b)
			}
			t.Fatalf("process %d still exists after 5s (kill: %v; stat: %s)", pid, err, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// slogOf is a logger writing to rec.
func slogOf(rec *recorder) *slog.Logger { return slog.New(rec.handler()) }
