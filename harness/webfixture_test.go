package harness

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/harness/scenario"
)

func TestWebPort(t *testing.T) {
	sc := func(texts ...string) *scenario.Scenario {
		s := &scenario.Scenario{Name: "s", Input: &scenario.Input{}}
		for _, tx := range texts {
			s.Input.Steps = append(s.Input.Steps, scenario.Step{Op: scenario.OpPrompt, Text: tx})
		}
		return s
	}
	if p, err := webPort(sc("hello", "fetch http://127.0.0.1:43117/menu.html, then stop")); err != nil || p != 43117 {
		t.Errorf("webPort = %d, %v; want 43117", p, err)
	}
	for _, texts := range [][]string{{"fetch https://example.com/"}, {"http://127.0.0.1:0/x"}, {"http://127.0.0.1:99999/"}, nil} {
		if _, err := webPort(sc(texts...)); err == nil || !strings.Contains(err.Error(), "no prompt names a URL") {
			t.Errorf("webPort(%q) = %v, want the no-URL error", texts, err)
		}
	}
}

// freePort is a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestServeWebSharesAPort: two runs on one port take turns; each serves
// its own pages, and the second starts once the first stops.
func TestServeWebSharesAPort(t *testing.T) {
	port := freePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/page.html"
	dirs := []string{t.TempDir(), t.TempDir()}
	for i, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "page.html"), []byte("<p>run "+strconv.Itoa(i)+"</p>"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	get := func() string {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("Content-Type %q", ct)
		}
		return string(b)
	}
	stop0, err := serveWeb(context.Background(), dirs[0], port)
	if err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "<p>run 0</p>" {
		t.Errorf("first run serves %q", got)
	}
	second := make(chan func(), 1)
	go func() {
		stop, err := serveWeb(context.Background(), dirs[1], port)
		if err != nil {
			t.Error(err)
		}
		second <- stop
	}()
	time.Sleep(200 * time.Millisecond) // the second run is waiting for the port
	if got := get(); got != "<p>run 0</p>" {
		t.Errorf("while the first run holds the port: %q", got)
	}
	stop0()
	stop1 := <-second
	if stop1 == nil {
		t.Fatal("the second run did not start")
	}
	defer stop1()
	if got := get(); got != "<p>run 1</p>" {
		t.Errorf("second run serves %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := serveWeb(ctx, dirs[0], port); err == nil {
		t.Errorf("a cancelled run waiting for a held port did not give up")
	}
}
