package terminal

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/tools"
)

// hostJobs is a session's Owner as the engine gives it: terminals and a
// job table.
type hostJobs struct {
	table *tools.Jobs
	scope Scope
}

func (h hostJobs) Terminals() Scope                              { return h.scope }
func (h hostJobs) Jobs() *tools.Jobs                             { return h.table }
func (h hostJobs) Own(stop func()) func()                        { return h.table.Own(stop) }
func (h hostJobs) JobSandbox(code int, s string, e error) string { return "" }

// TestBackgroundSend: run_in_background starts a pty-send job that
// job_output reads and job_kill interrupts; the terminal refuses a second
// send while it runs, and takes one again once it ended.
func TestBackgroundSend(t *testing.T) {
	m := &Manager{}
	t.Cleanup(func() { m.CloseAll() })
	env := &tools.Env{Cwd: t.TempDir()}
	env.Owner = hostJobs{table: tools.NewJobs(0, nil), scope: Scope{Manager: m, Mode: "danger-full-access", Cwd: env.Cwd, Env: os.Environ()}}
	ctx := context.Background()
	call := func(tool tools.Tool, args map[string]any) tools.Result {
		t.Helper()
		raw, _ := json.Marshal(args)
		res, err := tool.Run(ctx, env, raw)
		if err != nil {
			t.Fatalf("%s %s: %v", tool.Name(), raw, err)
		}
		return res
	}
	steps := []struct {
		tool tools.Tool
		args map[string]any
		want string
	}{
		{openTool{}, map[string]any{"type": "shell"}, "started terminal session pty-1 [type: shell]"},
		{sendTool{}, map[string]any{"sessionId": "pty-1", "text": "sleep 0.3; echo BG_DONE", "run_in_background": true}, "started background job pty-send-1"},
		{sendTool{}, map[string]any{"sessionId": "pty-1", "text": "echo busy"}, "Error: PTY session pty-1 already has an active send"},
		{tools.JobOutput{}, map[string]any{"job_id": "pty-send-1", "wait": true}, "BG_DONE\nreel> \n[status: completed, wait: stdin_read]"},
		{sendTool{}, map[string]any{"sessionId": "pty-1", "text": "sleep 1000", "run_in_background": true}, "started background job pty-send-2"},
		// The kill is to find the sleep started (a SIGINT while the shell
		// still reads the line aborts the line instead).
		{nil, map[string]any{"shell": false}, ""},
		{tools.JobKill{}, map[string]any{"job_id": "pty-send-2"}, "pty-send-2"},
		{tools.JobOutput{}, map[string]any{"job_id": "pty-send-2", "wait": true}, "[status: killed, interrupted]"},
		// The shell back in the foreground: the interrupt reached the sleep.
		{nil, map[string]any{"shell": true}, ""},
		{sendTool{}, map[string]any{"sessionId": "pty-1", "text": "echo back"}, "back\nreel> \n[wait: stdin_read]"},
	}
	for i, st := range steps {
		if st.tool == nil {
			awaitForeground(t, m, st.args["shell"] == true)
			continue
		}
		res := call(st.tool, st.args)
		if !strings.Contains(res.Text, st.want) {
			t.Fatalf("step %d %s: %q, want it to hold %q", i, st.tool.Name(), res.Text, st.want)
		}
	}
}

// awaitForeground waits until pty-1's foreground is the shell (shell) or a
// command (!shell).
func awaitForeground(t *testing.T, m *Manager, shell bool) {
	t.Helper()
	term, err := m.Get("pty-1")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for fg := term.foreground(); fg <= 0 || (fg == term.shellSession()) != shell; fg = term.foreground() {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal's foreground never became the shell's (%v): it is %d", shell, fg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
