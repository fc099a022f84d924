package acpserver_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
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

// BenchmarkLoadSession is session/load (with the retold history sent to an
// SDK client over io.Pipe) of a session of N turns, each a tool call and a
// line of text: issue 31's load measurement.
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
			agentIn, clientOut := io.Pipe()
			clientIn, agentOut := io.Pipe()
			go srv.Serve(context.Background(), agentIn, agentOut)
			conn := acp.NewClientSideConnection(soakClient{}, clientOut, clientIn)
			ctx := context.Background()
			if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
				b.Fatal(err)
			}
			cwd := filepath.Join(dir, "cwd")
			if err := os.MkdirAll(cwd, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			r, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
			if err != nil {
				b.Fatal(err)
			}
			for range turns {
				res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: r.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
				if err != nil {
					b.Fatal(err)
				}
				if res.StopReason != acp.StopReasonEndTurn {
					b.Fatalf("stop reason %s", res.StopReason)
				}
			}
			if _, err := conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: r.SessionId}); err != nil {
				b.Fatal(err)
			}
			// CPU time of the whole process (agent and client) per load: on
			// a shared machine the wall clock mostly measures the others.
			var cpu time.Duration
			b.ResetTimer()
			for b.Loop() {
				before := processCPU(b)
				if _, err := conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: r.SessionId, Cwd: cwd, McpServers: []acp.McpServer{}}); err != nil {
					b.Fatal(err)
				}
				cpu += processCPU(b) - before
				b.StopTimer()
				if _, err := conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: r.SessionId}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
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
