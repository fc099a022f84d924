package acpcmd_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/sandbox"
)

// needLandlock skips (or, under CI=true, fails) a test that needs the
// kernel sandbox.
func needLandlock(t *testing.T) {
	t.Helper()
	if abi, err := sandbox.Probe(); abi == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Landlock is unavailable (%v): this attack test needs the real kernel sandbox", err)
		}
		t.Skipf("Landlock is unavailable (%v)", err)
	}
}

// standinURL serves script on a loopback port for the test's life and
// returns the base URL reel's provider should use.
func standinURL(t *testing.T, script *standin.Script) (string, *standin.Server) {
	t.Helper()
	if err := script.Validate(); err != nil {
		t.Fatal(err)
	}
	model := standin.New(script, nil)
	addr, err := model.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = model.Close() })
	return "http://" + addr + "/v1", model
}

// promptAllowing runs a prompt and answers every session/request_permission reel sends
// with allow_once (the most dangerous answer), recording what it was shown,
// until the prompt's response arrives.
func promptAllowing(t *testing.T, p *proc, sid, text string) (stop string, asked []json.RawMessage, frames []frame) {
	t.Helper()
	stop, frames = promptWith(t, p, sid, text, func(params json.RawMessage) string {
		asked = append(asked, params)
		return "allow_once"
	})
	return stop, asked, frames
}

// promptWith runs a prompt, answering every session/request_permission
// with the option id answer picks for its params, until the prompt's
// response arrives; it returns the stop reason and every frame read.
func promptWith(t *testing.T, p *proc, sid, text string, answer func(params json.RawMessage) string) (stop string, frames []frame) {
	t.Helper()
	stop = promptServing(t, p, sid, text, func(f frame) {
		frames = append(frames, f)
		if f.Method == "session/request_permission" {
			selectOption(p, f, answer(f.Params))
		}
	})
	return stop, frames
}

// promptServing runs a prompt, handing every frame read to serve (the
// prompt's response last), until the prompt's response arrives; a failed
// prompt fails the test. It returns the stop reason.
func promptServing(t *testing.T, p *proc, sid, text string, serve func(f frame)) string {
	t.Helper()
	id := p.request("session/prompt", promptParams(sid, text))
	for {
		f := p.next()
		serve(f)
		if f.isResponse() && sameID(f.ID, id) {
			if f.Error != nil {
				t.Fatalf("prompt failed: %s", f.raw)
			}
			var r struct {
				StopReason string `json:"stopReason"`
			}
			_ = json.Unmarshal(f.Result, &r)
			return r.StopReason
		}
	}
}

// selectOption answers the session/request_permission f with optionID.
func selectOption(p *proc, f frame, optionID string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.ID,
		"result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": optionID}}})
	p.send(string(b))
}

// toolUpdate is one tool_call_update notification: its call, its status
// ("" when it sets none) and the text of its content blocks.
type toolUpdate struct{ id, status, text string }

