package acpcmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// lspServerFlag is the --lsp-server of the stand-in language server (reel
// lsp-standin MODE) for .ts files.
func lspServerFlag(t *testing.T, mode string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"name": "standin", "command": reelExe, "args": []string{"lsp-standin", mode},
		"extensions": map[string]string{".ts": "typescript"}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lspCall is a stand-in model's lsp call.
func lspCall(t *testing.T, id, op, path string, line, char int) standin.ToolCall {
	return standin.ToolCall{ID: id, Name: "lsp", Arguments: jsonArgs(t, map[string]any{"operation": op, "file_path": path, "line": line, "character": char})}
}

// lspAttack runs one prompt whose model makes calls (each in a step of
// its own) against the stand-in server in mode, under workspace-write,
// then a second prompt, and returns the calls' results ("STATUS: TEXT" by
// id) with the reel process still running (the caller finishes it) and
// the workspace. prep, when non-nil, prepares the workspace first; env is
// added to reel's environment (its servers inherit it).
func lspAttack(t *testing.T, mode string, env []string, prep func(ws string), calls []standin.ToolCall, flags ...string) (res map[string]string, p *proc, ws, sid string) {
	t.Helper()
	dir, ws, state := workspace(t)
	if err := os.WriteFile(filepath.Join(ws, "a.ts"), []byte("export const answer = 42\nconsole.log(answer)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if prep != nil {
		prep(ws)
	}
	var rs []standin.Response
	for _, c := range calls {
		rs = append(rs, standin.Response{ToolCalls: []standin.ToolCall{c}})
	}
	rs = append(rs, standin.Response{Text: "turn 1 done"}, standin.Response{Text: "turn 2 done"})
	url, _ := standinURL(t, &standin.Script{Responses: rs})
	args := append([]string{"acp", "--state-dir", state, "--mode", "workspace-write", "--provider", "deepseek", "--base-url", url,
		"--model", "standin", "--lsp-server", lspServerFlag(t, mode)}, flags...)
	p = startProc(t, dir, append(append(baseEnv(t), "DEEPSEEK_API_KEY=sk-lsp-test"), env...), args...)
	underAttack(t, p)
	p.initialize()
	sid = p.newSession(ws)
	stop, frames := p.prompt(sid, "navigate")
	if stop != "end_turn" {
		t.Fatalf("turn 1 stopReason %q", stop)
	}
	// The session still works.
	if stop, _ := p.prompt(sid, "again"); stop != "end_turn" {
		t.Fatalf("turn 2 stopReason %q", stop)
	}
	return toolResults(frames), p, ws, sid
}

// token is a marker unique to this test process and name, put on the
// command line of a stand-in server's child.
func token(name string) string {
	return fmt.Sprintf("reellsp%d%s", os.Getpid(), name)
}

// exitLeavingNone ends reel by closing its stdin, which must make it exit
// 0, and then checks that no process is left working in ws.
func exitLeavingNone(t *testing.T, p *proc, ws string) {
	t.Helper()
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	awaitNoneInside(t, ws, "after reel exited")
}

// TestAttackLSPServerMisbehaves: the language server runs workspace
// code, so it is as hostile as the model. Through the real binary, a
// server that never answers initialize, one that never answers a query,
// one that dies mid-request, one that floods its stdout with an endless
// message and one that chatters notifications without end: every call
// ends with an error result that says what happened (not a hung turn, not
// reel's memory), a second call starts the server again and fails the
// same way, the session's next turn is answered, and no server process
// survives reel's exit.
func TestAttackLSPServerMisbehaves(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	cases := []struct {
		mode string
		want string
	}{
		{"hang-init", "language server failed: the standin language server did not answer initialize in time; it was stopped (the next call starts it again)"},
		{"hang", "language server failed: the standin language server did not answer textDocument/definition in time; it was stopped (the next call starts it again)"},
		{"die", "language server failed: the standin language server exited during textDocument/definition (exit status 3); its stderr ends: lsp-standin: dying on purpose"},
		{"flood", "language server failed: the standin language server broke the protocol during textDocument/definition (lsp: bad message framing: a message of 1099511627776 bytes, more than the 8388608-byte limit); it was stopped"},
		{"chatter", "language server failed: the standin language server did not answer textDocument/definition in time; it was stopped (the next call starts it again)"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel() // three of the five wait out the timeout twice
			calls := []standin.ToolCall{lspCall(t, "c1", "goToDefinition", "a.ts", 1, 14), lspCall(t, "c2", "goToDefinition", "a.ts", 2, 13)}
			res, p, ws, _ := lspAttack(t, c.mode, nil, nil, calls, "--lsp-timeout", "3s")
			for _, id := range []string{"c1", "c2"} {
				if got := res[id]; got != "failed: "+c.want {
					t.Errorf("call %s: %q\nwant %q", id, got, "failed: "+c.want)
				}
			}
			exitLeavingNone(t, p, ws)
		})
	}
}

// TestAttackLSPPathsOutsideTheWorkspace: file_path comes from the model.
// A path that names a file outside the workspace — by "..", absolutely,
// or through a symbolic link inside it — is refused before anything is
// read or sent to a server; the server is not even started. A file
// beneath the workspace is answered.
func TestAttackLSPPathsOutsideTheWorkspace(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	var outside string
	prep := func(ws string) {
		outside = filepath.Join(filepath.Dir(ws), "secret.ts")
		if err := os.WriteFile(outside, []byte("export const secret = 'hunter2'\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../secret.ts", filepath.Join(ws, "link.ts")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("..", filepath.Join(ws, "up")); err != nil {
			t.Fatal(err)
		}
	}
	calls := []standin.ToolCall{
		lspCall(t, "dotdot", "hover", "../secret.ts", 1, 14),
		lspCall(t, "link", "hover", "link.ts", 1, 14),
		lspCall(t, "linkdir", "hover", "up/secret.ts", 1, 14),
		lspCall(t, "sub", "hover", "sub/../../secret.ts", 1, 14),
		lspCall(t, "proc", "hover", "/proc/self/root/etc/x.ts", 1, 1),
	}
	res, p, ws, _ := lspAttack(t, "ok", nil, prep, append(calls, lspCall(t, "inside", "hover", "a.ts", 1, 14)))
	for _, c := range calls {
		if got := res[c.ID]; !strings.HasPrefix(got, "failed: ") || !strings.Contains(got, "is outside the workspace "+ws) {
			t.Errorf("call %s: %q, want a refusal naming the workspace", c.ID, got)
		}
	}
	if got := res["inside"]; got != "completed: ```ts\nconst answer: 42\n```" {
		t.Errorf("the call inside the workspace: %q", got)
	}
	exitLeavingNone(t, p, ws)
}

// TestAttackLSPForgedLocations: the server's answer is hostile text. A
// location outside the workspace is shown as its absolute path (text
// only: reel reads nothing there), and a URI holding a newline — which
// would forge a result line naming a file the server chose — is shown
// quoted on its one line.
func TestAttackLSPForgedLocations(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	res, p, ws, _ := lspAttack(t, "forge", nil, nil, []standin.ToolCall{lspCall(t, "c1", "goToDefinition", "a.ts", 1, 14)})
	want := "completed: /etc/passwd:1:7\n" +
		`"a.ts\nsrc/secret.ts:9:9":1:7` + "\n" +
		`"jdt://contents/x\nforged.ts:1:1":1:7` + "\n" +
		"a.ts:1:7"
	if got := res["c1"]; got != want {
		t.Errorf("result %q\nwant   %q", got, want)
	}
	exitLeavingNone(t, p, ws)
}

// TestAttackLSPServerIsSandboxed: a language server executes workspace
// code, so it runs as bash does, under the session's sandbox mode. Under
// workspace-write, a server that writes outside the workspace when it
// starts is refused by Landlock (it says so in its hover), and nothing is
// written.
func TestAttackLSPServerIsSandboxed(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	target := filepath.Join(t.TempDir(), "pwned")
	res, p, ws, _ := lspAttack(t, "escape", []string{"LSP_STANDIN_ESCAPE=" + target}, nil, []standin.ToolCall{lspCall(t, "c1", "hover", "a.ts", 1, 14)})
	if got := res["c1"]; !strings.HasPrefix(got, "completed: confined: ") || !strings.Contains(got, "permission denied") {
		t.Errorf("the server's own report: %q, want it confined", got)
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("the server wrote %s outside the workspace", target)
	}
	exitLeavingNone(t, p, ws)
}

// TestAttackLSPServersDieWithTheSession: a server (and a process it
// started) lives no longer than its session: session/close stops it, and
// so does reel's end — its exit, or SIGKILL, which gives reel no chance
// to clean up (the sandbox supervisor sees reel's liveness pipe close).
func TestAttackLSPServersDieWithTheSession(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	for _, how := range []string{"session/close", "exit", "SIGKILL"} {
		t.Run(strings.ReplaceAll(how, "/", "-"), func(t *testing.T) {
			tok := token("spawn" + strings.ReplaceAll(how, "/", ""))
			res, p, ws, sid := lspAttack(t, "spawn", []string{"LSP_STANDIN_TOKEN=" + tok}, nil, []standin.ToolCall{lspCall(t, "c1", "goToDefinition", "a.ts", 1, 14)})
			if got := res["c1"]; got != "completed: a.ts:1:7\na.ts:2:7" {
				t.Fatalf("result %q", got)
			}
			awaitRunning(t, tok, 1) // the server's child
			if n := len(inside(ws)); n < 3 {
				t.Fatalf("%d processes run in the workspace, want the supervisor, the server and its child", n)
			}
			switch how {
			case "session/close":
				p.call("session/close", map[string]any{"sessionId": sid})
				awaitNoneInside(t, ws, "after session/close")
				if code := p.finish(); code != 0 {
					t.Fatalf("exit %d", code)
				}
			case "exit":
				exitLeavingNone(t, p, ws)
			case "SIGKILL":
				p.kill()
				awaitNoneInside(t, ws, "after reel was killed with SIGKILL")
			}
		})
	}
}

// TestLSPRealServersUnderTheSandbox: the default servers work as reel
// runs them, through the real binary, confined: under workspace-write
// typescript-language-server and gopls answer a definition (their caches
// go to the workspace's private temp dir); under read-only, where they
// can write nothing, the call fails saying why.
func TestLSPRealServersUnderTheSandbox(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	cases := []struct {
		server, file string
		files        map[string]string
		line, char   int
		want         string
	}{
		{"typescript-language-server", "a.ts", map[string]string{"a.ts": "export const answer = 42\nconsole.log(answer)\n"}, 2, 13, "completed: a.ts:1:14"},
		{"gopls", "main.go", map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n",
			"main.go": "package main\n\nfunc answer() int { return 42 }\n\nfunc main() { println(answer()) }\n"}, 5, 23, "completed: main.go:3:6"},
	}
	for _, mode := range []string{"workspace-write", "read-only"} {
		for _, c := range cases {
			t.Run(mode+"/"+c.server, func(t *testing.T) {
				if _, err := exec.LookPath(c.server); err != nil {
					if os.Getenv("CI") == "true" {
						t.Fatalf("%s is not installed; .ci/run installs it", c.server)
					}
					t.Skipf("%s is not installed", c.server)
				}
				dir, ws, state := workspace(t)
				for name, content := range c.files {
					if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
					{ToolCalls: []standin.ToolCall{lspCall(t, "c1", "goToDefinition", c.file, c.line, c.char)}}, {Text: "done"}}})
				p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-lsp-test"), "acp", "--state-dir", state, "--mode", mode,
					"--provider", "deepseek", "--base-url", url, "--model", "standin", "--lsp")
				p.initialize()
				sid := p.newSession(ws)
				stop, frames := p.prompt(sid, "go")
				if stop != "end_turn" {
					t.Fatalf("stopReason %q", stop)
				}
				got := toolResults(frames)["c1"]
				switch {
				case mode == "read-only":
					// Both servers must write (gopls its caches,
					// tsserver its temp dir), which read-only forbids:
					// a clear failure that says so.
					if !strings.HasPrefix(got, "failed: ") || !strings.Contains(got, "the session is read-only") {
						t.Errorf("result %q, want a failure naming read-only", got)
					}
				case got != c.want:
					t.Errorf("result %q, want %q", got, c.want)
				}
				exitLeavingNone(t, p, ws)
			})
		}
	}
}

