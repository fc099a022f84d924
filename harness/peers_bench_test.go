//go:build unix

package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/harness/rpcclient"
)

// peerAnswer is the text every fake model streams, in the two deltas of
// peerDeltas; reel's stand-in (peerScript) streams the same text, with
// no reasoning before it either.
const peerAnswer = "Hello from reel, friend!"

// peerScript is reel's stand-in script: peerAnswer alone, as the peers'
// fake models stream it.
const peerScript = `{"responses":[{"text":"` + peerAnswer + `","usage":{"promptTokens":812,"completionTokens":6}}]}`

// peerDeltas is peerAnswer cut into the deltas the fake model streams.
var peerDeltas = [2]string{"Hello from ", "reel, friend!"}

// peerModel is a fake model on loopback HTTP for the peers of
// BenchmarkPeers: it streams peerAnswer in the dialect of each peer's
// provider — Gemini's streamGenerateContent (gemini-cli), OpenAI's
// Responses API (codex), Anthropic's Messages API (Claude Code) — and
// answers their non-streaming calls (generateContent, countTokens, a
// Messages call without "stream") with a short JSON body. Any other route
// gets 404 and is recorded in unknown, so a peer asking for something new
// shows up in the benchmark's log instead of silently timing out.
type peerModel struct {
	unknown chan string // "METHOD path" of unrouted requests, buffered
}

// newPeerModel starts a peerModel on 127.0.0.1 and returns its base URL
// (http://127.0.0.1:PORT, no path) and the server, to Close.
func newPeerModel() (*peerModel, *httptest.Server) {
	m := &peerModel{unknown: make(chan string, 64)}
	return m, httptest.NewServer(m)
}

// ServeHTTP routes a request to the dialect its path names.
func (m *peerModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(p, ":streamGenerateContent"):
		sse(w, "", geminiEvents())
	case r.Method == http.MethodPost && (strings.HasSuffix(p, ":generateContent") || strings.HasSuffix(p, ":countTokens")):
		writeJSON(w, map[string]any{"totalTokens": 10, "candidates": []any{geminiCandidate("{}", "STOP")}})
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		sse(w, "type", responsesEvents())
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, "peerModel: messages body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if !req.Stream {
			writeJSON(w, map[string]any{"id": "msg_0", "type": "message", "role": "assistant", "model": req.Model,
				"content": []any{map[string]any{"type": "text", "text": peerAnswer}}, "stop_reason": "end_turn",
				"stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5}})
			return
		}
		sse(w, "type", messagesEvents(req.Model))
	default:
		select {
		case m.unknown <- r.Method + " " + r.URL.String():
		default:
		}
		http.Error(w, `{"error":{"message":"peerModel: no route"}}`, http.StatusNotFound)
	}
}

// geminiCandidate is one Gemini response candidate carrying text.
func geminiCandidate(text, finish string) map[string]any {
	c := map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}}
	if finish != "" {
		c["finishReason"] = finish
	}
	return c
}

// geminiEvents is peerAnswer as streamGenerateContent?alt=sse events.
func geminiEvents() []map[string]any {
	return []map[string]any{
		{"candidates": []any{geminiCandidate(peerDeltas[0], "")}},
		{"candidates": []any{geminiCandidate(peerDeltas[1], "STOP")},
			"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}},
	}
}

// responsesEvents is peerAnswer as OpenAI Responses API stream events.
func responsesEvents() []map[string]any {
	msg := func(content []any) map[string]any {
		return map[string]any{"type": "message", "role": "assistant", "id": "msg_1", "content": content}
	}
	delta := func(s string) map[string]any {
		return map[string]any{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": s}
	}
	return []map[string]any{
		{"type": "response.created", "response": map[string]any{"id": "resp_1"}},
		{"type": "response.output_item.added", "output_index": 0, "item": msg([]any{})},
		delta(peerDeltas[0]),
		delta(peerDeltas[1]),
		{"type": "response.output_item.done", "output_index": 0, "item": msg([]any{map[string]any{"type": "output_text", "text": peerAnswer}})},
		{"type": "response.completed", "response": map[string]any{"id": "resp_1", "usage": map[string]any{
			"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}},
	}
}

// messagesEvents is peerAnswer as Anthropic Messages API stream events.
func messagesEvents(model string) []map[string]any {
	delta := func(s string) map[string]any {
		return map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": s}}
	}
	return []map[string]any{
		{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}},
		{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}},
		delta(peerDeltas[0]),
		delta(peerDeltas[1]),
		{"type": "content_block_stop", "index": 0},
		{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}},
		{"type": "message_stop"},
	}
}

// sse writes events as a server-sent event stream, flushing after each;
// with nameKey set, each event also carries an "event:" line naming
// event[nameKey].
func sse(w http.ResponseWriter, nameKey string, events []map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	for _, e := range events {
		data, err := json.Marshal(e)
		if err != nil {
			panic(err) // static maps of strings and numbers always encode
		}
		if nameKey != "" {
			fmt.Fprintf(w, "event: %s\n", e[nameKey])
		}
		fmt.Fprintf(w, "data: %s\n\n", data)
		if f != nil {
			f.Flush()
		}
	}
}

// writeJSON answers v as a JSON body.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// peerContender is one agent BenchmarkPeers spawns. setup prepares dir
// (the run's HOME and cwd) for a model at base and returns the command
// line and the environment added to PATH and HOME.
type peerContender struct {
	name    string
	version string
	setup   func(tb testing.TB, dir, base string) (argv, env []string)
}

// peersDir is where the peers are installed (REEL_PEERS_DIR, default
// ~/.cache/reel-peers: an npm prefix, never the repository).
func peersDir(tb testing.TB) string {
	if d := os.Getenv("REEL_PEERS_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		tb.Fatalf("peers: no REEL_PEERS_DIR and no home directory: %v", err)
	}
	return filepath.Join(home, ".cache", "reel-peers")
}

// npmVersion is the "version" of the npm package pkg installed under dir.
func npmVersion(tb testing.TB, dir, pkg string) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		tb.Fatalf("peers: %s is not installed under %s (npm install --prefix %s %s): %v", pkg, dir, dir, pkg, err)
	}
	var p struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		tb.Fatalf("peers: %s/package.json: %v", pkg, err)
	}
	return p.Version
}

