package acpcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/codemode"
	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog"
)

// The model as an attacker through run_code (code mode, issue 29): its
// program runs in reel's own process, so it must not be able to hang a
// turn, take reel's memory, flood the log with tool calls, or reach
// further through a tool call than a direct call of the same tool would.

// codeCall is a scripted response calling run_code with program code.
func codeCall(t *testing.T, id, code string) standin.Response {
	return call(t, id, codemode.ToolName, map[string]any{"code": code, "description": "attack"})
}

// codeProc starts reel in code mode against script, with extra flags.
func codeProc(t *testing.T, dir, state, mode string, script *standin.Script, extra ...string) *proc {
	t.Helper()
	url, _ := standinURL(t, script)
	args := append([]string{"acp", "--state-dir", state, "--mode", mode, "--code-mode",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model"}, extra...)
	p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-codemode-attack"), args...)
	p.initialize()
	return p
}

// dispatches returns the tool/code-dispatch records of a log, in order.
func dispatches(t *testing.T, events []sessionlog.Event) []codemode.DispatchData {
	t.Helper()
	var out []codemode.DispatchData
	for i := range events {
		if e := &events[i]; e.Type == codemode.TypeDispatch {
			var d codemode.DispatchData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
	}
	return out
}

// TestAttackCodeModeRunaway: a program that loops forever, one that
// allocates without bound, and one that calls a tool ten thousand times
// (catching every failure to go on) each end with their run's failure —
// the busy-time budget, the heap bound, the tool-call budget — as an
// error result of the run_code call, the turn ends normally and the
// session answers its next prompt. reel runs under an address-space limit
// and a watchdog, so an unbounded run fails the test as a crash or hang.
func TestAttackCodeModeRunaway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, code string
		flags      []string
		want       string // the run_code result's prefix
		calls      int    // tool calls logged (-1: any)
	}{
		{"loop forever", "while (true) {}", []string{"--code-compute", "1s"},
			"code run failed (timeout): compute budget exhausted (1000ms busy)", 0},
		{"recurse forever", "const f = (n) => f(n + 1) + 1; return f(0);", nil,
			"code run failed (exception): RangeError: Maximum call stack size exceeded", 0},
		{"allocate without bound", `const keep = []; for (let i = 0; ; i++) keep.push("x".repeat(1 << 20) + i);`, []string{"--code-max-heap-mb", "64"},
			"code run failed (memory): the program's memory grew past 64 MiB", 0},
		{"ten thousand tool calls", `let ok = 0;
for (let i = 0; i < 10000; i++) {
  try { await tools.read({ file_path: "f.txt" }); ok++; } catch (e) { console.log(String(e)); }
}
return ok;`, nil, "code run failed (call-limit): tool-call budget exhausted (1000 calls in one run)", codemode.DefaultMaxCalls},
		{"print without bound", `for (;;) console.log("y".repeat(4096));`, nil,
			"code run failed (output-limit): outer output exceeded 262144 bytes", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ws, state := workspace(t)
			if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("one line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			script := &standin.Script{Responses: []standin.Response{
				codeCall(t, "run", tc.code),
				{Text: "SURVIVED"},
				{Text: "STILL HERE"},
			}}
			p := codeProc(t, dir, state, "workspace-write", script, tc.flags...)
			underAttack(t, p)
			sid := p.newSession(ws)
			stop, frames := p.prompt(sid, "attack")
			if stop != "end_turn" {
				t.Fatalf("stopReason %q", stop)
			}
			events := logEvents(t, state, sid)
			got := results(t, events)["run"]
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("run_code answered %q, want it to start %q", clip(got, 300), tc.want)
			}
			if len(got) > codemode.DefaultMaxOutput+4096 {
				t.Errorf("run_code's result is %d bytes, past the output bound", len(got))
			}
			if n := len(dispatches(t, events)); tc.calls >= 0 && n != tc.calls {
				t.Errorf("%d tool calls logged, want %d", n, tc.calls)
			}
			if !strings.Contains(toolResults(frames)["run"], "failed: ") {
				t.Errorf("the client was not shown a failed run_code call: %q", clip(toolResults(frames)["run"], 200))
			}
			if stop, _ := p.prompt(sid, "again"); stop != "end_turn" {
				t.Fatalf("the next prompt's stopReason %q", stop)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
		})
	}
}

