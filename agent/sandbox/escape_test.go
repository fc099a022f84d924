package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/tools"
)

// escapeCase is an attempt by a command to change something outside the
// writable roots. Each is first run unconfined, where it must change
// something (so the attack is real), then under each confining mode, where
// it must change nothing.
type escapeCase struct {
	name   string
	script string
	// setup plants things in the fixture before the command runs.
	setup func(t *testing.T, f *fixture)
	// minABI is the Landlock ABI that confines the case (0: any).
	minABI int
}

// escapes returns the escape cases.
func escapes() []escapeCase {
	return []escapeCase{
		{name: "write", script: `echo pwn > "$OUT/victim"`},
		{name: "append", script: `echo pwn >> "$OUT/victim"`},
		{name: "create", script: `echo pwn > "$OUT/new"`},
		{name: "truncate", script: `truncate -s 0 "$OUT/victim"`, minABI: 3},
		{name: "dotdot", script: `echo pwn > "$REL/victim"`},
		{name: "planted symlink to file", script: `echo pwn > link`, setup: func(t *testing.T, f *fixture) {
			symlink(t, f.victim(), filepath.Join(f.root, "link"))
		}},
		{name: "planted symlink to dir", script: `echo pwn > linkdir/victim; echo pwn > linkdir/new`, setup: func(t *testing.T, f *fixture) {
			symlink(t, f.out, filepath.Join(f.root, "linkdir"))
		}},
		{name: "dangling symlink", script: `echo pwn > dangling`, setup: func(t *testing.T, f *fixture) {
			symlink(t, filepath.Join(f.out, "new"), filepath.Join(f.root, "dangling"))
		}},
		{name: "symlink made by the command", script: `ln -s "$OUT/victim" made; echo pwn > made`},
		{name: "hardlink into the workspace", script: `ln "$OUT/victim" hl; echo pwn >> hl`},
		{name: "hardlink into the temp dir", script: `ln "$OUT/victim" "$TMPDIR/hl"; echo pwn >> "$TMPDIR/hl"`},
		{name: "rename outside file into the workspace", script: `mv "$OUT/victim" moved; echo pwn >> moved`},
		{name: "rename workspace file over outside file", script: `echo pwn > f; mv f "$OUT/victim"`},
		{name: "rename workspace file out", script: `echo pwn > f; mv f "$OUT/new"`},
		{name: "rename within outside", script: `mv "$OUT/victim" "$OUT/renamed"`},
		{name: "delete", script: `rm -f "$OUT/victim"`},
		{name: "mkdir", script: `mkdir "$OUT/d"`},
		{name: "copy over", script: `echo pwn > f; cp f "$OUT/victim"`},
		{name: "tee", script: `echo pwn | tee "$OUT/victim"`},
		{name: "proc self root", script: `echo pwn > "/proc/self/root$OUT/victim"`},
		{name: "proc fd reopen", script: `exec 3<"$OUT/victim"; echo pwn > /proc/self/fd/3`},
		{name: "child process", script: `sh -c 'echo pwn > "$OUT/victim"'`},
		{name: "new session grandchild", script: `setsid -w sh -c 'sh -c "echo pwn > \"\$OUT/victim\""'`},
		{name: "perl", script: `perl -e 'open(my $f, ">", "$ENV{OUT}/victim") or die "open: $!\n"; print $f "pwn\n"; close($f) or die "close: $!\n"'`},
		{name: "temp dirs' parent", script: `echo pwn > "$TPARENT/escaped"`},
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestEscapesAreRealUnconfined(t *testing.T) {
	for _, tc := range escapes() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			// Make the sandbox temp dir exist, as it does in confined runs.
			if err := prepareTempDir(f.tmp()); err != nil {
				t.Fatal(err)
			}
			cmd := f.command(t, DangerFullAccess, tc.script)
			cmd.Env = append(cmd.Env, "TMPDIR="+f.tmp())
			before := f.outside(t, DangerFullAccess)
			res := run(t, cmd)
			if d := diffSnapshots(before, f.outside(t, DangerFullAccess)); len(d) == 0 {
				t.Errorf("unconfined, the escape changed nothing outside (exit %d, stderr %q): the case tests nothing", res.code, res.stderr)
			}
		})
	}
}

