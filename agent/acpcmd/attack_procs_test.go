package acpcmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// procs returns the pids in /proc for which match, given the pid, holds.
func procs(match func(pid string) bool) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if match(e.Name()) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// alive returns the pids whose command line holds token.
func alive(token string) []string {
	return procs(func(pid string) bool {
		b, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		// A zombie has an empty cmdline; anything still holding the token
		// is a live process.
		return err == nil && strings.Contains(string(b), token)
	})
}

// inside returns the pids whose working directory is dir: a language
// server, its supervisor and what it started run in the workspace (reel
// does not, and its own command line names the server's).
func inside(dir string) []string {
	return procs(func(pid string) bool {
		cwd, err := os.Readlink(filepath.Join("/proc", pid, "cwd"))
		return err == nil && cwd == dir
	})
}

// awaitNone waits (boundedly: this detects a survivor, it does not time
// anything) until find finds no process. Past the bound it hands the
// survivors to report, then kills them.
func awaitNone(t *testing.T, find func() []string, report func(pids []string)) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		pids := find()
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			report(pids)
			for _, p := range pids {
				_ = syscall.Kill(atoi(p), syscall.SIGKILL)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// awaitGone waits until no process holds token.
func awaitGone(t *testing.T, token, when string) {
	t.Helper()
	awaitNone(t, func() []string { return alive(token) }, func(pids []string) {
		t.Errorf("SURVIVOR %s: processes %v still run %q", when, pids, token)
	})
}

// awaitNoneInside waits until no process works in dir.
func awaitNoneInside(t *testing.T, dir, when string) {
	t.Helper()
	awaitNone(t, func() []string { return inside(dir) }, func(pids []string) {
		var what []string
		for _, p := range pids {
			b, _ := os.ReadFile(filepath.Join("/proc", p, "cmdline"))
			what = append(what, p+" "+strings.ReplaceAll(string(b), "\x00", " "))
		}
		t.Errorf("SURVIVOR %s: %q still run in %s", when, what, dir)
	})
}

// awaitRunning waits (boundedly) until n processes hold token, so that an
// attack is known to be real before its processes are expected to die.
func awaitRunning(t *testing.T, token string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(alive(token)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d processes run %q, want %d: the attack did not start", len(alive(token)), token, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

// spawn is a bash script that starts a process named token in every way
// a command can try to outlive its call: backgrounded, in a new session,
// double-forked.
func spawn(token string) string {
	return fmt.Sprintf(`(exec -a %[1]s-bg sleep 1000) &
setsid bash -c 'exec -a %[1]s-setsid sleep 1000' &
( (exec -a %[1]s-daemon sleep 1000 &) & )
sleep 0.2; echo started`, token)
}

// TestAttackProcessesDieWithTheirLimits is finding 10 of the hardening
// issue, through the real binary: processes a tool starts — backgrounded
// with &, setsid, double-forked, or as run_in_background jobs, confined or
// once approved into danger-full-access — do not outlive their limits:
//   - a foreground call's leftovers die when the call ends;
//   - a cancelled call's whole tree dies with the cancel;
//   - a job started under an approved danger-full-access escalation dies
//     when the editor narrows the session to read-only;
//   - the remaining jobs die when reel exits, and when reel is killed.
func TestAttackProcessesDieWithTheirLimits(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	for _, mode := range []string{"workspace-write", "read-only"} {
		t.Run(mode, func(t *testing.T) {
			tok := fmt.Sprintf("reeltok%d%s", os.Getpid(), strings.ReplaceAll(mode, "-", ""))
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			script := &standin.Script{Responses: []standin.Response{
				// Turn 1: a foreground call leaves children behind.
				{ToolCalls: []standin.ToolCall{{ID: "fg", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": spawn(tok + "fg")})}}},
				{Text: "turn 1 done"},
				// Turn 2: a call that is cancelled while it runs.
				{ToolCalls: []standin.ToolCall{{ID: "cancelme", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": spawn(tok+"cancel") + "; sleep 1000"})}}},
				// Turn 3: two background jobs, one escalated.
				{ToolCalls: []standin.ToolCall{
					{ID: "bg", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": spawn(tok+"job") + "; sleep 1000", "run_in_background": true})},
					{ID: "esc", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": spawn(tok+"esc") + "; sleep 1000", "run_in_background": true,
						"sandbox_permissions": "danger-full-access", "justification": "a server"})},
				}},
				{Text: "turn 3 done"},
			}}
			url, _ := standinURL(t, script)
			p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-procs-test"), "acp", "--state-dir", filepath.Join(dir, "state"),
				"--mode", mode, "--provider", "deepseek", "--base-url", url, "--model", "standin")
			p.initialize()
			sid := p.newSession(ws)

			if stop, frames := p.prompt(sid, "turn 1"); stop != "end_turn" || !strings.Contains(toolResults(frames)["fg"], "started") {
				t.Fatalf("turn 1: %s %q", stop, toolResults(frames)["fg"])
			}
			awaitGone(t, tok+"fg", "after the foreground call ended")

			id := p.request("session/prompt", promptParams(sid, "turn 2"))
			awaitRunning(t, tok+"cancel", 3)
			p.notify("session/cancel", map[string]any{"sessionId": sid})
			if resp, _ := p.await(id); !strings.Contains(string(resp.Result), "cancelled") {
				t.Fatalf("turn 2 answer %s", resp.raw)
			}
			awaitGone(t, tok+"cancel", "after session/cancel")

			if stop, asked, _ := promptAllowing(t, p, sid, "turn 3"); stop != "end_turn" || len(asked) != 1 {
				t.Fatalf("turn 3: %s, %d permission requests", stop, len(asked))
			}
			for _, job := range []string{"job", "esc"} {
				awaitRunning(t, tok+job, 3)
			}
			p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "read-only"})
			awaitGone(t, tok+"esc", "after set_mode read-only (job approved under danger-full-access)")
			if mode == "workspace-write" {
				// Narrowing to read-only also ends the workspace-write job.
				awaitGone(t, tok+"job", "after set_mode read-only (job under workspace-write)")
			} else if len(alive(tok+"job")) == 0 {
				t.Errorf("the read-only job died on a switch to read-only; it was within its limits")
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			awaitGone(t, tok, "after reel exited")
		})
	}
}

// TestAttackJobsDieWhenReelIsKilled: reel killed with SIGKILL gets no
// chance to clean up; its background jobs (and their setsid and
// double-forked children) still die, because their supervisor sees its
// liveness pipe close.
func TestAttackJobsDieWhenReelIsKilled(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	tok := fmt.Sprintf("reeltok%dkilled", os.Getpid())
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{{ID: "bg", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": spawn(tok) + "; sleep 1000", "run_in_background": true})}}},
		{Text: "started"},
	}})
	p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-procs-test"), "acp", "--state-dir", filepath.Join(dir, "state"),
		"--mode", "workspace-write", "--provider", "deepseek", "--base-url", url, "--model", "standin")
	p.initialize()
	sid := p.newSession(ws)
	if stop, _ := p.prompt(sid, "start a job"); stop != "end_turn" {
		t.Fatalf("stop %s", stop)
	}
	awaitRunning(t, tok, 3)
	p.kill()
	awaitGone(t, tok, "after reel was killed with SIGKILL")
}
