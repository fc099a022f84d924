package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// runOnce is a process that runs one command through a Sandbox's
// CommandFunc to its end, with the command's output as its own, and exits
// with the command's status (1 and a message when it could not start).
// args: MODE ROOT TEMPROOT SCRIPT.
func runOnce(args []string) {
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "sandbox-test-run: want MODE ROOT TEMPROOT SCRIPT")
		os.Exit(ExitUsage)
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sb := New(exe, TempRoot(args[2]))
	sb.warmKeep = append(sb.warmKeep, helperEnv)
	_, run := sb.Hooks(Mode(args[0]), args[1])
	cmd, err := run(context.Background(), args[3], args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "CommandFunc:", err)
		os.Exit(1)
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err = runCommand(cmd)
	_ = sb.Close()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestShieldUnprivileged: as a user other than root, workspace-write
// keeps .git read-only through a user namespace of its own, and a
// sandbox-exec started without one fails closed, saying why. Run as root,
// the test drops to uid and gid 65534 for its commands.
func TestShieldUnprivileged(t *testing.T) {
	requireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run its commands as another user")
	}
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
		t.Skip("user namespaces are disabled")
	}
	// A copy of the test binary, a workspace and a temp root the other
	// user may use.
	// Not t.TempDir: its parent is closed to other users.
	base, err := os.MkdirTemp("", "reel-shield-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if base, err = filepath.EvalSymlinks(base); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(base, "sandbox.test")
	copyFile(t, self, exe, 0o755)
	ws, tempRoot := filepath.Join(base, "ws"), filepath.Join(base, "tmp")
	for _, d := range []string{filepath.Join(ws, ".git", "hooks"), tempRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(ws, ".git"), "config", "[core]\n")
	for _, p := range []string{ws, filepath.Join(ws, ".git"), filepath.Join(ws, ".git", "hooks"), filepath.Join(ws, ".git", "config"), tempRoot} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	as := func(args ...string) (int, string) {
		cmd := exec.Command(exe, args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), helperEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	code, out := as("sandbox-test-run", string(WorkspaceWrite), ws, tempRoot,
		"echo planted >> .git/config; touch .git/hooks/pre-commit; echo ok > inside; id -u")
	if !strings.Contains(out, "Read-only file system") || !strings.Contains(out, "65534") {
		t.Errorf("confined run as 65534: exit %d, output %q; want the writes to .git refused read-only and the command to run as 65534", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf("ESCAPE: .git/config holds %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("ESCAPE: .git/hooks/pre-commit was created")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "inside")); string(b) != "ok\n" {
		t.Errorf("the workspace itself was not writable: inside holds %q (output %q)", b, out)
	}
	// sandbox-exec itself, started without a user namespace: no private
	// mount namespace, so nothing runs.
	code, out = as("sandbox-exec", "--mode", string(WorkspaceWrite), "--root", ws, "--tmp", filepath.Join(tempRoot, "t"), "--",
		"sh", "-c", "echo RAN; echo planted >> .git/config")
	if code != ExitUnavailable || strings.Contains(out, "RAN") || !strings.Contains(out, "private mount namespace") {
		t.Errorf("sandbox-exec without a user namespace: exit %d, output %q; want %d, nothing run, a message naming the mount namespace", code, out, ExitUnavailable)
	}
}

// copyFile copies src to dst with mode perm.
func copyFile(t *testing.T, src, dst string, perm os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestProtected: the protected paths of a root, with .git a directory and
// with .git a gitdir file (a worktree: its git dir and common dir).
func TestProtected(t *testing.T) {
	root := realTempDir(t)
	names := []string{root + "/.git", root + "/.reel", root + "/.dsh", root + "/.agents", root + "/.claude"}
	if got, want := Protected(root), names; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("no .git: Protected = %v, want %v", got, want)
	}
	main := realTempDir(t)
	gitdir := filepath.Join(main, ".git", "worktrees", "w")
	if err := os.MkdirAll(gitdir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, gitdir, "commondir", "../..\n")
	writeFile(t, root, ".git", "gitdir: "+gitdir+"\n")
	want := append(names, gitdir, filepath.Join(main, ".git"))
	if got := Protected(root); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf(".git file: Protected = %v, want %v", got, want)
	}
}

// TestDenialNote: what the note says was blocked, by the lines of stderr.
func TestDenialNote(t *testing.T) {
	ww := Marker(WorkspaceWrite) + " the sandbox blocked "
	end := "; the command's other effects stand."
	for _, tc := range []struct {
		name       string
		mode       Mode
		stderr     string
		networkOff bool
		want       string
	}{
		{"write", WorkspaceWrite, "touch: cannot touch '/x': Permission denied\n", false, ww + DeniedWrite + end},
		{"git config", WorkspaceWrite, "error: could not lock config file .git/config: Read-only file system\n", false, ww + DeniedProtected + end},
		{"mv .git", WorkspaceWrite, "mv: cannot move '.git' to 'x': Device or resource busy\n", false, ww + DeniedProtected + end},
		{"hard link", WorkspaceWrite, "ln: failed to create hard link 'hl' => '.git/config': Invalid cross-device link\n", false, ww + DeniedProtected + end},
		{"quarantine", WorkspaceWrite, QuarantineNote + " /w/.git, which the command created, to /w/.git.reel-quarantine-1: …\n", false, ww + DeniedProtected + end},
		{"connect", WorkspaceWrite, "bash: connect: Permission denied\nbash: line 1: /dev/tcp/127.0.0.1/80: Permission denied\n", true, ww + DeniedNetwork + end},
		{"connect, network on", WorkspaceWrite, "bash: connect: Permission denied\n", false, ww + DeniedWrite + end},
		{"a path naming the network", WorkspaceWrite, "bash: /tmp/NetworkTest/y: Permission denied\n", true, ww + DeniedWrite + end},
		{"both", WorkspaceWrite, "curl: (7) Failed to connect to h port 80: Permission denied\ntouch: cannot touch '/x': Permission denied\n", true, ww + DeniedNetwork + ", and " + DeniedWrite + end},
		{"read-only names .git as a write", ReadOnly, "error: could not lock config file .git/config: Permission denied\n", false, Marker(ReadOnly) + " the sandbox blocked " + DeniedWrite + end},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(1, tc.stderr, tc.mode); got != Denied {
				t.Errorf("Classify = %v, want denied", got)
			}
			if got := DenialNote(tc.mode, tc.stderr, tc.networkOff); got != tc.want {
				t.Errorf("DenialNote =\n %q\nwant\n %q", got, tc.want)
			}
		})
	}
	if got := Classify(1, "rmdir: failed to remove 'x': Device or resource busy\n", WorkspaceWrite); got != Failed {
		t.Errorf("EBUSY not naming .git or .reel: Classify = %v, want failed", got)
	}
}