// clip shortens s for a failure message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// TestAttackCodeModeCancel: a program that loops forever, past every
// budget but the session's cancel, ends when the client cancels the turn:
// the prompt answers "cancelled", the run_code result says the run was
// aborted, and the session answers its next prompt.
func TestAttackCodeModeCancel(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	started := filepath.Join(ws, "started")
	script := &standin.Script{Responses: []standin.Response{
		codeCall(t, "run", `await tools.bash({ command: "touch started", description: "mark" }); for (;;) {}`),
		{Text: "AFTER"},
	}}
	p := codeProc(t, dir, state, "workspace-write", script)
	underAttack(t, p)
	sid := p.newSession(ws)
	id := p.request("session/prompt", promptParams(sid, "spin"))
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the program never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.notify("session/cancel", map[string]any{"sessionId": sid})
	resp, _ := p.await(id)
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil || r.StopReason != "cancelled" {
		t.Fatalf("the spinning program's prompt answered %s", resp.raw)
	}
	if got := results(t, logEvents(t, state, sid))["run"]; !strings.HasPrefix(got, "code run failed (abort)") {
		t.Errorf("run_code answered %q, want an aborted run", got)
	}
	if stop, _ := p.prompt(sid, "again"); stop != "end_turn" {
		t.Fatalf("the next prompt's stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestAttackCodeModeEscalation: in both confining modes, a program's bash
// and write aimed outside the workspace are denied exactly as the same
// direct calls are (the same result text, with the mode's marker), nothing
// is written, and the program sees the denial as a ToolCallError. A call
// asking for a wider mode puts the question to the editor with the whole
// command: rejected, nothing runs; approved, exactly that command runs. The
// model cannot call a tool other than run_code directly, nor run_code from
// inside a program.
func TestAttackCodeModeEscalation(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	for _, mode := range []string{"read-only", "workspace-write"} {
		t.Run(mode, func(t *testing.T) {
			dir, ws, state := workspace(t)
			outside := outsideDir(t, dir)
			pwned := filepath.Join(outside, "pwned")
			escape := map[string]any{"command": "echo x > " + pwned + "-bash", "description": "escape"}
			write := map[string]any{"file_path": pwned + "-write", "content": "x"}
			args := func(v map[string]any) string { return jsonArgs(t, v) }
			program := `const out = [];
for (const [name, args] of [["bash", ` + args(escape) + `], ["write", ` + args(write) + `]]) {
  try {
    const r = await tools[name](args);
    out.push(name + ": " + (r.sandbox && r.sandbox.denied ? "denied under " + r.sandbox.mode + ", exit " + r.exitCode : "ran"));
  }
  catch (e) { out.push(name + ": " + e.name + " from " + e.toolName); }
}
return out.join("\n");`
			ask := func(file string) string {
				return `try { const r = await tools.bash({ command: "touch ` + filepath.Join(outside, file) + `", description: "wider",
  sandbox_permissions: "danger-full-access", justification: "the user asked" }); return "exit " + r.exitCode; }
catch (e) { return e.name + ": " + e.message; }`
			}
			script := &standin.Script{Responses: []standin.Response{
				codeCall(t, "deny", program),
				codeCall(t, "rejected", ask("rejected")),
				codeCall(t, "approved", ask("approved")),
				{ToolCalls: []standin.ToolCall{{ID: "direct", Name: "bash", Arguments: args(map[string]any{"command": "touch " + filepath.Join(ws, "direct"), "description": "direct"})}}},
				codeCall(t, "nested", `return await tools.run_code({ code: "return 1", description: "nested" });`),
				codeCall(t, "nested2", `return await tools["run_code"]({ code: "return 1", description: "nested" });`),
				{Text: "done"},
			}}
			p := codeProc(t, dir, state, mode, script)
			sid := p.newSession(ws)
			answers := []string{"reject_once", "allow_once"}
			var asked []json.RawMessage
			stop, _ := promptWith(t, p, sid, "attack", func(params json.RawMessage) string {
				asked = append(asked, params)
				if len(asked) > len(answers) {
					return "reject_once"
				}
				return answers[len(asked)-1]
			})
			if stop != "end_turn" {
				t.Fatalf("stopReason %q", stop)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			events := logEvents(t, state, sid)
			res := results(t, events)
			if got, want := res["deny"], "bash: denied under "+mode+", exit 1\nwrite: ToolCallError from write"; got != want {
				t.Errorf("the escaping program returned %q, want %q", got, want)
			}
			for _, f := range []string{"pwned-bash", "pwned-write", "rejected"} {
				if _, err := os.Stat(filepath.Join(outside, f)); err == nil {
					t.Errorf("%s was written outside the workspace in %s", f, mode)
				}
			}
			inner := dispatches(t, events)
			if len(inner) != 4 {
				t.Fatalf("%d program tool calls logged, want 4 (bash, write, and two escalations): %+v", len(inner), inner)
			}
			// What a direct call of the same tool answers, in a session
			// without code mode.
			direct := directResults(t, mode, ws, outside, []standin.ToolCall{
				{ID: "bash", Name: "bash", Arguments: args(escape)},
				{ID: "write", Name: "write", Arguments: args(write)},
			})
			// A bash that ran is no error result whatever the sandbox
			// denied it (the marker says so); a refused write is.
			for i, name := range []string{"bash", "write"} {
				d := inner[i]
				if d.Name != name || d.IsError != (name == "write") || len(d.Content) != 1 || !strings.Contains(d.Content[0].Text, sandbox.Marker(sandbox.Mode(mode))) {
					t.Errorf("program call %d: %+v, want a denied %s marked %s", i+1, d, name, sandbox.Marker(sandbox.Mode(mode)))
					continue
				}
				// Each process has a temporary root of its own.
				tmp := regexp.MustCompile(`/reel-sandbox-\d+-\d+/`)
				if got, want := tmp.ReplaceAllString(d.Content[0].Text, "/TMP/"), tmp.ReplaceAllString(direct[name], "/TMP/"); got != want {
					t.Errorf("program call %s answered %q; the direct call answers %q", name, got, want)
				}
			}
			if len(asked) != 2 {
				t.Fatalf("%d permission requests, want 2 (the rejected and the approved escalation): %s", len(asked), asked)
			}
			for i, file := range []string{"rejected", "approved"} {
				if !strings.Contains(string(asked[i]), "touch "+filepath.Join(outside, file)) {
					t.Errorf("permission request %d does not show the whole command: %s", i+1, asked[i])
				}
			}
			if got := res["rejected"]; !strings.HasPrefix(got, "ToolCallError: The user rejected escalation to danger-full-access") {
				t.Errorf("the rejected escalation answered the program %q", got)
			}
			if got := res["approved"]; got != "exit 0" {
				t.Errorf("the approved escalation answered the program %q", got)
			}
			if _, err := os.Stat(filepath.Join(outside, "approved")); err != nil {
				t.Errorf("the approved command did not run: %v", err)
			}
			if got := res["direct"]; !strings.Contains(got, "only `run_code` is callable directly") {
				t.Errorf("a direct bash call in code mode answered %q", got)
			}
			if _, err := os.Stat(filepath.Join(ws, "direct")); err == nil {
				t.Errorf("a direct bash call ran in code mode")
			}
			for _, id := range []string{"nested", "nested2"} {
				if got := res[id]; !strings.HasPrefix(got, "code run failed (exception): TypeError") {
					t.Errorf("%s: run_code inside a program answered %q, want no such tool", id, got)
				}
			}
		})
	}
}

// directResults runs calls directly, in a session of mode without code
// mode, and returns their result texts by call id.
func directResults(t *testing.T, mode, ws, outside string, calls []standin.ToolCall) map[string]string {
	t.Helper()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{{ToolCalls: calls}, {Text: "done"}}})
	p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-codemode-attack"), "acp", "--state-dir", state, "--mode", mode,
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
	p.initialize()
	sid := p.newSession(ws)
	if stop, _ := p.prompt(sid, "direct"); stop != "end_turn" {
		t.Fatalf("direct calls: stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("direct calls: exit %d", code)
	}
	return results(t, logEvents(t, state, sid))
}

// TestAttackCodeModeUpdatesNameAnnouncedCalls: a program's long-running
// command reports its output while it runs, as a direct call does — but
// the editor hears only of calls it was told of: every tool_call_update
// names the run_code call (announced by its tool_call), never a program's
// own call, which the editor knows nothing of.
func TestAttackCodeModeUpdatesNameAnnouncedCalls(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	script := &standin.Script{Responses: []standin.Response{
		codeCall(t, "run", `const r = await tools.bash({ command: "for i in 1 2 3; do echo tick $i; sleep 0.6; done", description: "tick" });
return r.stdout.text;`),
		{Text: "done"},
	}}
	p := codeProc(t, dir, state, "workspace-write", script)
	sid := p.newSession(ws)
	stop, frames := p.prompt(sid, "tick")
	if stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	announced := map[string]bool{}
	progress := 0
	for _, f := range frames {
		var u struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
				ToolCallID    string `json:"toolCallId"`
				Status        string `json:"status"`
			} `json:"update"`
		}
		if f.Method != "session/update" || json.Unmarshal(f.Params, &u) != nil {
			continue
		}
		switch u.Update.SessionUpdate {
		case "tool_call":
			announced[u.Update.ToolCallID] = true
		case "tool_call_update":
			if !announced[u.Update.ToolCallID] {
				t.Errorf("an update names a call the editor was never told of: %s", f.raw)
			}
			if u.Update.Status == "in_progress" && strings.Contains(f.raw, "tick 1") {
				progress++
			}
		}
	}
	if progress == 0 {
		t.Errorf("the program's running command reported no output to the editor")
	}
	if got := results(t, logEvents(t, state, sid))["run"]; got != "tick 1\ntick 2\ntick 3\n" {
		t.Errorf("run_code answered %q", got)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestAttackCodeModeHooksBindPrograms: the user's PreToolUse policy holds
// for a program's calls as for direct ones: a hook that blocks commands
// mentioning "forbidden" blocks the program's bash (a ToolCallError with
// the hook's reason; nothing runs), lets its other call run, and both
// calls' hook invocations are logged.
func TestAttackCodeModeHooksBindPrograms(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, ws, state := workspace(t)
	hooksFile := writeHooks(t, dir, map[string]string{
		"PreToolUse": `grep -q forbidden && { echo 'forbidden by policy' >&2; exit 2; }; exit 0`,
	})
	script := &standin.Script{Responses: []standin.Response{
		// The word is made at run time: a hook sees run_code's own
		// arguments too, and the program's text must pass.
		codeCall(t, "run", `const out = [];
try { await tools.bash({ command: "echo " + "forbid" + "den > did-it", description: "bad" }); out.push("ran"); }
catch (e) { out.push(e.name + ": " + e.message); }
const ok = await tools.bash({ command: "echo allowed", description: "good" });
out.push(ok.stdout.text.trim());
return out.join("\n");`),
		{Text: "done"},
	}}
	p := codeProc(t, dir, state, "workspace-write", script, "--hooks", hooksFile)
	sid := p.newSession(ws)
	if stop, _ := p.prompt(sid, "go"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(ws, "did-it")); err == nil {
		t.Errorf("the program's blocked call ran")
	}
	if got, want := results(t, logEvents(t, state, sid))["run"], "ToolCallError: Error: forbidden by policy\nallowed"; got != want {
		t.Errorf("run_code answered %q, want %q", got, want)
	}
	// run_code itself, then the program's two calls.
	if got, want := strings.Join(hookRecords(t, state, sid), ","), "PreToolUse pass,PreToolUse block,PreToolUse pass"; got != want {
		t.Errorf("hook results %q, want %q", got, want)
	}
}