// writeFile writes data to path, creating its directory.
func writeFile(tb testing.TB, path, data string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// peerContenders is reel (on the stand-in model over loopback HTTP) and
// the peers named in REEL_BENCH_PEER_LIST (default "gemini,codex,claude"),
// each configured for a fake model on loopback with update checks,
// telemetry and error reporting off. A named peer that is not installed
// fails the benchmark, naming the npm command that installs it.
func peerContenders(tb testing.TB) []peerContender {
	tb.Helper()
	dir := peersDir(tb)
	bin := func(rel string) string { return filepath.Join(dir, "node_modules", rel) }
	version := "this tree"
	if out, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		version += " (" + string(bytes.TrimSpace(out)) + ")"
	}
	reel := peerContender{name: "reel", version: version, setup: func(_ testing.TB, d, base string) ([]string, []string) {
		return []string{reelExe, "acp", "--state-dir", filepath.Join(d, "state"), "--base-url", base + "/v1", "--model", "standin", "--log-level", "error"}, nil
	}}
	all := map[string]func() peerContender{
		"gemini": func() peerContender {
			return peerContender{name: "gemini", version: "@google/gemini-cli " + npmVersion(tb, dir, "@google/gemini-cli"),
				setup: func(tb testing.TB, d, base string) ([]string, []string) {
					writeFile(tb, filepath.Join(d, ".gemini", "settings.json"), `{
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
`)
					// A fixed model: "auto" would add a routing call before the answer.
					return []string{bin("@google/gemini-cli/bundle/gemini.js"), "--acp", "--model", "gemini-2.5-flash"},
						[]string{"GOOGLE_GEMINI_BASE_URL=" + base, "GEMINI_API_KEY=fake-key"}
				}}
		},
		"codex": func() peerContender {
			// The native binary, as editors run it; the npm wrapper adds a node start.
			exe := bin("@zed-industries/codex-acp-linux-x64/bin/codex-acp")
			if _, err := os.Stat(exe); err != nil {
				exe = bin(".bin/codex-acp")
			}
			return peerContender{name: "codex", version: "@zed-industries/codex-acp " + npmVersion(tb, dir, "@zed-industries/codex-acp"),
				setup: func(tb testing.TB, d, base string) ([]string, []string) {
					// A model whose metadata codex ships, so it warns about nothing.
					writeFile(tb, filepath.Join(d, ".codex", "config.toml"), `model = "gpt-5.4-mini"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "`+base+`/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
`)
					return []string{exe}, []string{"CODEX_HOME=" + filepath.Join(d, ".codex")}
				}}
		},
		"claude": func() peerContender {
			return peerContender{name: "claude", version: "@agentclientprotocol/claude-agent-acp " + npmVersion(tb, dir, "@agentclientprotocol/claude-agent-acp"),
				setup: func(_ testing.TB, _, base string) ([]string, []string) {
					return []string{bin("@agentclientprotocol/claude-agent-acp/dist/index.js")},
						[]string{"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=sk-ant-fake", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
							"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1"}
				}}
		},
	}
	list := "gemini,codex,claude"
	if l, ok := os.LookupEnv("REEL_BENCH_PEER_LIST"); ok {
		list = l
	}
	cs := []peerContender{reel}
	for name := range strings.SplitSeq(list, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		mk, ok := all[name]
		if !ok {
			tb.Fatalf("peers: REEL_BENCH_PEER_LIST names %q; known: gemini, codex, claude", name)
		}
		cs = append(cs, mk())
	}
	return cs
}

