package acpcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// TestAttackStateDirOutOfReach is the state-dir part of finding 12: with
// the working directory containing reel's state dir (cwd = $HOME and the
// default ~/.local/state/reel), a workspace-write session could rewrite
// every session's log, its own included. Such a session fails closed: the
// model's bash append to the live log and its write over another session's
// log are both refused with a message naming the state dir, both logs stay
// intact, and the agent keeps serving (the turn ends normally).
func TestAttackStateDirOutOfReach(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	home := t.TempDir()
	state := filepath.Join(home, ".local", "state", "reel", "sessions")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(state, "OTHER.jsonl")
	const otherLog = `{"type":"session","version":0,"id":"OTHER","createdAt":1,"cwd":"/x"}` + "\n"
	if err := os.WriteFile(other, []byte(otherLog), 0o600); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(state, "OWN.jsonl")
	script := &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{
			{ID: "append", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": `echo '{"forged":true}' >> ` + own})},
			{ID: "overwrite", Name: "write", Arguments: jsonArgs(t, map[string]any{"file_path": other, "content": "forged\n"})},
		}},
		{Text: "done"},
	}}
	url, _ := standinURL(t, script)
	p := startProc(t, home, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-state-test"), "acp", "--state-dir", state,
		"--session-id", "OWN", "--mode", "workspace-write", "--provider", "deepseek", "--base-url", url, "--model", "standin")
	p.initialize()
	sid := p.newSession(home)
	stop, frames := p.prompt(sid, "rewrite the logs")
	if stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	results := toolResults(frames)
	for _, id := range []string{"append", "overwrite"} {
		if got := results[id]; !strings.HasPrefix(got, "failed: ") || !strings.Contains(got, "contains reel's own state") {
			t.Errorf("%s: result %q, want a refusal naming reel's state", id, got)
		}
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if b, _ := os.ReadFile(other); string(b) != otherLog {
		t.Errorf("another session's log was rewritten: %q", b)
	}
	b, err := os.ReadFile(own)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		if line == `{"forged":true}` {
			t.Errorf("the live log got a forged record at line %d", i+1)
		}
	}
	if !strings.Contains(p.stderr.String(), "workspace-write refused") {
		t.Errorf("the refusal was not logged loudly on stderr:\n%s", p.stderr.String())
	}
}
