package harness_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/harness/rpcclient"
)

// startupContender is one program BenchmarkStartup spawns: argv builds its
// command line for a fresh directory (and, for reel over HTTP, the base URL
// of a stand-in model started for that run); prompt says whether it can
// answer session/prompt.
type startupContender struct {
	name   string
	argv   func(dir, baseURL string) []string
	http   bool
	prompt bool
}

// startupRun is what one spawn of a contender measured.
type startupRun struct {
	init    time.Duration // spawn → initialize answered
	ready   time.Duration // spawn → initialize and session/new answered
	thought time.Duration // session/prompt sent → first agent_thought_chunk (the model's first delta)
	first   time.Duration // session/prompt sent → first agent_message_chunk
}

// startupContenders are the programs of issue 31's start-up targets: the
// floor (testdata/floor: a Go program that answers initialize and does
// session/new's one durable create), reel replaying the text-turn fixture
// (no HTTP), and reel on a loopback stand-in model over HTTP — the last two
// answer the same prompt with the same reasoning and text.
func startupContenders(b testing.TB, exe, base string) []startupContender {
	b.Helper()
	floor := filepath.Join(b.TempDir(), "floor")
	build := exec.Command("go", "build", "-o", floor, "./testdata/floor")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build testdata/floor: %v\n%s", err, out)
	}
	fixture, err := filepath.Abs(filepath.Join("..", "fixtures", "text-turn", "session.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	cs := []startupContender{
		{name: "floor", argv: func(dir, _ string) []string { return []string{floor, filepath.Join(dir, "state")} }},
		{name: "replay", prompt: true, argv: func(dir, _ string) []string {
			return []string{exe, "acp", "--state-dir", filepath.Join(dir, "state"), "--replay", fixture, "--log-level", "error"}
		}},
		{name: "http", http: true, prompt: true, argv: func(dir, base string) []string {
			return []string{exe, "acp", "--state-dir", filepath.Join(dir, "state"), "--base-url", base, "--model", "standin", "--log-level", "error"}
		}},
	}
	if base == "" {
		return cs
	}
	// The same two reels from another binary, alternating with these.
	for _, c := range cs[1:] {
		argv := c.argv
		c.name = "base-" + c.name
		c.argv = func(dir, url string) []string { return append([]string{base}, argv(dir, url)[1:]...) }
		cs = append(cs, c)
	}
	return cs
}

// runStartup spawns c once in a fresh directory and measures it.
func runStartup(b testing.TB, c startupContender, script *standin.Script) startupRun {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	base := ""
	if c.http {
		model := standin.New(script, nil)
		addr, err := model.Start(ctx, "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = model.Close() }()
		base = "http://" + addr + "/v1"
	}
	cmd, stdin, stdout := agentCommand(b, c.argv(dir, base), dir)
	var run startupRun
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Errorf("%s: %v", c.name, err)
		}
	}()
	cl := rpcclient.New(ctx, stdout, stdin, rpcclient.Options{})
	if err := cl.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
		b.Fatalf("%s: initialize: %v", c.name, err)
	}
	run.init = time.Since(t0)
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := cl.Call(ctx, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}, &s); err != nil {
		b.Fatalf("%s: session/new: %v", c.name, err)
	}
	run.ready = time.Since(t0)
	if !c.prompt {
		return run
	}
	t1 := time.Now()
	answer, err := cl.Dispatch(ctx, "session/prompt", map[string]any{"sessionId": s.SessionID,
		"prompt": []map[string]any{{"type": "text", "text": "Say hello in five words or fewer. No tools."}}})
	if err != nil {
		b.Fatalf("%s: session/prompt: %v", c.name, err)
	}
	if _, err := cl.WaitFor(ctx, func(n rpcclient.Notification) bool { return n.Update == "agent_thought_chunk" }); err != nil {
		b.Fatalf("%s: waiting for the first agent_thought_chunk: %v", c.name, err)
	}
	run.thought = time.Since(t1)
	if _, err := cl.WaitFor(ctx, func(n rpcclient.Notification) bool { return n.Update == "agent_message_chunk" }); err != nil {
		b.Fatalf("%s: waiting for the first agent_message_chunk: %v", c.name, err)
	}
	run.first = time.Since(t1)
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err := answer(ctx, &r); err != nil || r.StopReason != "end_turn" {
		b.Fatalf("%s: session/prompt ended %q: %v", c.name, r.StopReason, err)
	}
	return run
}

// median is the middle of ds (the mean of the two middle ones for an even
// count); ds is sorted in place.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	n := len(ds)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return ds[n/2]
	}
	return (ds[n/2-1] + ds[n/2]) / 2
}