// peerRun is what one spawn of a contender measured.
type peerRun struct {
	ready time.Duration // spawn → initialize and session/new answered
	first time.Duration // session/prompt sent → first agent_message_chunk of the model's answer
}

// answerChunk reports whether n is an agent_message_chunk whose text begins
// the fake model's answer (not a notice such as a warning the agent sends
// as message text).
func answerChunk(n rpcclient.Notification) bool {
	if n.Update != "agent_message_chunk" {
		return false
	}
	var p struct {
		Update struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
	if json.Unmarshal(n.Params, &p) != nil {
		return false
	}
	t := p.Update.Content.Text
	return t != "" && strings.HasPrefix(peerAnswer, t)
}

// runPeer spawns c once in a fresh directory against a fresh fake model
// (reel's stand-in for reel, peerModel for the others) and measures it.
// The agent is then asked to exit by closing its stdin and, after two
// seconds, killed with its process group (codex-acp does not exit on EOF);
// none of that is timed.
func runPeer(tb testing.TB, c peerContender, script *standin.Script) peerRun {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := tb.TempDir()
	var base string
	var model *peerModel
	if c.name == "reel" {
		sm := standin.New(script, nil)
		addr, err := sm.Start(ctx, "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		defer func() { _ = sm.Close() }()
		base = "http://" + addr
	} else {
		var srv *httptest.Server
		model, srv = newPeerModel()
		defer srv.Close()
		base = srv.URL
	}
	argv, env := c.setup(tb, dir, base)
	cmd, stdin, stdout := agentCommand(tb, argv, dir)
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := os.Create(filepath.Join(dir, "agent-stderr.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = stderr.Close() }()
	cmd.Stderr = stderr
	fail := func(format string, args ...any) {
		tb.Helper()
		msg := fmt.Sprintf(format, args...)
		if model != nil {
			for len(model.unknown) > 0 {
				msg += "\n  fake model got unrouted " + <-model.unknown
			}
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		data, _ := os.ReadFile(stderr.Name())
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		tb.Fatalf("%s: %s\n  stderr (tail):\n%s", c.name, msg, bytes.TrimSpace(data))
	}
	var run peerRun
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("%s: start %v: %v", c.name, argv, err)
	}
	exited := make(chan error, 1)
	defer func() {
		_ = stdin.Close()
		select {
		case <-exited:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // any child left behind
		case <-time.After(2 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}()
	cl := rpcclient.New(ctx, stdout, stdin, rpcclient.Options{})
	go func() {
		<-cl.Done() // stdout fully read before Wait closes it
		exited <- cmd.Wait()
	}()
	if err := cl.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
		fail("initialize: %v", err)
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := cl.Call(ctx, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}, &s); err != nil {
		fail("session/new: %v", err)
	}
	run.ready = time.Since(t0)
	t1 := time.Now()
	answer, err := cl.Dispatch(ctx, "session/prompt", map[string]any{"sessionId": s.SessionID,
		"prompt": []map[string]any{{"type": "text", "text": "Say hello in five words or fewer. No tools."}}})
	if err != nil {
		fail("session/prompt: %v", err)
	}
	if _, err := cl.WaitFor(ctx, answerChunk); err != nil {
		fail("waiting for the answer's first agent_message_chunk: %v", err)
	}
	run.first = time.Since(t1)
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err := answer(ctx, &r); err != nil || r.StopReason != "end_turn" {
		fail("session/prompt ended %q: %v", r.StopReason, err)
	}
	if model != nil && len(model.unknown) > 0 {
		tb.Logf("%s: fake model got unrouted %s", c.name, <-model.unknown)
	}
	return run
}

// BenchmarkPeers measures reel against the ACP agents of other projects on
// the two latencies of issue 31, each agent on a fake model over loopback
// HTTP that streams the same short answer: spawn → initialize +
// session/new answered ("ready") and session/prompt → the answer's first
// agent_message_chunk ("first"). Contenders alternate within one run (each
// iteration spawns every one once, the order rotating). It reports each
// one's medians and, per peer, peer/reel for both ("<peer>-ready-x-reel",
// "<peer>-first-x-reel"); its log adds the median of the rounds' ratios. Opt-in: it needs the peers installed (see
// README.md, "Benchmarks: peers") and REEL_BENCH_PEERS=1; CI never sets it.
//
//	REEL_BENCH_PEERS=1 go test -run '^$' -bench Peers -benchtime 10x ./harness/
func BenchmarkPeers(b *testing.B) {
	if os.Getenv("REEL_BENCH_PEERS") != "1" {
		b.Skip("peer benchmark is opt-in: install the peers (README.md, \"Benchmarks: peers\") and set REEL_BENCH_PEERS=1")
	}
	cs := peerContenders(b)
	script, err := standin.ParseScript([]byte(peerScript))
	if err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		b.Logf("node %s", bytes.TrimSpace(out))
	}
	for _, c := range cs {
		b.Logf("%s: %s", c.name, c.version)
	}
	ready := map[string][]time.Duration{}
	first := map[string][]time.Duration{}
	round := 0
	for b.Loop() {
		for i := range cs {
			c := cs[(i+round)%len(cs)]
			r := runPeer(b, c, script)
			ready[c.name] = append(ready[c.name], r.ready)
			first[c.name] = append(first[c.name], r.first)
		}
		round++
	}
	// pairs is the median over rounds of a round's peer/reel ratio.
	pairs := func(peer, reel []time.Duration) float64 {
		rs := make([]time.Duration, len(peer))
		for i := range peer {
			rs[i] = time.Duration(1e6 * float64(peer[i]) / float64(reel[i]))
		}
		return float64(median(rs)) / 1e6
	}
	rr, rf := median(slices.Clone(ready["reel"])), median(slices.Clone(first["reel"]))
	for _, c := range cs {
		pr, pf := pairs(ready[c.name], ready["reel"]), pairs(first[c.name], first["reel"])
		mr, mf := median(slices.Clone(ready[c.name])), median(slices.Clone(first[c.name]))
		b.ReportMetric(ms(mr), c.name+"-ready-ms")
		b.ReportMetric(ms(mf), c.name+"-first-ms")
		if c.name != "reel" {
			b.ReportMetric(float64(mr)/float64(rr), c.name+"-ready-x-reel")
			b.ReportMetric(float64(mf)/float64(rf), c.name+"-first-x-reel")
		}
		b.Logf("%-7s %d rounds  ready %8.1f ms (×%.1f, pairs ×%.1f)  first %7.1f ms (×%.1f, pairs ×%.1f)", c.name, len(ready[c.name]),
			ms(mr), float64(mr)/float64(rr), pr, ms(mf), float64(mf)/float64(rf), pf)
	}
	b.ReportMetric(0, "ns/op")
}

// TestPeerModelDialects posts to each route of the peers' fake model and
// checks that every stream carries the answer's deltas in its dialect and
// that an unknown route is refused and recorded, so the benchmark's model
// cannot drift from what the peers parse without this failing.
func TestPeerModelDialects(t *testing.T) {
	m, srv := newPeerModel()
	defer srv.Close()
	cases := []struct {
		name, path, body string
		status           int
		want             []string
	}{
		{"gemini stream", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", `{}`, 200,
			[]string{`data: {"candidates":[{"content":{"parts":[{"text":"Hello from "}],"role":"model"},"index":0}]}`, `"finishReason":"STOP"`}},
		{"gemini count", "/v1beta/models/gemini-2.5-flash:countTokens", `{}`, 200, []string{`"totalTokens":10`}},
		{"responses", "/v1/responses", `{"stream":true}`, 200,
			[]string{"event: response.output_text.delta\ndata: {\"content_index\":0,\"delta\":\"Hello from \"", "event: response.completed\n"}},
		{"messages stream", "/v1/messages?beta=true", `{"model":"m","stream":true}`, 200,
			[]string{"event: content_block_delta\ndata: {\"delta\":{\"text\":\"Hello from \",\"type\":\"text_delta\"}", "event: message_stop\n"}},
		{"messages once", "/v1/messages", `{"model":"m"}`, 200, []string{`"text":"Hello from reel, friend!"`}},
		{"unknown", "/v1/chat/completions", `{}`, 404, []string{"no route"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+tc.path, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body:\n%s", resp.StatusCode, tc.status, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(got), w) {
					t.Errorf("body lacks %q:\n%s", w, got)
				}
			}
		})
	}
	select {
	case u := <-m.unknown:
		if u != "POST /v1/chat/completions" {
			t.Errorf("recorded unrouted request %q, want POST /v1/chat/completions", u)
		}
	default:
		t.Error("the unrouted request was not recorded")
	}
}
