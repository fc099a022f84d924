package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/tools"
)

// panicTool is a tool with a bug: every call panics.
type panicTool struct{}

func (panicTool) Name() string { return "boom" }
func (panicTool) Schema() tools.Schema {
	return tools.Schema{Name: "boom", Parameters: json.RawMessage(`{}`)}
}
func (panicTool) Run(_ context.Context, _ *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var seen []byte
	return tools.Result{Text: string(seen[len(raw)])}, nil // index out of range: a runtime panic
}

// TestToolPanicIsTheCallsError: a panicking tool gives that call an error
// result naming the tool, and the process (every other session) lives on.
func TestToolPanicIsTheCallsError(t *testing.T) {
	var logs strings.Builder
	e := &Engine{log: slog.New(slog.NewTextHandler(&logs, nil))}
	r := &run{e: e, s: &Session{eng: e, id: "s1"}}
	res, err := r.runContained(context.Background(), panicTool{}, &tools.Env{Cwd: t.TempDir()}, nil)
	if err != nil {
		t.Fatalf("error %v, want an error result", err)
	}
	if !res.IsError || !strings.Contains(res.Text, "boom tool failed") || !strings.Contains(res.Text, "index out of range") {
		t.Errorf("result %+v", res)
	}
	if !strings.Contains(logs.String(), "tool panicked") || !strings.Contains(logs.String(), "stack=") {
		t.Errorf("the panic was not logged with its stack: %s", logs.String())
	}
}
