package harness_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/reel-agent/reel/harness/rpcclient"
)

// agentCommand is an ACP agent's command, not started, in dir with only
// PATH and HOME=dir set, with pipes to its stdin and from its stdout.
func agentCommand(b testing.TB, argv []string, dir string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	return cmd, stdin, stdout
}

// startAgent starts an ACP agent process and returns a client on it.
func startAgent(b *testing.B, argv []string, dir string) (*rpcclient.Client, func()) {
	b.Helper()
	cmd, stdin, stdout := agentCommand(b, argv, dir)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := rpcclient.New(context.Background(), stdout, stdin, rpcclient.Options{})
	return c, func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}
}

// BenchmarkACPLatency measures, for reel (replaying a recorded text turn)
// and for acp-go-sdk's own example agent side by side in one run:
// process start → initialize + session/new answered ("ready-ms"), and
// session/prompt → first agent_message_chunk ("first-chunk-ms").
func BenchmarkACPLatency(b *testing.B) {
	exDir := b.TempDir()
	example := filepath.Join(exDir, "example-agent")
	build := exec.Command("go", "build", "-o", example, "github.com/coder/acp-go-sdk/example/agent")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build the SDK example agent: %v\n%s", err, out)
	}
	fixture, _ := filepath.Abs(filepath.Join("..", "fixtures", "text-turn", "session.jsonl"))
	agents := []struct {
		name string
		argv func(dir string) []string
	}{
		{"reel", func(dir string) []string {
			return []string{reelExe, "acp", "--state-dir", filepath.Join(dir, "state"), "--replay", fixture, "--log-level", "error"}
		}},
		{"sdk-example", func(string) []string { return []string{example} }},
	}
	for _, a := range agents {
		b.Run(a.name, func(b *testing.B) {
			var ready, first time.Duration
			for b.Loop() {
				dir := b.TempDir()
				ctx := context.Background()
				t0 := time.Now()
				c, stop := startAgent(b, a.argv(dir), dir)
				if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
					b.Fatal(err)
				}
				var s struct {
					SessionID string `json:"sessionId"`
				}
				if err := c.Call(ctx, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}, &s); err != nil {
					b.Fatal(err)
				}
				ready += time.Since(t0)
				t1 := time.Now()
				done := make(chan error, 1)
				go func() {
					done <- c.Call(ctx, "session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []map[string]any{{"type": "text", "text": "Say hello in five words or fewer. No tools."}}}, nil)
				}()
				if _, err := c.WaitFor(ctx, func(n rpcclient.Notification) bool { return n.Update == "agent_message_chunk" }); err != nil {
					b.Fatal(err)
				}
				first += time.Since(t1)
				if a.name == "reel" {
					if err := <-done; err != nil {
						b.Fatal(err)
					}
				}
				stop()
			}
			b.ReportMetric(float64(ready.Microseconds())/1000/float64(b.N), "ready-ms")
			b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "first-chunk-ms")
		})
	}
}
