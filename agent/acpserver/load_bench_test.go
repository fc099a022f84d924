package acpserver_test

import (
	"context"
	"fmt"
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
			// CPU time of the whole process (agent and client) per load: on
			// a shared machine the wall clock mostly measures the others.
			var cpu time.Duration
			b.ResetTimer()
			for b.Loop() {
				before := processCPU(b)
				if _, err := conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acp.McpServer{}}); err != nil {
					b.Fatal(err)
				}
				cpu += processCPU(b) - before
				b.StopTimer()
				if _, err := conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: sid}); err != nil {
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