// TestAttackLSPCallIsCancellable: a server that never answers does not
// hold the turn: session/cancel ends it (before any timeout: the call's
// bound is left at its 60 s default), the server is stopped, and the
// session's next turn is answered.
func TestAttackLSPCallIsCancellable(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, ws, state := workspace(t)
	if err := os.WriteFile(filepath.Join(ws, "a.ts"), []byte("export const answer = 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{lspCall(t, "c1", "hover", "a.ts", 1, 14)}}, {Text: "after the cancel"}}})
	p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-lsp-test"), "acp", "--state-dir", state, "--mode", "workspace-write",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--lsp-server", lspServerFlag(t, "hang"))
	underAttack(t, p)
	p.initialize()
	sid := p.newSession(ws)
	id := p.request("session/prompt", promptParams(sid, "hover"))
	// The server runs (its supervisor and itself, in the workspace) and
	// has the request.
	deadline := time.Now().Add(30 * time.Second)
	for len(inside(ws)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.notify("session/cancel", map[string]any{"sessionId": sid})
	if resp, _ := p.await(id); !strings.Contains(string(resp.Result), "cancelled") {
		t.Fatalf("prompt answer %s", resp.raw)
	}
	awaitNoneInside(t, ws, "after session/cancel")
	if stop, _ := p.prompt(sid, "again"); stop != "end_turn" {
		t.Fatalf("next turn: %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestAttackLSPServerFollowsTheMode: a server keeps no rights the
// session lost. One started under workspace-write may write in the
// workspace; when the editor narrows the session to read-only it is
// stopped at once (not left idling with its rights), and the next call
// runs a server started again under read-only, which cannot write.
func TestAttackLSPServerFollowsTheMode(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, ws, state := workspace(t)
	if err := os.WriteFile(filepath.Join(ws, "a.ts"), []byte("export const answer = 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{lspCall(t, "c1", "hover", "a.ts", 1, 14)}}, {Text: "one"},
		{ToolCalls: []standin.ToolCall{lspCall(t, "c2", "hover", "a.ts", 1, 14)}}, {Text: "two"}}})
	p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-lsp-test", "LSP_STANDIN_ESCAPE="+filepath.Join(ws, "written")),
		"acp", "--state-dir", state, "--mode", "workspace-write", "--provider", "deepseek", "--base-url", url, "--model", "standin",
		"--lsp-server", lspServerFlag(t, "escape"))
	underAttack(t, p)
	p.initialize()
	sid := p.newSession(ws)
	_, frames := p.prompt(sid, "one")
	if got := toolResults(frames)["c1"]; got != "completed: escaped" {
		t.Fatalf("under workspace-write the server could not write in the workspace: %q", got)
	}
	p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "read-only"})
	// The server started under workspace-write does not idle on with its
	// rights until the next call: the switch stopped it.
	awaitNoneInside(t, ws, "after set_mode read-only")
	_, frames = p.prompt(sid, "two")
	if got := toolResults(frames)["c2"]; !strings.HasPrefix(got, "completed: confined: ") {
		t.Errorf("after set_mode read-only the server still wrote: %q", got)
	}
	exitLeavingNone(t, p, ws)
}
