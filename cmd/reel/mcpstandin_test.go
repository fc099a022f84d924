package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/mcp"
)

// TestMCPStandinOverHTTP: reel mcp-standin --http serves the stand-in MCP
// server that the README tells users to try: it says its URL on stderr,
// reel's MCP client connects and calls a tool, and SIGTERM ends it.
func TestMCPStandinOverHTTP(t *testing.T) {
	for _, sse := range []bool{false, true} {
		args := []string{"mcp-standin", "--http", "127.0.0.1:0"}
		transport := mcp.TransportHTTP
		if sse {
			args, transport = append(args, "--sse"), mcp.TransportSSE
		}
		cmd := exec.Command(reelBin, args...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stderr).ReadString('\n')
		if err != nil {
			t.Fatalf("no first line on stderr: %v", err)
		}
		url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`).FindString(line)
		if url == "" {
			t.Fatalf("no URL in %q", line)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		set, err := mcp.Connect(ctx, []mcp.ServerConfig{{Name: "s", Transport: transport, URL: url}}, mcp.Options{})
		cancel()
		if err != nil {
			t.Fatalf("connect %s (sse %v): %v", url, sse, err)
		}
		tool, ok := set.Tool("mcp__s__add")
		if !ok {
			t.Fatal("no add tool")
		}
		res, err := tool.Run(context.Background(), nil, json.RawMessage(`{"a":40,"b":2}`))
		if err != nil || res.IsError || !strings.HasPrefix(res.Text, "42") {
			t.Errorf("add: %+v, %v", res, err)
		}
		_ = set.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("reel mcp-standin --http after SIGTERM: %v", err)
		}
	}
}
