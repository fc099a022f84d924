package acpcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// warmHunt is a confined command hunting the warm supervisor that waits
// for the session's next command (a sandbox-exec with --warm-fd and the
// session's root, its own supervisor aside): it shows that tracing works on a child of its own
// (PTRACE-CHILD-OK, so a refusal below is the sandbox's), then tries on
// each one found to resolve and write its descriptors through /proc, read
// its environment and memory, take its descriptors with pidfd_getfd and
// trace it, printing PWNED-… on any success; last it stops it (SIGSTOP),
// which must cost the next call a cold start, not a hang.
const warmHunt = `found=; w=--warm
for i in $(seq 1 200); do
  for f in $(grep -las -- "${w}-fd" /proc/[0-9]*/cmdline); do
    tr '\0' ' ' 2>/dev/null < "$f" | grep -qF -- "sandbox-exec --mode" || continue
    tr '\0' ' ' 2>/dev/null < "$f" | grep -qF -- "--root $PWD " || continue
    p=${f#/proc/}; p=${p%/cmdline}
    [ "$p" = "$PPID" ] || found="$found $p"
  done
  [ -n "$found" ] && break
  sleep 0.02
done
echo "FOUND:$found"
for p in $found; do
  for n in 0 1 2 3 4 5 6 7; do readlink /proc/$p/fd/$n >/dev/null 2>&1 && echo "PWNED-READLINK $p/$n"; done
  cat /proc/$p/environ >/dev/null 2>&1 && echo "PWNED-ENVIRON $p"
  for n in 0 1 2 3 4 5 6 7; do ( echo x > /proc/$p/fd/$n ) 2>/dev/null && echo "PWNED-FDWRITE $p/$n"; done
done
python3 - $found <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.syscall.restype = ctypes.c_long
child = os.fork()
if child == 0:
    time.sleep(10)
    os._exit(0)
r = libc.ptrace(16, child, None, None)
print("PTRACE-CHILD-OK" if r == 0 else "PTRACE-CHILD-FAIL errno %d" % ctypes.get_errno())
os.kill(child, 9)
for a in sys.argv[1:]:
    pid = int(a)
    if libc.ptrace(0x4206, pid, None, None) == 0:
        print("PWNED-PTRACE-SEIZE", pid)
    if libc.ptrace(16, pid, None, None) == 0:
        print("PWNED-PTRACE-ATTACH", pid)
    try:
        with open("/proc/%d/mem" % pid, "rb") as f:
            print("PWNED-MEM", pid)
    except OSError:
        pass
    pfd = libc.syscall(434, pid, 0)
    if pfd >= 0:
        for n in range(3, 8):
            if libc.syscall(438, pfd, n, 0) >= 0:
                print("PWNED-GETFD", pid, n)
PY
for p in $found; do kill -STOP $p && echo "STOPPED $p"; done
echo HUNT-DONE`

// warmSupervisorLine prints the command line of the command's supervisor.
const warmSupervisorLine = `echo "SUP: $(tr '\0' ' ' < /proc/$PPID/cmdline)"`

// TestAttackWarmSupervisor: reel keeps a supervisor started, confined and
// waiting for the session's next command. A confined command (the model)
// must not reach it: not trace it, not open or take its descriptors (the
// socket its command comes on), not read its environment or memory; a
// stopped one costs the next call a cold start, and that call is as
// confined as ever. Every warm supervisor ends with reel.
func TestAttackWarmSupervisor(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	for _, mode := range []string{"read-only", "workspace-write"} {
		t.Run(mode, func(t *testing.T) {
			dir, ws, out := awDirs(t)
			victim := filepath.Join(out, "victim")
			res := gdRun(t, mode, dir, ws, nil, []standin.Response{
				gdBash("first", "true"),
				gdBash("hunt", warmHunt),
				gdBash("after", warmSupervisorLine+"; echo AFTER-STOP-OK"),
				gdBash("write", "echo pwn > "+victim+"; "+warmSupervisorLine),
				{Text: "done"},
			})
			hunt := res["hunt"]
			t.Logf("hunt:\n%s", hunt)
			if !strings.Contains(hunt, "HUNT-DONE") {
				t.Fatalf("the hunt did not run to its end: %q", hunt)
			}
			if strings.Contains(hunt, "FOUND:\n") || !strings.Contains(hunt, "FOUND: ") {
				t.Errorf("no warm supervisor was waiting for the next command (nothing to attack): %q", hunt)
			}
			if !strings.Contains(hunt, "PTRACE-CHILD-OK") {
				t.Errorf("tracing a child of its own failed, so the refusals prove nothing: %q", hunt)
			}
			if strings.Contains(hunt, "PWNED") {
				t.Errorf("ESCAPE: the command reached a warm supervisor: %q", hunt)
			}
			if !strings.Contains(res["after"], "AFTER-STOP-OK") {
				t.Errorf("after the warm supervisor was stopped the next call did not run: %q", res["after"])
			}
			if b, err := os.ReadFile(victim); err == nil {
				t.Errorf("ESCAPE: a command after the attack wrote outside the workspace (%q): %q", b, res["write"])
			}
			awaitNone(t, func() []string { return alive(ws) }, func(pids []string) {
				t.Errorf("processes of the session outlived reel: %v", pids)
			})
		})
	}
}

