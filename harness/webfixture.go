package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/reel-agent/reel/harness/scenario"
)

// A scenario that fetches web pages (web_fetch) does so from a loopback
// server the harness runs, so it needs no network in any mode: the pages
// are the scenario's web/ folder (or, for a corpus scenario, what its
// CorpusPrep.Web writes), served on the port its prompts name. The port is
// the recording's: the URL is in the recorded tool call, and a replay
// fetches it again.

// loopbackURL finds the fixture server's address in a prompt.
var loopbackURL = &pattern{expr: `http://127\.0\.0\.1:(\d{2,5})/`}

// webPort is the loopback port the scenario's prompts fetch from.
func webPort(sc *scenario.Scenario) (int, error) {
	for _, st := range sc.Input.Steps {
		if m := loopbackURL.get().FindStringSubmatch(st.Text); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 && n < 65536 {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: it has pages to serve (web/) but no prompt names a URL http://127.0.0.1:PORT/ to serve them on", sc.Name)
}

// portWait bounds how long a run waits for a fixture port another run
// (of a scenario on the same port) still holds.
const portWait = 60 * time.Second

// serveWeb serves dir on 127.0.0.1:port until the returned stop is
// called. A port in use is retried until portWait: scenarios run in
// parallel may share one.
func serveWeb(ctx context.Context, dir string, port int) (stop func(), err error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(portWait)
	var ln net.Listener
	for {
		ln, err = net.Listen("tcp", addr)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return nil, fmt.Errorf("serve the web fixture on %s: %w", addr, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	srv := &http.Server{Handler: http.FileServerFS(os.DirFS(dir)), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return func() {
		_ = srv.Close()
		<-done
	}, nil
}

// startWeb serves the run's pages, if the scenario has any: the web/
// folder, then what r.PrepareWeb writes, copied to the run's temp dir.
func (r *Runner) startWeb(ctx context.Context, sc *scenario.Scenario, run *Run) (stop func(), err error) {
	if sc.Web == "" && r.PrepareWeb == nil {
		return func() {}, nil
	}
	dir := filepath.Join(run.Temp, "web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if sc.Web != "" {
		if err := os.CopyFS(dir, os.DirFS(sc.Web)); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: copy web/: %w", sc.Name, err)
		}
	}
	if r.PrepareWeb != nil {
		if err := r.PrepareWeb(dir); err != nil {
			return nil, fmt.Errorf("%s: prepare the web fixture: %w", sc.Name, err)
		}
	}
	port, err := webPort(sc)
	if err != nil {
		return nil, err
	}
	return serveWeb(ctx, dir, port)
}
