package acpcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// TestAttackInstructionFilesLeakNothing: a workspace (a cloned repository
// can ship anything) whose AGENTS.md and CLAUDE.md are links to reel's own
// /proc environ, to /dev/zero and to a FIFO. reel injects instruction files
// into the conversation, so a followed link would put the model key into
// the log and the model request, or hang the turn on the FIFO. The turn
// must end, and neither the key nor the device contents may reach the
// model, the log or the client.
func TestAttackInstructionFilesLeakNothing(t *testing.T) {
	t.Parallel()
	const key = "sk-reel-instructions-0123456789abcdef"
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		filepath.Join(ws, "AGENTS.md"):        "/proc/self/environ",
		filepath.Join(ws, "CLAUDE.md"):        "/dev/zero",
		filepath.Join(ws, "AGENTS.local.md"):  "/proc/1/environ",
		filepath.Join(ws, "sub", "AGENTS.md"): "../fifo",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := &standin.Script{Responses: []standin.Response{
		// A read under sub/ makes reel look for sub/AGENTS.md (the FIFO).
		{ToolCalls: []standin.ToolCall{{ID: "r", Name: "read", Arguments: jsonArgs(t, map[string]any{"file_path": "sub/none.txt"})}}},
		{Text: "done"},
	}}
	url, model := standinURL(t, script)
	env := append(baseEnv(t), "DEEPSEEK_API_KEY="+key)
	p := startProc(t, dir, env, "acp", "--state-dir", state, "--mode", "workspace-write",
		"--provider", "deepseek", "--base-url", url, "--model", "standin")
	p.initialize()
	sid := p.newSession(ws)
	if stop, _ := p.prompt(sid, "look around"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for i, body := range model.Requests() {
		if strings.Contains(string(body), key) {
			t.Errorf("model request %d carries the key", i+1)
		}
		if strings.Contains(string(body), `\u0000\u0000\u0000`) {
			t.Errorf("model request %d carries /dev/zero", i+1)
		}
	}
	if strings.Contains(strings.Join(p.stdoutLines(), "\n"), key) || strings.Contains(p.stderr.String(), key) {
		t.Error("stdout or stderr holds the key")
	}
	if _, leaked := filesHolding(t, dir, func(b []byte) bool { return strings.Contains(string(b), key) }); len(leaked) > 0 {
		t.Errorf("files hold the key: %v", leaked)
	}
}
