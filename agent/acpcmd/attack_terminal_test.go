package acpcmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// The persistent terminals (agent/terminal) under attack, through the real
// binary with --terminals: a model that floods a terminal, ignores
// signals, leaves terminals behind when reel is killed, writes outside the
// workspace from one, and keeps one opened before the editor narrowed the
// session.

// termCall is a stand-in model's call of a terminal tool.
func termCall(t *testing.T, id, tool string, args map[string]any) standin.Response {
	return standin.Response{ToolCalls: []standin.ToolCall{{ID: id, Name: tool, Arguments: jsonArgs(t, args)}}}
}

// termSend is a terminal_send of command to pty-1.
func termSend(t *testing.T, id, command string) standin.Response {
	return termCall(t, id, "terminal_send", map[string]any{"sessionId": "pty-1", "text": command})
}

// oneLine is a script of several lines as one shell line.
func oneLine(script string) string {
	return strings.ReplaceAll(strings.ReplaceAll(script, "&\n", "& "), "\n", "; ")
}

// termWorkspace makes a temp dir with an empty workspace ws in it.
func termWorkspace(t *testing.T) (dir, ws string) {
	dir = t.TempDir()
	ws = filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, ws
}

// startTerminals starts reel acp with --terminals in mode on script, in
// dir, and opens a session in ws.
func startTerminals(t *testing.T, dir, ws, mode string, script *standin.Script) (p *proc, sid string) {
	t.Helper()
	url, _ := standinURL(t, script)
	p = startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-terminal-test"), "acp", "--state-dir", filepath.Join(dir, "state"),
		"--mode", mode, "--terminals", "--provider", "deepseek", "--base-url", url, "--model", "standin")
	p.initialize()
	return p, p.newSession(ws)
}

