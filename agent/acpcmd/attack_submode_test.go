package acpcmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog"
)

// The model as an attacker of a narrowed session (finding 1 of issue 26):
// its subagents were created while the session was danger-full-access;
// the editor then narrowed the session. No child may run wider than every
// ancestor's current mode — not a background child re-driven with
// send_message, not one loaded again in a new process, not a foreground
// child running while the switch happens — and the background jobs a
// child started under the wider mode die with the switch.

// escapeCalls are a child's attempts to write outside the workspace with
// both file tools and bash (targets in outside).
func escapeCalls(t *testing.T, outside string) []standin.ToolCall {
	return []standin.ToolCall{
		{ID: "w1", Name: "write", Arguments: jsonArgs(t, map[string]any{"file_path": filepath.Join(outside, "pwned-write"), "content": "x"})},
		{ID: "b1", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": "echo x > " + filepath.Join(outside, "pwned-bash"), "description": "escape"})},
	}
}

// checkEscapeDenied fails unless both escape calls of the child's log were
// denied with the marker of mode, nothing was written outside, and the
// log records the narrowing before a header of reason wantReason.
func checkEscapeDenied(t *testing.T, child []sessionlog.Event, outside string, mode sandbox.Mode, wantReason string) {
	t.Helper()
	res := results(t, child)
	for _, id := range []string{"w1", "b1"} {
		if !strings.Contains(res[id], sandbox.Marker(mode)) {
			t.Errorf("the child's %s answered %q, want a denial marked %s", id, res[id], sandbox.Marker(mode))
		}
	}
	for _, name := range []string{"pwned-write", "pwned-bash"} {
		if _, err := os.Stat(filepath.Join(outside, name)); err == nil {
			t.Errorf("the child wrote %s outside the workspace after its parent was narrowed to %s", name, mode)
		}
	}
	// The child's log says what it ran under: a sandbox/mode event
	// narrowing it, then a full header (reason: change in a live child,
	// resume in one loaded again) stating that mode.
	narrowed, reason := false, ""
	for i := range child {
		e := &child[i]
		switch {
		case e.Type == sessionlog.TypeSandboxMode:
			if d, err := sessionlog.DecodeData[sessionlog.SandboxModeData](e); err == nil && d.Mode == string(mode) && d.Source == "ancestor" {
				narrowed = true
			}
		case e.Type == sessionlog.TypeRequestHeader && narrowed && reason == "":
			if !strings.Contains(string(e.Data), "Current sandbox mode: "+string(mode)+".") {
				t.Errorf("the child's first header after the narrowing does not state mode %s", mode)
			}
			reason = "?"
			if strings.Contains(string(e.Data), `"reason":"`+wantReason+`"`) {
				reason = wantReason
			}
		}
	}
	if !narrowed || reason != wantReason {
		t.Errorf("the child's log records the narrowing to %s: sandbox/mode (source ancestor) %v, then a header of reason %s: %q", mode, narrowed, wantReason, reason)
	}
}

// outsideDir makes the directory beside the workspace the attacks aim at.
func outsideDir(t *testing.T, dir string) string {
	t.Helper()
	outside := filepath.Join(dir, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	return outside
}

// narrowings are the switches of a danger-full-access parent the tests
// make, each narrower than the children's creation mode.
var narrowings = []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite}

// TestAttackBackgroundChildOutlivesNarrowedMode: a danger-full-access
// parent starts a background child; the editor narrows the parent; the
// parent's send_message re-drives the child, which tries to write outside
// the workspace with write and bash. Both are denied with the narrowed
// mode's marker — live, and (restart) after reel was restarted and the
// parent loaded, when the child is loaded from its own log.
func TestAttackBackgroundChildOutlivesNarrowedMode(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	for _, restart := range []bool{false, true} {
		for _, mode := range narrowings {
			name := string(mode)
			if restart {
				name += "-restart"
			}
			t.Run(name, func(t *testing.T) {
				dir, ws, state := workspace(t)
				outside := outsideDir(t, dir)
				notice := &standin.Expect{LastUserContains: "finished and will do no further work"}
				script := &standin.Script{Responses: []standin.Response{
					call(t, "p1", "subagent", map[string]any{"description": "Helper", "prompt": "Wait.", "run_in_background": true}),
					{Text: "STARTED"},
					{Text: "READY", Expect: &standin.Expect{LastUserContains: "Wait."}},
					{Text: "NOTED ONE", Expect: notice},
					// After the switch (and the restart).
					call(t, "p2", "send_message", map[string]any{"subagent_id": standin.SubagentPlaceholder, "message": "Escape."}),
					{Text: "QUEUED"},
					{ToolCalls: escapeCalls(t, outside), Expect: &standin.Expect{LastUserContains: "Escape."}},
					{Text: "TRIED"},
					{Text: "NOTED TWO", Expect: notice},
				}}
				url, srv := standinURL(t, script)
				args := []string{"acp", "--state-dir", state, "--mode", "danger-full-access", "--debug-child-after-turn",
					"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model"}
				p := startProc(t, dir, baseEnv(t), args...)
				underAttack(t, p)
				p.initialize()
				sid := p.newSession(ws)
				if stop, _ := p.prompt(sid, "start a child"); stop != "end_turn" {
					t.Fatalf("prompt 1: %s", stop)
				}
				p.waitUpdate("agent_message_chunk", "NOTED ONE")
				p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": string(mode)})
				if restart {
					if code := p.finish(); code != 0 {
						t.Fatalf("exit %d", code)
					}
					p = startProc(t, dir, baseEnv(t), args...)
					underAttack(t, p)
					p.initialize()
					p.call("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
				}
				if stop, _ := p.prompt(sid, "drive it"); stop != "end_turn" {
					t.Fatalf("prompt 2: %s", stop)
				}
				p.waitUpdate("agent_message_chunk", "NOTED TWO")
				if code := p.finish(); code != 0 {
					t.Fatalf("exit %d", code)
				}
				if n := len(srv.Requests()); n != len(script.Responses) {
					t.Errorf("%d model requests, want %d", n, len(script.Responses))
				}
				kids := childLogs(t, state)
				if len(kids) != 1 {
					t.Fatalf("%d child logs, want 1", len(kids))
				}
				checkEscapeDenied(t, kids[0].Events, outside, mode, "resume")
			})
		}
	}
}

// TestAttackForegroundChildOutlivesNarrowedMode: a danger-full-access
// parent's foreground child starts a background job, then waits; the
// editor narrows the parent meanwhile. The child's job dies with the
// switch, and the child's next calls, writing outside, are denied.
func TestAttackForegroundChildOutlivesNarrowedMode(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	for _, mode := range narrowings {
		t.Run(string(mode), func(t *testing.T) {
			dir, ws, state := workspace(t)
			outside := outsideDir(t, dir)
			tok := fmt.Sprintf("reeltok%dfg%s", os.Getpid(), strings.ReplaceAll(string(mode), "-", ""))
			gate := filepath.Join(ws, "GO")
			script := &standin.Script{Responses: []standin.Response{
				call(t, "p1", "subagent", map[string]any{"description": "Helper", "prompt": "Work."}),
				{ToolCalls: []standin.ToolCall{
					{ID: "j1", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": spawn(tok) + "; sleep 1000", "run_in_background": true, "description": "a server"})},
					{ID: "g1", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": "while [ ! -e " + gate + " ]; do sleep 0.05; done; echo go", "description": "wait"})},
				}},
				{ToolCalls: escapeCalls(t, outside)},
				{Text: "TRIED"},
				{Text: "DONE"},
			}}
			url, srv := standinURL(t, script)
			p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "danger-full-access",
				"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
			underAttack(t, p)
			p.initialize()
			sid := p.newSession(ws)
			id := p.request("session/prompt", promptParams(sid, "delegate"))
			awaitRunning(t, tok, 3)
			p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": string(mode)})
			awaitGone(t, tok, "after the parent of the job's session was narrowed to "+string(mode))
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if resp, _ := p.await(id); !strings.Contains(string(resp.Result), "end_turn") {
				t.Fatalf("prompt answer %s", resp.raw)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if n := len(srv.Requests()); n != len(script.Responses) {
				t.Errorf("%d model requests, want %d", n, len(script.Responses))
			}
			kids := childLogs(t, state)
			if len(kids) != 1 {
				t.Fatalf("%d child logs, want 1", len(kids))
			}
			checkEscapeDenied(t, kids[0].Events, outside, mode, "change")
		})
	}
}

// TestAttackChildJobOutlivesNarrowedMode: a background child of a
// danger-full-access parent starts a background job, then keeps its turn
// open (its model call streams on). The editor narrows the parent: the
// child's job, started under the wider mode, dies with the switch.
func TestAttackChildJobOutlivesNarrowedMode(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	for _, mode := range narrowings {
		t.Run(string(mode), func(t *testing.T) {
			dir, ws, state := workspace(t)
			tok := fmt.Sprintf("reeltok%dbg%s", os.Getpid(), strings.ReplaceAll(string(mode), "-", ""))
			script := &standin.Script{Responses: []standin.Response{
				call(t, "p1", "subagent", map[string]any{"description": "Server", "prompt": "Serve.", "run_in_background": true}),
				{Text: "STARTED"},
				call(t, "j1", "bash", map[string]any{"command": spawn(tok) + "; sleep 1000", "run_in_background": true, "description": "a server"}),
				{Text: "serving forever", ChunkSize: 4, DelayMs: 50, Hang: true},
			}}
			url, srv := standinURL(t, script)
			p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "danger-full-access", "--debug-child-after-turn",
				"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
			underAttack(t, p)
			p.initialize()
			sid := p.newSession(ws)
			if stop, _ := p.prompt(sid, "start a server"); stop != "end_turn" {
				t.Fatalf("prompt: %s", stop)
			}
			awaitRequests(t, srv, 4, "the child's step after its job started")
			awaitRunning(t, tok, 3)
			p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": string(mode)})
			awaitGone(t, tok, "after the parent of the job's session was narrowed to "+string(mode))
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
		})
	}
}

// TestAttackChildLoadedAloneOutlivesNarrowedMode: after the restart the
// editor loads the narrowed parent's child itself (no live parent binds
// it) and prompts it to write outside: its stored ancestors' modes still
// bind it.
func TestAttackChildLoadedAloneOutlivesNarrowedMode(t *testing.T) {
	t.Parallel()
	c := startBackgroundChild(t, true)
	p := c.restart(t)
	res, _ := p.call("session/load", map[string]any{"sessionId": c.childID, "cwd": c.ws, "mcpServers": []any{}})
	if !strings.Contains(string(res), `"currentModeId":"read-only"`) {
		t.Errorf("session/load of the child answered %s, want its current mode read-only", res)
	}
	c.escape(t, p)
}

// backgroundChild is a danger-full-access session whose background child
// has run one turn, in a reel that has exited since: the first half of the
// attacks on a child loaded after a restart.
type backgroundChild struct {
	dir, ws, state, outside string
	sid, childID            string
	args                    []string
	srv                     *standin.Server
	script                  *standin.Script
}

// startBackgroundChild runs the parent's first prompt (it starts a
// background child, which answers READY) and ends reel; with narrow the
// parent is switched to read-only first.
func startBackgroundChild(t *testing.T, narrow bool) *backgroundChild {
	t.Helper()
	needLandlock(t)
	c := &backgroundChild{}
	c.dir, c.ws, c.state = workspace(t)
	c.outside = outsideDir(t, c.dir)
	c.script = &standin.Script{Responses: []standin.Response{
		call(t, "p1", "subagent", map[string]any{"description": "Helper", "prompt": "Wait.", "run_in_background": true}),
		{Text: "STARTED"},
		{Text: "READY", Expect: &standin.Expect{LastUserContains: "Wait."}},
		{Text: "NOTED ONE"},
		// After the restart, the child prompted directly.
		{ToolCalls: escapeCalls(t, c.outside), Expect: &standin.Expect{LastUserContains: "Escape."}},
		{Text: "TRIED"},
	}}
	var url string
	url, c.srv = standinURL(t, c.script)
	c.args = []string{"acp", "--state-dir", c.state, "--mode", "danger-full-access", "--debug-child-after-turn",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model"}
	p := startProc(t, c.dir, baseEnv(t), c.args...)
	underAttack(t, p)
	p.initialize()
	c.sid = p.newSession(c.ws)
	if stop, _ := p.prompt(c.sid, "start a child"); stop != "end_turn" {
		t.Fatalf("prompt 1: %s", stop)
	}
	p.waitUpdate("agent_message_chunk", "NOTED ONE")
	if narrow {
		p.call("session/set_mode", map[string]any{"sessionId": c.sid, "modeId": "read-only"})
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	kids := childLogs(t, c.state)
	if len(kids) != 1 {
		t.Fatalf("%d child logs, want 1", len(kids))
	}
	c.childID = kids[0].Header.ID
	return c
}

// restart starts a new reel on the same state, initialized.
func (c *backgroundChild) restart(t *testing.T) *proc {
	t.Helper()
	p := startProc(t, c.dir, baseEnv(t), c.args...)
	underAttack(t, p)
	p.initialize()
	return p
}

// escape prompts the child to write outside and checks that every attempt
// was denied under read-only.
func (c *backgroundChild) escape(t *testing.T, p *proc) {
	t.Helper()
	if stop, _ := p.prompt(c.childID, "Escape."); stop != "end_turn" {
		t.Fatalf("prompt 2: %s", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if n := len(c.srv.Requests()); n != len(c.script.Responses) {
		t.Errorf("%d model requests, want %d", n, len(c.script.Responses))
	}
	checkEscapeDenied(t, childLogs(t, c.state)[0].Events, c.outside, sandbox.ReadOnly, "resume")
}