// TestAttackWarmModeSwitch: a warm supervisor is confined for one mode.
// After set_mode the next command must never be handed one confined for
// the other mode: read-only after workspace-write must not write the
// workspace, and workspace-write after read-only must (a command
// confined narrower than its mode is a bug too, if not an escape).
func TestAttackWarmModeSwitch(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, ws, _ := awDirs(t)
	url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
		gdBash("ww1", "true"),
		gdBash("ww2", warmSupervisorLine),
		{Text: "turn 1 done"},
		gdBash("ro1", "echo pwn > "+filepath.Join(ws, "ro1")+"; "+warmSupervisorLine),
		gdBash("ro2", "echo pwn > "+filepath.Join(ws, "ro2")+"; "+warmSupervisorLine),
		{Text: "turn 2 done"},
		gdBash("ww3", "echo ok > "+filepath.Join(ws, "ww3")+"; "+warmSupervisorLine),
		gdBash("ww4", "echo ok > "+filepath.Join(ws, "ww4")+"; "+warmSupervisorLine),
		{Text: "turn 3 done"},
	}})
	env := append(baseEnv(t), "DEEPSEEK_API_KEY=sk-reel-fake-attack")
	p := startProc(t, dir, env, "acp", "--state-dir", filepath.Join(dir, "state"), "--mode", "workspace-write",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
	p.initialize()
	sid := p.newSession(ws)
	var frames []frame
	for i, mode := range []string{"", "read-only", "workspace-write"} {
		if mode != "" {
			p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": mode})
		}
		stop, _, fs := promptAllowing(t, p, sid, "run")
		if stop != "end_turn" {
			t.Fatalf("turn %d: stopReason %q; stderr:\n%s", i+1, stop, p.stderr.String())
		}
		frames = append(frames, fs...)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	res := toolResults(frames)
	for _, id := range []string{"ww2", "ro2", "ww4"} {
		// Not vacuous: the second call of each turn had a warm
		// supervisor of the turn's mode.
		mode := map[string]string{"ww2": "workspace-write", "ro2": "read-only", "ww4": "workspace-write"}[id]
		if !strings.Contains(res[id], "--warm-fd") || !strings.Contains(res[id], "--mode "+mode+" ") {
			t.Errorf("%s did not run under a warm %s supervisor: %q", id, mode, res[id])
		}
	}
	for _, id := range []string{"ro1", "ro2"} {
		if _, err := os.Stat(filepath.Join(ws, id)); err == nil {
			t.Errorf("ESCAPE: %s wrote the workspace in read-only: %q", id, res[id])
		}
		if strings.Contains(res[id], "--mode workspace-write") {
			t.Errorf("ESCAPE: %s in read-only ran under a workspace-write supervisor: %q", id, res[id])
		}
	}
	for _, id := range []string{"ww3", "ww4"} {
		if _, err := os.Stat(filepath.Join(ws, id)); err != nil {
			t.Errorf("%s could not write the workspace in workspace-write: %q", id, res[id])
		}
	}
}

// TestAttackWorkdirInsideGit: bash's workdir argument set to the
// workspace's .git. The supervisor enters the working directory before
// it mounts .git read-only; entered from beneath, the mount did not
// cover it, and a relative write reached .git/config (a core.fsmonitor
// runs at the user's next git status). Cold (first call) and warm alike,
// .git must stay as it was.
func TestAttackWorkdirInsideGit(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, ws, _ := awDirs(t)
	before := gdRepo(t, ws)
	in := func(id, command string) standin.Response {
		return standin.Response{ToolCalls: []standin.ToolCall{awToolCall(id, "bash", map[string]any{"command": command, "description": id, "workdir": ".git"})}}
	}
	plant := `echo '[core]' >> config; echo '	fsmonitor = touch PWNED' >> config; echo hook > hooks/post-checkout`
	res := gdRun(t, "workspace-write", dir, ws, nil, []standin.Response{
		in("cold", plant), in("warm", plant), in("warm2", plant), {Text: "done"},
	})
	t.Logf("results: %v", res)
	gdCompare(t, before, gdSnapshot(t, ws))
}