func TestEscapeSuite(t *testing.T) {
	abi := requireLandlock(t)
	t.Logf("Landlock ABI %d", abi)
	for _, mode := range []string{WorkspaceWrite, ReadOnly} {
		t.Run(mode, func(t *testing.T) {
			for _, tc := range escapes() {
				t.Run(tc.name, func(t *testing.T) {
					if abi < tc.minABI {
						t.Skipf("!!! PARTIAL ENFORCEMENT: Landlock ABI %d cannot confine this case (needs ABI %d); Describe reports it", abi, tc.minABI)
					}
					f := newFixture(t)
					if tc.setup != nil {
						tc.setup(t, f)
					}
					before := f.outside(t, mode)
					res := run(t, f.command(t, mode, tc.script))
					if d := diffSnapshots(before, f.outside(t, mode)); len(d) > 0 {
						t.Errorf("ESCAPE (exit %d, stderr %q):\n%s", res.code, res.stderr, strings.Join(d, "\n"))
					}
					checkVictim(t, f)
					if strings.Contains(res.stderr, UnavailableMarker) {
						t.Errorf("the sandbox was unavailable, not confining: %s", res.stderr)
					}
				})
			}
		})
	}
}

func TestReadOnlyWorkspaceIsNotWritable(t *testing.T) {
	requireLandlock(t)
	scripts := []string{
		`echo pwn > inside`,
		`echo pwn >> existing`,
		`truncate -s 0 existing`,
		`rm -f existing`,
		`mv existing renamed`,
		`mkdir sub`,
		`ln -s existing sl`,
		`echo pwn > "$TMPDIR/x"; echo pwn > "$TPARENT/x"`,
	}
	for _, script := range scripts {
		t.Run(script, func(t *testing.T) {
			f := newFixture(t)
			writeFile(t, f.root, "existing", "keep\n")
			before := f.outside(t, ReadOnly)
			res := run(t, f.command(t, ReadOnly, script))
			if d := diffSnapshots(before, f.outside(t, ReadOnly)); len(d) > 0 {
				t.Errorf("read-only wrote (exit %d, stderr %q):\n%s", res.code, res.stderr, strings.Join(d, "\n"))
			}
			if res.code == 0 {
				t.Errorf("exit 0; want the denial to fail the command (stderr %q)", res.stderr)
			}
			if got := Classify(res.code, res.stderr, ReadOnly); got != Denied {
				t.Errorf("Classify = %v, want denied (exit %d, stderr %q)", got, res.code, res.stderr)
			}
		})
	}
}

func TestWorkspaceWriteAllowsRootAndTemp(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	script := `set -e
test "$TMPDIR" = "` + f.tmp() + `"
echo one > inside
mkdir -p sub/deep
echo two > sub/deep/f
mv sub/deep/f sub/moved
ln sub/moved hard
ln -s sub/moved soft
echo three >> soft
truncate -s 3 inside
rm hard
echo four > "$TMPDIR/t"
mv "$TMPDIR/t" fromtmp
t=$(mktemp)
case "$t" in "$TMPDIR"/*) ;; *) echo "mktemp outside TMPDIR: $t" >&2; exit 1 ;; esac
echo five > "$t"
echo discard > /dev/null
head -c 4 /dev/zero > zeros
head -c 4 /dev/urandom > random
cat "$OUT/victim"
`
	res := run(t, f.command(t, WorkspaceWrite, script))
	if res.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.code, res.stderr)
	}
	if res.stdout != victimContent {
		t.Errorf("stdout %q, want the victim's content %q", res.stdout, victimContent)
	}
	want := map[string]string{
		"inside":    "one",
		"sub/moved": "two\nthree\n",
		"fromtmp":   "four\n",
		"zeros":     "\x00\x00\x00\x00",
	}
	for name, content := range want {
		b, err := os.ReadFile(filepath.Join(f.root, name))
		if err != nil || string(b) != content {
			t.Errorf("%s: %q, %v; want %q", name, b, err, content)
		}
	}
	if fi, err := os.Lstat(filepath.Join(f.root, "hard")); err == nil {
		t.Errorf("hard still exists: %v", fi.Mode())
	}
	checkVictim(t, f)
}

