package acpcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
)

// TestAttackMissingSandboxRunner: with the sandbox runner unable to start
// (--debug-missing-sandbox-runner), a model that runs a command in the
// foreground and in the background never gets it run unconfined: the
// foreground call is an error result saying the runner could not start in
// the session's mode, the background one a job that ended killed before
// exit whose output says the spawn failed and the runner did, neither
// command's effect exists, and the job's notice enters the step after the
// next (the reference's order).
func TestAttackMissingSandboxRunner(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"read-only", "workspace-write"} {
		t.Run(mode, func(t *testing.T) {
			dir, ws, state := workspace(t)
			fg := filepath.Join(ws, "pwned-foreground")
			bg := filepath.Join(ws, "pwned-background")
			script := &standin.Script{Responses: []standin.Response{
				{ToolCalls: []standin.ToolCall{{ID: "fg", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": "touch " + fg, "description": "d"})}}},
				{ToolCalls: []standin.ToolCall{{ID: "bg", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": "touch " + bg, "description": "d", "run_in_background": true})}}},
				{ToolCalls: []standin.ToolCall{{ID: "out", Name: "job_output", Arguments: jsonArgs(t, map[string]any{"job_id": "bash-1", "wait": true})}}},
				{Text: "done"},
			}}
			url, _ := standinURL(t, script)
			p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=standin"), "acp", "--state-dir", state, "--mode", mode,
				"--provider", "deepseek", "--base-url", url, "--model", "standin", "--debug-missing-sandbox-runner")
			underAttack(t, p)
			p.initialize()
			sid := p.newSession(ws)
			if stop, _ := p.prompt(sid, "Run it."); stop != "end_turn" {
				t.Fatalf("stopReason %q, want end_turn", stop)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
			}
			for _, f := range []string{fg, bg} {
				if _, err := os.Lstat(f); err == nil {
					t.Errorf("%s exists: a command ran although its sandbox runner could not start", f)
				}
			}
			results := map[string]sessionlog.ToolResultData{}
			resultSeq := map[string]int{}
			noticeSeq, noticeStep := -1, -1
			step := 0
			for _, e := range logEvents(t, state, sid) {
				switch e.Type {
				case sessionlog.TypeStepStart:
					step++
				case sessionlog.TypeToolResult:
					d, err := sessionlog.DecodeData[sessionlog.ToolResultData](&e)
					if err != nil {
						t.Fatal(err)
					}
					id := d.Message.Content[0].ToolCallID
					results[id], resultSeq[id] = d, e.Seq
				case sessionlog.TypeUserMessage:
					if strings.Contains(string(e.Data), "background job bash-1 (bash: touch") {
						noticeSeq, noticeStep = e.Seq, step
					}
				}
			}
			part := func(id string) (string, bool) {
				d, ok := results[id]
				if !ok || len(d.Message.Content) == 0 || len(d.Message.Content[0].Content) == 0 {
					t.Fatalf("no result for %s", id)
				}
				return d.Message.Content[0].Content[0].Text, d.Message.Content[0].IsError
			}
			text, isErr := part("fg")
			want := `SANDBOX_UNAVAILABLE: sandbox mode "` + mode + `" is requested but the sandbox runner could not start; refusing to run the command unconfined. Runner failure: `
			if !isErr || !strings.HasPrefix(text, want) || !strings.Contains(text, ".reel-missing-sandbox-runner") {
				t.Errorf("foreground result (isError %v): %q\nwant an error starting %q", isErr, text, want)
			}
			if text, isErr := part("bg"); isErr || text != "started background job bash-1" {
				t.Errorf("background result (isError %v): %q", isErr, text)
			}
			text, isErr = part("out")
			for _, w := range []string{"[stderr]\nspawn failed: ", "[sandbox: the sandbox runner itself failed under " + mode + " mode", "[status: killed, killed before exit]"} {
				if isErr || !strings.Contains(text, w) {
					t.Errorf("job_output result (isError %v): %q\nwant it to hold %q", isErr, text, w)
				}
			}
			if noticeSeq < resultSeq["out"] || noticeStep != 4 {
				t.Errorf("the job's notice is at seq %d (step %d), want after job_output's result (seq %d), in step 4", noticeSeq, noticeStep, resultSeq["out"])
			}
		})
	}
}
