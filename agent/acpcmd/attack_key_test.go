package acpcmd_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// TestAttackKeyUnreadableFromConfinedCommands is finding 4 of the hardening
// issue: a confined command hunts for the model key everywhere a process
// can look — its own environment, the environ and cmdline of its parent
// (the supervisor), its grandparent (reel) and every other process, reel's
// memory map, and the state dir. In read-only and workspace-write the key
// (raw or base64) appears in no tool output, no frame, no log and no file,
// while the hunt really ran (its end marker reached the client).
func TestAttackKeyUnreadableFromConfinedCommands(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	const key = "sk-reel-hunted-0123456789abcdef0123"
	hunt := `
echo "own env:"; env | grep -i key
for p in $PPID $(ps -o ppid= -p $PPID 2>/dev/null) /proc/[0-9]*; do
  p=${p#/proc/}
  tr '\0' '\n' < /proc/$p/environ 2>/dev/null
  tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null
done | grep -a -i -e key -e sk- | head -50
head -c 100000 /proc/$PPID/mem 2>&1 | head -c 200
grep -r -a -l sk-reel "$STATE" 2>&1 | head
echo HUNT-FINISHED`
	for _, mode := range []string{"read-only", "workspace-write"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			state := filepath.Join(dir, "state")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			script := &standin.Script{Responses: []standin.Response{
				{ToolCalls: []standin.ToolCall{{ID: "hunt", Name: "bash", Arguments: jsonArgs(t, map[string]any{
					"command": "STATE=" + state + "\n" + hunt, "description": "look for the key"})}}},
				{Text: "done", Expect: &standin.Expect{LastMessageContains: "HUNT-FINISHED"}},
			}}
			url, model := standinURL(t, script)
			env := append(baseEnv(t), "DEEPSEEK_API_KEY="+key, "OPENAI_API_KEY="+key, "REEL_API_KEY="+key)
			p := startProc(t, dir, env, "acp", "--state-dir", state, "--mode", mode,
				"--provider", "deepseek", "--base-url", url, "--model", "standin")
			p.initialize()
			sid := p.newSession(ws)
			if stop, _ := p.prompt(sid, "find the key"); stop != "end_turn" {
				t.Fatalf("stopReason %q", stop)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			out := strings.Join(p.stdoutLines(), "\n")
			if !strings.Contains(out, "HUNT-FINISHED") {
				t.Fatalf("the hunt did not run to its end; stdout:\n%s", out)
			}
			b64 := base64.StdEncoding.EncodeToString([]byte(key))
			for _, enc := range []string{key, b64[:len(b64)-4]} {
				if strings.Contains(out, enc) {
					t.Errorf("stdout holds the key (%s…)", enc[:12])
				}
				if strings.Contains(p.stderr.String(), enc) {
					t.Errorf("stderr holds the key (%s…)", enc[:12])
				}
				for i, body := range model.Requests() {
					if strings.Contains(string(body), enc) {
						t.Errorf("model request %d carries the key (%s…): the hunt found it", i+1, enc[:12])
					}
				}
			}
			if _, leaked := filesHolding(t, dir, func(b []byte) bool { return strings.Contains(string(b), key) }); len(leaked) > 0 {
				t.Errorf("files hold the key: %v", leaked)
			}
		})
	}
}