func TestReadOnlyCanReadAndExecute(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	writeFile(t, f.root, "readme", "hello\n")
	res := run(t, f.command(t, ReadOnly, `set -e; cat readme "$OUT/victim"; ls "$ROOT" >/dev/null; bash -c 'echo child'; echo x > /dev/null`))
	if res.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.code, res.stderr)
	}
	if want := "hello\n" + victimContent + "child\n"; res.stdout != want {
		t.Errorf("stdout %q, want %q", res.stdout, want)
	}
}

func TestDangerFullAccessIsNotConfined(t *testing.T) {
	f := newFixture(t)
	g, cmdFunc := f.sb.Hooks(DangerFullAccess, f.root)
	if cmdFunc != nil {
		t.Error("Hooks(danger-full-access) returned a CommandFunc; want nil (bash runs unconfined)")
	}
	if err := g.CheckWrite(f.victim()); err != nil {
		t.Errorf("guard: %v", err)
	}
	// sandbox-exec itself applies no ruleset in this mode, even when
	// Landlock is (forced) unavailable.
	cmd := f.command(t, DangerFullAccess, `echo pwn > "$OUT/victim"`)
	cmd.Env = append(cmd.Env, ForceUnavailableEnv+"=1")
	if res := run(t, cmd); res.code != 0 {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
	if b, _ := os.ReadFile(f.victim()); string(b) != "pwn\n" {
		t.Errorf("victim %q, want the unconfined write", b)
	}
}

func TestFailsClosedWithoutLandlock(t *testing.T) {
	for _, mode := range []string{WorkspaceWrite, ReadOnly} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			cmd := f.command(t, mode, `echo ran > "$ROOT/ran"; echo pwn > "$OUT/victim"`)
			cmd.Env = append(cmd.Env, ForceUnavailableEnv+"=1")
			res := run(t, cmd)
			if res.code != ExitUnavailable {
				t.Errorf("exit %d, want %d", res.code, ExitUnavailable)
			}
			line := "SANDBOX_UNAVAILABLE: Landlock is not available on this kernel; refusing to run unconfined in mode " + mode + "\n"
			if res.stderr != line {
				t.Errorf("stderr %q, want %q", res.stderr, line)
			}
			if got := Classify(res.code, res.stderr, mode); got != Unavailable {
				t.Errorf("Classify = %v, want unavailable", got)
			}
			if _, err := os.Stat(filepath.Join(f.root, "ran")); err == nil {
				t.Error("the command ran")
			}
			checkVictim(t, f)
		})
	}
}

func TestDeniedWriteClassifiesAsDenied(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	res := run(t, f.command(t, WorkspaceWrite, `echo pwn > "$OUT/victim"`))
	if got := Classify(res.code, res.stderr, WorkspaceWrite); got != Denied {
		t.Errorf("Classify(%d, %q) = %v, want denied", res.code, res.stderr, got)
	}
	res = run(t, f.command(t, WorkspaceWrite, `echo fine > inside; exit 3`))
	if got := Classify(res.code, res.stderr, WorkspaceWrite); got != Failed {
		t.Errorf("Classify(%d, %q) = %v, want failed", res.code, res.stderr, got)
	}
}

// TestThroughBashTool runs the CommandFunc the way the agent does, through
// the bash tool (own process group, combined output, exit status text).
func TestThroughBashTool(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	_, run := f.sb.Hooks(WorkspaceWrite, f.root)
	env := &tools.Env{
		Cwd:      f.root,
		SpillDir: filepath.Join(f.tempRoot, "spill"),
		Exec: func(ctx context.Context, script, workdir string) (*exec.Cmd, error) {
			cmd, err := run(ctx, script, workdir)
			if err == nil {
				cmd.Env = append(os.Environ(), helperEnv+"=1", "OUT="+f.out)
			}
			return cmd, err
		},
	}
	res, err := tools.Bash{}.Run(t.Context(), env, json.RawMessage(`{"command": "echo ok > inside; echo pwn > \"$OUT/victim\""}`))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text, "Permission denied") || !strings.Contains(res.Text, "[exit code 1]") {
		t.Errorf("result %q; want the denial and exit code 1", res.Text)
	}
	if got := Classify(1, res.Text, WorkspaceWrite); got != Denied {
		t.Errorf("Classify = %v, want denied", got)
	}
	if b, err := os.ReadFile(filepath.Join(f.root, "inside")); err != nil || string(b) != "ok\n" {
		t.Errorf("inside: %q, %v", b, err)
	}
	checkVictim(t, f)
}