// runVersion times spawn → exit of `exe version`: starting the binary
// (the runtime and every package's initialization) with no ACP work —
// the part of "ready" no change to reel acp's own code can cut.
func runVersion(b testing.TB, exe string) time.Duration {
	b.Helper()
	cmd := exec.Command(exe, "version")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	t0 := time.Now()
	if out, err := cmd.Output(); err != nil {
		b.Fatalf("%s version: %v\n%s", exe, err, out)
	}
	return time.Since(t0)
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkStartup measures issue 31's start-up targets whole-process, the
// contenders alternating within one run (each iteration runs every one
// once, the order rotating): spawn → initialize + session/new answered for
// the floor, reel --replay and reel on a loopback HTTP model ("ready"), and
// session/prompt → first agent_message_chunk for the two reels ("first").
// It reports medians and the ratios the targets are stated in:
// http-ready/floor-ready (≤ 2) and http-first/replay-first (≤ 2).
// REEL_BENCH_EXE runs another reel binary in place of the one built for
// the test run; REEL_BENCH_BASE adds the same two reels from another
// binary ("base-…"), alternating with them, and their ratios ("…-x-base").
// "version-ms" is spawn → exit of `reel version` (the binary's start and
// package initialization, no ACP work), timed in the same rounds;
// ready-x-version is how much of "ready" is more than that.
//
//	go test -run '^$' -bench Startup -benchtime 40x ./harness/
func BenchmarkStartup(b *testing.B) {
	exe := reelExe
	if e := os.Getenv("REEL_BENCH_EXE"); e != "" {
		exe = e
	}
	cs := startupContenders(b, exe, os.Getenv("REEL_BENCH_BASE"))
	script, err := standin.LoadScript(filepath.Join("..", "fixtures", "text-turn", "standin.json"))
	if err != nil {
		b.Fatal(err)
	}
	ready := map[string][]time.Duration{}
	inits := map[string][]time.Duration{}
	first := map[string][]time.Duration{}
	thought := map[string][]time.Duration{}
	// The binary's start alone (`reel version`), alternating with the
	// rest: the fixed part of "ready".
	versions := map[string]string{"version": exe}
	if base := os.Getenv("REEL_BENCH_BASE"); base != "" {
		versions["base-version"] = base
	}
	version := map[string][]time.Duration{}
	round := 0
	for b.Loop() {
		for i := range cs {
			c := cs[(i+round)%len(cs)]
			r := runStartup(b, c, script)
			ready[c.name] = append(ready[c.name], r.ready)
			inits[c.name] = append(inits[c.name], r.init)
			if c.prompt {
				first[c.name] = append(first[c.name], r.first)
				thought[c.name] = append(thought[c.name], r.thought)
			}
		}
		for name, e := range versions {
			version[name] = append(version[name], runVersion(b, e))
		}
		round++
	}
	for name := range versions {
		b.ReportMetric(ms(median(version[name])), name+"-ms")
	}
	for _, c := range cs {
		b.ReportMetric(ms(median(ready[c.name])), c.name+"-ready-ms")
		b.ReportMetric(ms(median(inits[c.name])), c.name+"-init-ms")
		if c.prompt {
			b.ReportMetric(ms(median(first[c.name])), c.name+"-first-ms")
			b.ReportMetric(ms(median(thought[c.name])), c.name+"-thought-ms")
		}
	}
	ratio := func(a, z []time.Duration) float64 { return float64(median(a)) / float64(median(z)) }
	b.ReportMetric(ratio(ready["http"], ready["floor"]), "ready-x-floor")
	b.ReportMetric(ratio(ready["replay"], ready["floor"]), "replay-ready-x-floor")
	b.ReportMetric(ratio(first["http"], first["replay"]), "first-x-replay")
	b.ReportMetric(ratio(ready["http"], version["version"]), "ready-x-version")
	if _, ok := ready["base-http"]; ok {
		b.ReportMetric(ratio(ready["http"], ready["base-http"]), "ready-x-base")
		b.ReportMetric(ratio(ready["replay"], ready["base-replay"]), "replay-ready-x-base")
		b.ReportMetric(ratio(first["http"], first["base-http"]), "first-x-base")
		b.ReportMetric(ratio(first["replay"], first["base-replay"]), "replay-first-x-base")
	}
	b.ReportMetric(0, "ns/op")
}

// TestStartupContenders runs every contender of BenchmarkStartup once, so
// the benchmark's programs and their answers cannot rot unnoticed: each
// answers initialize and session/new, and the reels answer the prompt with
// an agent_message_chunk and end_turn.
func TestStartupContenders(t *testing.T) {
	script, err := standin.LoadScript(filepath.Join("..", "fixtures", "text-turn", "standin.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range startupContenders(t, reelExe, "") {
		t.Run(c.name, func(t *testing.T) {
			r := runStartup(t, c, script)
			t.Logf("ready %v first %v", r.ready, r.first)
		})
	}
}
