package acpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/acpserver"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// anyScript gives every session (new or loaded) the same replay script.
type anyScript []replay.Entry

func (s anyScript) ForSession(_ int, cwd string, done int) (llm.Provider, error) {
	return replay.New(s, done, cwd), nil
}

// BenchmarkLoadSession is session/load (with the retold history sent over
// io.Pipe to a client that decodes each frame once) of a session of N
// turns, each a tool call and a line of text: issue 31's load measurement.
func BenchmarkLoadSession(b *testing.B) {
	for _, turns := range []int{10, 1000, 5000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			dir := b.TempDir()
			store, err := jsonl.Open(dir, jsonl.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			srv, err := newServer(agent.Config{Store: store, Models: anyScript(toolScript(turns)), Provider: "replay", Model: "replay", ContextWindow: 1 << 30, Mode: sandbox.DangerFullAccess, SpillDir: dir})
			if err != nil {
				b.Fatal(err)
			}
			conn, cwd, sid := benchSession(b, srv, dir)
			ctx := context.Background()
			for range turns {
				res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
				if err != nil {
					b.Fatal(err)
				}
				if res.StopReason != acp.StopReasonEndTurn {
					b.Fatalf("stop reason %s", res.StopReason)
				}
			}
			if _, err := conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: sid}); err != nil {
				b.Fatal(err)
			}
			// The load is measured on a fresh server per round, read by a
			// client that decodes each frame once: the SDK's client closes
			// the connection once 1,024 notifications wait for its handler,
			// which a retold history of thousands of frames outruns.
			mk := func() *acpserver.Server {
				srv, err := newServer(agent.Config{Store: store, Models: anyScript(toolScript(turns)), Provider: "replay", Model: "replay", ContextWindow: 1 << 30, Mode: sandbox.DangerFullAccess, SpillDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				return srv
			}
			// CPU time of the whole process (agent and client) per load: on
			// a shared machine the wall clock mostly measures the others.
			var cpu time.Duration
			frames := 0
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				srv := mk()
				b.StartTimer()
				before := processCPU(b)
				// Labelled, so a CPU profile of the benchmark can be cut to
				// the loads (go tool pprof -tagfocus phase=load).
				pprof.Do(ctx, pprof.Labels("phase", "load"), func(context.Context) {
					frames = rawLoad(b, srv, string(sid), cwd)
				})
				cpu += processCPU(b) - before
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(frames), "frames/op")
		})
	}
}

// rawLoad serves srv over pipes, sends initialize and session/load of sid,
// and reads frames, each decoded once as a JSON-RPC message, until the
// load is answered; then it ends the connection (outside the benchmark's
// timer). It returns the number of frames read.
func rawLoad(b *testing.B, srv *acpserver.Server, sid, cwd string) int {
	n := 0
	serveLoad(b, srv, sid, cwd, func([]byte) { n++ })
	return n
}

// serveLoad serves srv over pipes, sends initialize and session/load of
// sid, hands every frame read to frame, each decoded once as a JSON-RPC
// message, until the load is answered (that frame included; an error
// answer fails tb), then ends the connection — in a benchmark with its
// timer stopped.
func serveLoad(tb testing.TB, srv *acpserver.Server, sid, cwd string, frame func(line []byte)) {
	tb.Helper()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), agentIn, agentOut) }()
	load, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/load",
		"params": map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}})
	go func() {
		_, _ = clientOut.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n"))
		_, _ = clientOut.Write(append(load, '\n'))
	}()
	sc := bufio.NewScanner(clientIn)
	sc.Buffer(make([]byte, 0, 1<<20), 10<<20)
	for sc.Scan() {
		frame(sc.Bytes())
		var m struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
			Params json.RawMessage  `json:"params"`
			Result json.RawMessage  `json:"result"`
			Error  json.RawMessage  `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			tb.Fatal(err)
		}
		if m.ID != nil && string(*m.ID) == "2" && m.Method == "" {
			if m.Error != nil {
				tb.Fatalf("session/load: %s", m.Error)
			}
			break
		}
	}
	if b, ok := tb.(*testing.B); ok {
		b.StopTimer()
		defer b.StartTimer()
	}
	clientOut.Close()
	go func() { _, _ = io.Copy(io.Discard, clientIn) }()
	if err := <-served; err != nil {
		tb.Fatal(err)
	}
}

// processCPU is the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
