package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/agent/tools"
)

// helperEnv, set to "1", lets the test binary act as "reel sandbox-exec".
const helperEnv = "REEL_SANDBOX_TEST_HELPER"

// TestMain turns the test binary into reel sandbox-exec when it is run as
// "TESTBIN sandbox-exec …" with helperEnv=1, the way cmd/reel dispatches it,
// and into a parent of a supervised command with "TESTBIN
// sandbox-test-parent MODE ROOT TEMPROOT SCRIPT" (see runParent).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "sandbox-exec" || os.Args[1] == "sandbox-test-parent" || os.Args[1] == "sandbox-test-run") {
		if os.Getenv(helperEnv) != "1" {
			// Never fall through to running the tests again.
			fmt.Fprintf(os.Stderr, "test binary run as %s without %s=1\n", os.Args[1], helperEnv)
			os.Exit(ExitUsage)
		}
		switch os.Args[1] {
		case "sandbox-test-parent":
			runParent(os.Args[2:])
		case "sandbox-test-run":
			runOnce(os.Args[2:])
		}
		err := Exec(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(ExitCode(err))
	}
	os.Exit(m.Run())
}

// runParent is a process that holds a Sandbox (so the liveness pipe's
// write end) and one supervised command: it starts the command, prints
// "started PID" when the command printed its first line, and then waits
// to be killed. args: MODE ROOT TEMPROOT SCRIPT.
func runParent(args []string) {
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "sandbox-test-parent: want MODE ROOT TEMPROOT SCRIPT")
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
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = tools.StartCommand(cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, "reading the command's first line:", err)
		os.Exit(1)
	}
	fmt.Printf("started %d %s", cmd.Process.Pid, line)
	select {}
}

// requireLandlock returns the kernel's Landlock ABI. Without Landlock the
// test is skipped, except under CI=true where that is a failure.
func requireLandlock(t *testing.T) int {
	t.Helper()
	abi, err := Probe()
	if abi > 0 {
		return abi
	}
	msg := fmt.Sprintf("!!! LANDLOCK IS NOT AVAILABLE ON THIS MACHINE (%v): the sandbox escape suite CANNOT run here. "+
		"Enable Landlock (CONFIG_SECURITY_LANDLOCK=y and lsm=…,landlock on the kernel command line) to test the sandbox. !!!", err)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return 0
}

const victimContent = "original secret\n"

// fixture is a workspace (root), a directory outside it (out) holding a
// victim file, and the directory the sandbox's temp dirs go in.
type fixture struct {
	root, out, tempRoot string
	sb                  *Sandbox
}

// newFixture makes a fixture with fresh temporary directories, their
// symbolic links resolved.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{root: realTempDir(t), out: realTempDir(t), tempRoot: realTempDir(t)}
	f.sb = New(exe, TempRoot(f.tempRoot))
	// The test binary acts as sandbox-exec only with helperEnv.
	f.sb.warmKeep = append(f.sb.warmKeep, helperEnv)
	t.Cleanup(func() {
		if err := f.sb.Close(); err != nil {
			t.Errorf("Sandbox.Close: %v", err)
		}
	})
	writeFile(t, f.out, "victim", victimContent)
	return f
}

func (f *fixture) victim() string { return filepath.Join(f.out, "victim") }
func (f *fixture) tmp() string    { return f.sb.TempDir(f.root) }

// realTempDir is t.TempDir with symbolic links resolved.
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// writeFile creates dir/name with content and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// result is what a command did.
type result struct {
	code           int
	stdout, stderr string
}

// command builds the command running script under mode in the fixture's
// root through the Sandbox's CommandFunc. The script sees ROOT, OUT, REL
// (OUT relative to ROOT) and TPARENT (the temp dirs' parent).
func (f *fixture) command(t *testing.T, mode Mode, script string) *exec.Cmd {
	t.Helper()
	_, run := f.sb.Hooks(mode, f.root)
	if run == nil {
		t.Fatalf("Hooks(%s) returned no CommandFunc", mode)
	}
	cmd, err := run(t.Context(), script, f.root)
	if err != nil {
		t.Fatalf("CommandFunc: %v", err)
	}
	rel, err := filepath.Rel(f.root, f.out)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), helperEnv+"=1", "ROOT="+f.root, "OUT="+f.out, "REL="+rel, "TPARENT="+f.tempRoot)
	return cmd
}

// runCommand runs cmd, built by a CommandFunc, as bash does
// (tools.StartCommand, then Wait).
func runCommand(cmd *exec.Cmd) error {
	if err := tools.StartCommand(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// run runs cmd and returns its exit status and output.
func run(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := runCommand(cmd)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running %v: %v", cmd.Args, err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// snapshot describes every file under dir (type, content, link target),
// skipping the subtree at skip.
func snapshot(t *testing.T, dir, skip string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			m[p] = "link " + target
		case d.IsDir():
			m[p] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[p] = "file " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// diffSnapshots lists the paths whose description differs.
func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			d = append(d, "removed "+p)
		} else if a != b {
			d = append(d, fmt.Sprintf("changed %s: %q -> %q", p, b, a))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			d = append(d, "created "+p)
		}
	}
	return d
}

// outside snapshots what no confined command may change: the outside
// directory and the temp dirs' parent (bar the sandbox's own temp dir),
// and in read-only also the workspace.
func (f *fixture) outside(t *testing.T, mode Mode) map[string]string {
	t.Helper()
	m := snapshot(t, f.out, "")
	for p, v := range snapshot(t, f.tempRoot, f.tmp()) {
		m[p] = v
	}
	if mode == ReadOnly {
		for p, v := range snapshot(t, f.root, "") {
			m[p] = v
		}
	}
	return m
}

// checkVictim fails the test unless the victim is byte-for-byte intact.
func checkVictim(t *testing.T, f *fixture) {
	t.Helper()
	b, err := os.ReadFile(f.victim())
	if err != nil {
		t.Errorf("ESCAPE: victim %s: %v", f.victim(), err)
		return
	}
	if !bytes.Equal(b, []byte(victimContent)) {
		t.Errorf("ESCAPE: victim changed: %q, want %q", b, victimContent)
	}
}
