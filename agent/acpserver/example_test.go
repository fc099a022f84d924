package acpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/acpserver"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// Serve an agent whose sessions are JSONL logs in a directory. Here the
// client is one pipelined initialize frame and the model an empty replay
// script; reel acp wires os.Stdin, os.Stdout, a live or replayed provider
// and the Landlock sandbox the same way.
func ExampleServer_Serve() {
	dir, err := os.MkdirTemp("", "reel-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	store, err := jsonl.Open(dir, jsonl.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	eng, err := agent.New(agent.Config{
		Store:    store,
		Models:   agent.SharedModels{Provider: replay.New(nil, 0, dir)},
		Provider: "replay", Model: "replay",
		SpillDir: dir,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := acpserver.New(acpserver.Config{Engine: eng, Version: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	var out bytes.Buffer
	// Serve returns when the input ends, after answering what it read.
	if err := srv.Serve(context.Background(), in, &out); err != nil {
		fmt.Println(err)
		return
	}
	var resp struct {
		Result struct {
			AgentInfo         struct{ Name, Version string } `json:"agentInfo"`
			AgentCapabilities struct {
				LoadSession bool `json:"loadSession"`
			} `json:"agentCapabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Result.AgentInfo.Name, resp.Result.AgentInfo.Version, "loadSession:", resp.Result.AgentCapabilities.LoadSession)
	// Output: reel example loadSession: true
}