// toolUpdates decodes the tool_call_update notifications among frames, in
// order.
func toolUpdates(frames []frame) []toolUpdate {
	var out []toolUpdate
	for _, f := range frames {
		if f.Method != "session/update" {
			continue
		}
		var p struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
				ToolCallID    string `json:"toolCallId"`
				Status        string `json:"status"`
				Content       []struct {
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"content"`
			} `json:"update"`
		}
		if json.Unmarshal(f.Params, &p) != nil || p.Update.SessionUpdate != "tool_call_update" {
			continue
		}
		var texts []string
		for _, c := range p.Update.Content {
			texts = append(texts, c.Content.Text)
		}
		out = append(out, toolUpdate{p.Update.ToolCallID, p.Update.Status, strings.Join(texts, "\n")})
	}
	return out
}

// toolResults returns "STATUS: TEXT" of every call's final update
// (completed or failed), by call id.
func toolResults(frames []frame) map[string]string {
	out := map[string]string{}
	for _, u := range toolUpdates(frames) {
		if u.status == "completed" || u.status == "failed" {
			out[u.id] = u.status + ": " + u.text
		}
	}
	return out
}

// TestAttackApprovalShowsWhatRuns is finding 1 of the hardening issue: the
// model sends arguments whose names differ only in case (or repeat), so a
// case-insensitive decoder for the permission request and an exact one for
// the tool would show one command and run another. Through the real
// binary, in both confining modes, with a client that approves everything:
// no such call runs, none reaches the user as a permission request, and the
// model is told which names collide. A well-formed escalation still asks,
// shows the whole command, and runs exactly that.
func TestAttackApprovalShowsWhatRuns(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	for _, mode := range []string{"read-only", "workspace-write"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			outside := filepath.Join(dir, "outside")
			for _, d := range []string{ws, outside} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			pwned := filepath.Join(outside, "pwned")
			arg := func(v map[string]string) string {
				b, _ := json.Marshal(v)
				// json.Marshal sorts keys; the attack needs the exact key
				// spellings, which it keeps.
				return string(b)
			}
			attacks := []standin.ToolCall{
				{ID: "case_bash", Name: "bash", Arguments: `{"command":"touch ` + pwned + `.1","Command":"ls -la","sandbox_permissions":"danger-full-access","justification":"list"}`},
				{ID: "case_bash_rev", Name: "bash", Arguments: `{"Command":"ls -la","command":"touch ` + pwned + `.2","sandbox_permissions":"danger-full-access"}`},
				{ID: "dup_bash", Name: "bash", Arguments: `{"command":"ls -la","command":"touch ` + pwned + `.3","sandbox_permissions":"danger-full-access"}`},
				{ID: "escaped_dup", Name: "bash", Arguments: `{"command":"ls -la","comm\u0061nd":"touch ` + pwned + `.4","sandbox_permissions":"danger-full-access"}`},
				{ID: "case_write", Name: "write", Arguments: `{"file_path":"inside.txt","File_Path":"` + pwned + `.5","content":"x","sandbox_permissions":"danger-full-access"}`},
				{ID: "case_perm", Name: "bash", Arguments: `{"command":"touch ` + pwned + `.6","Sandbox_Permissions":"danger-full-access"}`},
			}
			legit := standin.ToolCall{ID: "legit", Name: "bash", Arguments: arg(map[string]string{
				"command":             "touch " + pwned + ".legit && echo line2-of-the-script",
				"sandbox_permissions": "danger-full-access", "justification": "asked by the user"})}
			script := &standin.Script{Responses: []standin.Response{
				{ToolCalls: attacks},
				{ToolCalls: []standin.ToolCall{legit}},
				{Text: "done"},
			}}
			url, _ := standinURL(t, script)
			env := append(baseEnv(t), "DEEPSEEK_API_KEY=sk-attack-test")
			p := startProc(t, dir, env, "acp", "--state-dir", filepath.Join(dir, "state"), "--mode", mode,
				"--provider", "deepseek", "--base-url", url, "--model", "standin")
			p.initialize()
			sid := p.newSession(ws)
			stop, asked, frames := promptAllowing(t, p, sid, "attack")
			if stop != "end_turn" {
				t.Fatalf("stopReason %q", stop)
			}
			results := toolResults(frames)
			for _, a := range attacks {
				got := results[a.ID]
				if !strings.HasPrefix(got, "failed: ") || !strings.Contains(got, "tools: ") {
					t.Errorf("%s: result %q, want a failed call naming the argument problem", a.ID, got)
				}
			}
			for i := 1; i <= 6; i++ {
				if _, err := os.Stat(pwned + "." + string(rune('0'+i))); err == nil {
					t.Errorf("attack %d ran: %s.%d exists", i, pwned, i)
				}
			}
			if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err == nil {
				t.Errorf("the case-colliding write wrote inside.txt")
			}
			// Only the well-formed call asked, and it showed the whole
			// script; the approved call ran exactly that.
			if len(asked) != 1 {
				t.Fatalf("%d permission requests, want 1 (only the well-formed escalation): %s", len(asked), asked)
			}
			var req struct {
				ToolCall struct {
					ToolCallID string `json:"toolCallId"`
					Title      string `json:"title"`
					Content    []struct {
						Content struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"content"`
					RawInput json.RawMessage `json:"rawInput"`
				} `json:"toolCall"`
			}
			if err := json.Unmarshal(asked[0], &req); err != nil {
				t.Fatal(err)
			}
			if req.ToolCall.ToolCallID != "legit" || len(req.ToolCall.Content) == 0 ||
				!strings.Contains(req.ToolCall.Content[0].Content.Text, "touch "+pwned+".legit && echo line2-of-the-script") {
				t.Errorf("permission request does not show the whole command: %s", asked[0])
			}
			if string(req.ToolCall.RawInput) != legit.Arguments {
				t.Errorf("permission rawInput %s, want the call's arguments %s", req.ToolCall.RawInput, legit.Arguments)
			}
			if got := results["legit"]; !strings.Contains(got, "line2-of-the-script") {
				t.Errorf("approved call result %q", got)
			}
			if _, err := os.Stat(pwned + ".legit"); err != nil {
				t.Errorf("the approved command did not run: %v", err)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
		})
	}
}

// jsonArgs encodes tool-call arguments.
func jsonArgs(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// filesHolding walks dir and returns how many regular files it read and
// the paths of those whose bytes leak reports (a key left behind in a log,
// a lock, a spill file, the workspace).
func filesHolding(t *testing.T, dir string, leak func([]byte) bool) (seen int, leaked []string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		seen++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if leak(b) {
			leaked = append(leaked, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seen, leaked
}