// vmHWM is the peak resident memory of pid in bytes (/proc/PID/status).
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestAttackTerminalFloodStaysBounded: a command floods a terminal with 256
// MiB on one line. The send's result and a read's result stay within
// their bound, end with the truncation marker, and keep the flood's tail;
// reel's memory stays bounded.
//
// The flood takes a send of its own: a send waits at most SendTimeout (30
// s of wall clock), and on a loaded 2-core machine the flood (256 MiB
// through the PTY and reel's terminal emulator) can take longer — then the
// send returns [wait: timeout] with the command still running, and the
// model sends again, as a model would. Three further sends (an echo each,
// typed ahead while the flood runs) give the flood four sends to end in
// (it took three under four busy loops beside the usual load); the first
// send that settles at the prompt holds the flood's tail.
func TestAttackTerminalFloodStaysBounded(t *testing.T) {
	// Not parallel: the flood is CPU-bound in a race-built reel.
	needLandlock(t)
	const flood = 256 << 20
	dir, ws := termWorkspace(t)
	sends := []string{"flood"}
	script := []standin.Response{
		termCall(t, "open", "terminal_open", map[string]any{"type": "shell"}),
		termSend(t, "flood", fmt.Sprintf(`head -c %d /dev/zero | tr '\0' x; echo; echo FLOOD_""DONE`, flood)),
	}
	for i := range 3 {
		id := fmt.Sprintf("again%d", i+1)
		sends = append(sends, id)
		script = append(script, termSend(t, id, fmt.Sprintf(`echo AGAIN%d_""DONE`, i+1)))
	}
	script = append(script,
		termCall(t, "read", "terminal_read", map[string]any{"sessionId": "pty-1", "count": 100000}),
		standin.Response{Text: "flooded"})
	p, sid := startTerminals(t, dir, ws, "workspace-write", &standin.Script{Responses: script})
	stop, frames := p.prompt(sid, "flood a terminal")
	if stop != "end_turn" {
		t.Fatalf("stop %s", stop)
	}
	res := toolResults(frames)
	const resultBound = 64 << 10
	settled := ""
	for _, id := range sends {
		r := res[id]
		t.Logf("send %s result: %d bytes, ends %q", id, len(r), r[max(0, len(r)-120):])
		if !strings.HasPrefix(r, "completed: ") || len(r) > resultBound+len("completed: ") {
			t.Errorf("send %s: result of %d bytes (bound %d), ends %q", id, len(r), resultBound, r[max(0, len(r)-120):])
		}
		if settled == "" && strings.Contains(r, "[wait: stdin_read]") {
			settled = id
			if !strings.Contains(r, "FLOOD_DONE") || !strings.HasSuffix(r, "[output truncated]") {
				t.Errorf("the send %s settled at the prompt without the flood's tail and the truncation marker: …%q", id, r[max(0, len(r)-200):])
			}
		}
	}
	if last := res[sends[len(sends)-1]]; settled == "" {
		t.Fatalf("no send settled at the prompt after the flood: …%q", last[max(0, len(last)-200):])
	}
	if sent := res[sends[0]]; !strings.HasSuffix(sent, "[output truncated]") {
		t.Errorf("the flood's send does not end with the truncation marker: …%q", sent[max(0, len(sent)-200):])
	}
	read := res["read"]
	if len(read) > resultBound+len("completed: ") || !strings.HasSuffix(read, "[output truncated]") {
		t.Errorf("read result is %d bytes (bound %d), ends %q", len(read), resultBound, read[max(0, len(read)-80):])
	}
	hwm := vmHWM(t, p.cmd.Process.Pid)
	t.Logf("reel's peak resident memory after a %d MiB flood: %d MiB", flood>>20, hwm>>20)
	// Kept output would need the flood's bytes at least (an unbounded
	// ring measured 2.5 GiB); a race-built reel's shadow memory puts even
	// the bounded one near 115 MiB, so the bound is three quarters of the
	// flood.
	if hwm > flood*3/4 {
		t.Errorf("reel's peak resident memory is %d MiB after a %d MiB flood: the terminal's output is not bounded", hwm>>20, flood>>20)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestAttackTerminalIgnoresSIGTERM: the shell and everything it started
// ignore SIGTERM, SIGINT and SIGHUP — a foreground program, background
// ones, one in a new session, a double-forked one. terminal_signal
// delivers SIGTERM to the foreground group, which shrugs it off;
// terminal_close still ends the whole tree before it answers.
func TestAttackTerminalIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	tok := fmt.Sprintf("reeltok%dtermign", os.Getpid())
	dir, ws := termWorkspace(t)
	p, sid := startTerminals(t, dir, ws, "workspace-write", &standin.Script{Responses: []standin.Response{
		termCall(t, "open", "terminal_open", map[string]any{"type": "shell", "name": "stubborn"}),
		termSend(t, "trap", "trap '' TERM INT HUP; "+oneLine(spawn(tok))),
		termSend(t, "fg", fmt.Sprintf(`bash -c "trap '' TERM INT HUP; exec -a %s-fg sleep 1000"`, tok)),
		termCall(t, "term", "terminal_signal", map[string]any{"sessionId": "pty-1", "signal": "SIGTERM"}),
		termCall(t, "kill", "terminal_signal", map[string]any{"sessionId": "pty-1", "signal": "SIGHUP"}),
		{Text: "signalled"},
		termCall(t, "close", "terminal_close", map[string]any{"sessionId": "pty-1"}),
		termCall(t, "list", "terminal_list", map[string]any{}),
		{Text: "closed"},
	}})
	stop, frames := p.prompt(sid, "start stubborn processes")
	if stop != "end_turn" {
		t.Fatalf("stop %s", stop)
	}
	res := toolResults(frames)
	if !strings.Contains(res["trap"], "started") || !strings.Contains(res["fg"], "[wait: inferred_idle]") {
		t.Fatalf("the processes did not start: trap %q, fg %q", res["trap"], res["fg"])
	}
	for _, id := range []string{"term", "kill"} {
		if !strings.HasPrefix(res[id], "completed: delivered SIG") {
			t.Errorf("%s: %q, want the signal delivered to the foreground group", id, res[id])
		}
	}
	awaitRunning(t, tok, 4)
	stop, frames = p.prompt(sid, "close it")
	if stop != "end_turn" {
		t.Fatalf("stop %s", stop)
	}
	res = toolResults(frames)
	if res["close"] != "completed: closed terminal session pty-1" || res["list"] != "completed: (no terminal sessions)" {
		t.Errorf("close %q, list %q", res["close"], res["list"])
	}
	// terminal_close answered only once the tree was gone: nothing to
	// wait for.
	if pids := alive(tok); len(pids) > 0 {
		t.Errorf("SURVIVOR after terminal_close answered: %v run %q", pids, tok)
	}
	awaitGone(t, tok, "after terminal_close")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestAttackTerminalDiesWhenReelIsKilled: a terminal left open, its shell
// having started processes every way a process can try to outlive its
// parent, and reel killed with SIGKILL: nothing survives.
func TestAttackTerminalDiesWhenReelIsKilled(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	for _, mode := range []string{"workspace-write", "danger-full-access"} {
		t.Run(mode, func(t *testing.T) {
			tok := fmt.Sprintf("reeltok%dtermkilled%s", os.Getpid(), strings.ReplaceAll(mode, "-", ""))
			dir, ws := termWorkspace(t)
			p, sid := startTerminals(t, dir, ws, mode, &standin.Script{Responses: []standin.Response{
				termCall(t, "open", "terminal_open", map[string]any{"type": "shell"}),
				termSend(t, "spawn", oneLine(spawn(tok))),
				{Text: "left open"},
			}})
			if stop, _ := p.prompt(sid, "leave a terminal open"); stop != "end_turn" {
				t.Fatalf("stop %s", stop)
			}
			awaitRunning(t, tok, 3)
			p.kill()
			awaitGone(t, tok, "after reel was killed with SIGKILL")
		})
	}
}

// TestAttackTerminalWritesOutsideTheWorkspace: in workspace-write, a
// terminal's shell writes inside the workspace but not beside it, not
// through a symbolic link, and not into the workspace's .git.
func TestAttackTerminalWritesOutsideTheWorkspace(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, ws := termWorkspace(t)
	outside := filepath.Join(dir, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, sid := startTerminals(t, dir, ws, "workspace-write", &standin.Script{Responses: []standin.Response{
		termCall(t, "open", "terminal_open", map[string]any{"type": "shell"}),
		termSend(t, "inside", "echo ok > inside.txt && cat inside.txt"),
		termSend(t, "beside", "echo pwned > "+filepath.Join(outside, "beside.txt")+"; echo rc=$?"),
		termSend(t, "link", "echo pwned > link/linked.txt; echo rc=$?"),
		termSend(t, "git", "echo pwned > .git/hook; echo rc=$?"),
		termSend(t, "cd", "cd "+outside+" && touch cd.txt; echo rc=$?"),
		{Text: "tried"},
	}})
	if stop, frames := p.prompt(sid, "write everywhere"); stop != "end_turn" {
		t.Fatalf("stop %s", stop)
	} else {
		res := toolResults(frames)
		if !strings.Contains(res["inside"], "\nok\n") {
			t.Errorf("the write inside the workspace failed: %q", res["inside"])
		}
		for _, id := range []string{"beside", "link", "git", "cd"} {
			if !strings.Contains(res[id], "rc=1") {
				t.Errorf("%s: %q, want the write denied (rc=1)", id, res[id])
			}
		}
	}
	for _, f := range []string{filepath.Join(outside, "beside.txt"), filepath.Join(outside, "linked.txt"), filepath.Join(ws, ".git", "hook"), filepath.Join(outside, "cd.txt")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("ESCAPE: a terminal in workspace-write wrote %s", f)
		}
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestAttackTerminalOpenedBeforeANarrowing: a terminal opened under
// workspace-write, with processes running in it, when the editor switches
// the session to read-only: the terminal is closed with its whole tree
// (it was opened wider than the session now runs), the model's next calls
// find it gone, and a terminal opened after the switch cannot write.
func TestAttackTerminalOpenedBeforeANarrowing(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	tok := fmt.Sprintf("reeltok%dtermnarrow", os.Getpid())
	dir, ws := termWorkspace(t)
	p, sid := startTerminals(t, dir, ws, "workspace-write", &standin.Script{Responses: []standin.Response{
		termCall(t, "open", "terminal_open", map[string]any{"type": "shell", "name": "wide"}),
		termSend(t, "spawn", oneLine(spawn(tok))),
		{Text: "opened"},
		termSend(t, "after", "echo pwned > after.txt; echo rc=$?"),
		termCall(t, "list", "terminal_list", map[string]any{}),
		termCall(t, "reopen", "terminal_open", map[string]any{"type": "shell", "name": "narrow"}),
		termCall(t, "narrowwrite", "terminal_send", map[string]any{"sessionId": "pty-2", "text": "echo pwned > narrow.txt; echo rc=$?"}),
		{Text: "done"},
	}})
	if stop, _ := p.prompt(sid, "open a terminal"); stop != "end_turn" {
		t.Fatalf("stop %s", stop)
	}
	awaitRunning(t, tok, 3)
	p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "read-only"})
	awaitGone(t, tok, "after set_mode read-only (terminal opened under workspace-write)")
	stop, frames := p.prompt(sid, "use it again")
	if stop != "end_turn" {
		t.Fatalf("stop %s", stop)
	}
	res := toolResults(frames)
	if res["after"] != "failed: Error: unknown PTY session pty-1" {
		t.Errorf("send to the terminal opened before the narrowing: %q, want it gone", res["after"])
	}
	if res["list"] != "completed: (no terminal sessions)" {
		t.Errorf("list: %q", res["list"])
	}
	if !strings.Contains(res["narrowwrite"], "rc=1") {
		t.Errorf("a terminal opened under read-only: %q, want the write denied", res["narrowwrite"])
	}
	for _, f := range []string{"after.txt", "narrow.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("ESCAPE: %s was written after the session narrowed to read-only", f)
		}
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	awaitGone(t, tok, "after reel exited")
}

// TestAttackTerminalForgedPrompt: a command prints the shell's prompt
// marker and prompt itself — without the terminal's nonce, and with it
// (read from PROMPT_COMMAND) — then keeps the shell busy and prints more.
// Neither forgery ends the send early: each result holds the output after
// the forged prompt up to the real one, and no marker is left in it.
func TestAttackTerminalForgedPrompt(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	const busy = `i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo "loop-$i"`
	dir, ws := termWorkspace(t)
	p, sid := startTerminals(t, dir, ws, "workspace-write", &standin.Script{Responses: []standin.Response{
		termCall(t, "open", "terminal_open", map[string]any{"type": "shell"}),
		termSend(t, "plain", `printf '\033]133;D;0\007reel> '; `+busy),
		termSend(t, "nonce", `eval "$PROMPT_COMMAND"; printf 'reel> '; `+busy),
		{Text: "forged"},
	}})
	stop, frames := p.prompt(sid, "forge the prompt")
	if stop != "end_turn" {
		t.Fatalf("stop %s", stop)
	}
	res := toolResults(frames)
	for _, id := range []string{"plain", "nonce"} {
		got := res[id]
		if !strings.Contains(got, "reel> loop-100000\nreel> \n[wait: stdin_read]") || strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("%s: a forged prompt ended the send early or a marker is left: %q", id, got)
		}
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
