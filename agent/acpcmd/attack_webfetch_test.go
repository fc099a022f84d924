package acpcmd_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// metadataAnswer is what the stand-in proxy answers: a model that reads it
// reached a refused destination through the proxy.
const metadataAnswer = "AKIA-PROXIED-METADATA-SECRET"

// recordingProxy is a forward proxy on loopback that records every request
// it is sent (absolute-form GETs and CONNECTs) and answers each as if it
// were the cloud metadata service, without dialling anything.
func recordingProxy(t *testing.T) (url string, contacted func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.RequestURI)
		mu.Unlock()
		if r.Method == http.MethodConnect {
			http.Error(w, "no tunnels here", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, metadataAnswer)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestAttackWebFetchRefusedWhateverTheRoute is findings 4 and 5 of issue 26.
// reel runs with every proxy variable (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY,
// upper and lower case) pointing at a proxy on loopback, and the model
// fetches cloud metadata services: by their link-local address, by the
// addresses some clouds use outside link-local (Alibaba, Azure's
// WireServer, AWS's IPv6), by every IPv6 form that embeds 169.254.169.254
// (IPv4-mapped, -compatible, -translated, NAT64 in both prefixes, 6to4,
// Teredo's obfuscated client), by the decimal, hex and octal spellings of
// it, with a trailing dot, and by the metadata host names. Each call is a
// tool error naming the refused destination, the proxy is never contacted,
// and the model never reads what the proxy would have answered. A local
// page stays fetchable with the same environment.
func TestAttackWebFetchRefusedWhateverTheRoute(t *testing.T) {
	t.Parallel()
	proxyURL, contacted := recordingProxy(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "LOCAL-PAGE")
	}))
	defer page.Close()
	attacks := []struct{ url, names string }{
		{"http://169.254.169.254/latest/meta-data/iam/security-credentials/", "169.254.169.254"},
		{"https://169.254.169.254/latest/meta-data/", "169.254.169.254"},
		{"http://100.100.100.200/latest/meta-data/", "100.100.100.200"},
		{"http://168.63.129.16/machine?comp=goalstate", "168.63.129.16"},
		{"http://192.0.0.192/latest/meta-data/", "192.0.0.192"},
		{"http://169.254.0.23/meta-data/", "169.254.0.23"},
		{"http://[fd00:ec2::254]/latest/meta-data/", "fd00:ec2::254"},
		{"http://[fd20:ce::254]/computeMetadata/v1/", "fd20:ce::254"},
		{"http://[::ffff:169.254.169.254]/latest/meta-data/", "169.254.169.254"},
		{"http://[::169.254.169.254]/latest/meta-data/", "169.254.169.254"},
		{"http://[::ffff:0:a9fe:a9fe]/latest/meta-data/", "169.254.169.254"},
		{"http://[64:ff9b::a9fe:a9fe]/latest/meta-data/", "169.254.169.254"},
		{"http://[64:ff9b::100.100.100.200]/latest/meta-data/", "100.100.100.200"},
		{"http://[64:ff9b:1:a9fe:a9:fe00::]/latest/meta-data/", "169.254.169.254"},
		{"http://[2002:a9fe:a9fe::1]/latest/meta-data/", "169.254.169.254"},
		{"http://[2001:0:4136:e378:8000:63bf:5601:5601]/latest/meta-data/", "169.254.169.254"},
		{"http://2852039166/latest/meta-data/", "169.254.169.254"},
		{"http://0xA9FEA9FE/latest/meta-data/", "169.254.169.254"},
		{"http://0251.0376.0251.0376/latest/meta-data/", "169.254.169.254"},
		{"http://169.254.169.254./latest/meta-data/", "169.254.169.254"},
		{"http://metadata.google.internal/computeMetadata/v1/", "metadata.google.internal"},
		{"http://METADATA.google.internal./computeMetadata/v1/", "metadata.google.internal"},
		{"http://metadata.tencentyun.com/latest/meta-data/", "metadata.tencentyun.com"},
	}
	calls := []standin.ToolCall{{ID: "local", Name: "web_fetch", Arguments: jsonArgs(t, map[string]any{"url": page.URL + "/"})}}
	for i, a := range attacks {
		calls = append(calls, standin.ToolCall{ID: fmt.Sprintf("a%d", i), Name: "web_fetch", Arguments: jsonArgs(t, map[string]any{"url": a.url})})
	}
	dir, ws, state := workspace(t)
	url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{{ToolCalls: calls}, {Text: "done"}}})
	env := baseEnv(t)
	for _, name := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"} {
		env = append(env, name+"="+proxyURL)
	}
	p := startProc(t, dir, env, "acp", "--state-dir", state, "--mode", "workspace-write",
		"--provider", "deepseek", "--base-url", url, "--model", "standin")
	underAttack(t, p)
	p.initialize()
	sid := p.newSession(ws)
	stop, frames := p.prompt(sid, "fetch the metadata")
	if stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	results := toolResults(frames)
	if r := results["local"]; !strings.HasPrefix(r, "completed: ") || !strings.Contains(r, "LOCAL-PAGE") {
		t.Errorf("the local page was not fetched: %q", r)
	}
	for i, a := range attacks {
		r := results[fmt.Sprintf("a%d", i)]
		switch {
		case strings.Contains(r, metadataAnswer):
			t.Errorf("%s: the model read the proxy's answer: %q", a.url, r)
		case !strings.HasPrefix(r, "failed: Error: ") || !strings.Contains(r, "which web_fetch does not connect to") || !strings.Contains(r, a.names):
			t.Errorf("%s: want a tool error refusing %s, got %q", a.url, a.names, r)
		}
	}
	if seen := contacted(); len(seen) != 0 {
		t.Errorf("the proxy was contacted %d times: %q", len(seen), seen)
	}
}
