package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseExecArgs(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    execArgs
		wantErr string
	}{
		{
			name: "workspace-write with tmp",
			args: []string{"--mode", WorkspaceWrite, "--root", "/w/", "--tmp", "/t", "--", "bash", "-c", "echo hi"},
			want: execArgs{mode: WorkspaceWrite, root: "/w", tmp: "/t", argv: []string{"bash", "-c", "echo hi"}},
		},
		{
			name: "default tmp",
			args: []string{"--mode=workspace-write", "--root=/w", "--", "true"},
			want: execArgs{mode: WorkspaceWrite, root: "/w", tmp: DefaultTempDir("/w"), argv: []string{"true"}},
		},
		{
			name: "read-only needs no root",
			args: []string{"--mode", ReadOnly, "--", "ls", "--", "-x"},
			want: execArgs{mode: ReadOnly, argv: []string{"ls", "--", "-x"}},
		},
		{
			name: "program flags are not ours",
			args: []string{"--mode", DangerFullAccess, "--", "bash", "--mode", "x"},
			want: execArgs{mode: DangerFullAccess, argv: []string{"bash", "--mode", "x"}},
		},
		{name: "no separator", args: []string{"--mode", ReadOnly, "bash"}, wantErr: "want -- before the program"},
		{name: "no program", args: []string{"--mode", ReadOnly, "--"}, wantErr: "no program"},
		{name: "no mode", args: []string{"--root", "/w", "--", "true"}, wantErr: "--mode is required"},
		{name: "unknown mode", args: []string{"--mode", "yolo", "--", "true"}, wantErr: `unknown mode "yolo"`},
		{name: "unknown flag", args: []string{"--mode", ReadOnly, "--net", "--", "true"}, wantErr: "flag provided but not defined"},
		{name: "workspace-write without root", args: []string{"--mode", WorkspaceWrite, "--", "true"}, wantErr: "absolute --root"},
		{name: "relative root", args: []string{"--mode", WorkspaceWrite, "--root", "w", "--", "true"}, wantErr: "absolute --root"},
		{name: "relative tmp", args: []string{"--mode", WorkspaceWrite, "--root", "/w", "--tmp", "t", "--", "true"}, wantErr: "--tmp must be absolute"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseExecArgs(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrUsage) {
					t.Fatalf("err = %v; want ErrUsage mentioning %q", err, tc.wantErr)
				}
				if ExitCode(err) != ExitUsage {
					t.Errorf("ExitCode = %d, want %d", ExitCode(err), ExitUsage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.mode != tc.want.mode || got.root != tc.want.root || got.tmp != tc.want.tmp || !slices.Equal(got.argv, tc.want.argv) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestExecErrorsBeforeConfining calls Exec in process: every case fails
// before a ruleset is applied or anything is executed.
func TestExecErrorsBeforeConfining(t *testing.T) {
	cases := []struct {
		name string
		args []string
		is   error
		code int
	}{
		{"usage", []string{"--mode", "yolo", "--", "true"}, ErrUsage, ExitUsage},
		{"program not found", []string{"--mode", WorkspaceWrite, "--root", t.TempDir(), "--", "reel-no-such-program-xyzzy"}, exec.ErrNotFound, ExitNotFound},
		{"program not found unconfined", []string{"--mode", DangerFullAccess, "--", "reel-no-such-program-xyzzy"}, exec.ErrNotFound, ExitNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Exec(tc.args)
			if !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			if got := ExitCode(err); got != tc.code {
				t.Errorf("ExitCode = %d, want %d", got, tc.code)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{&UnavailableError{Mode: ReadOnly}, ExitUnavailable},
		{errors.Join(ErrSetup, errors.New("x")), ExitUnavailable},
		{ErrUsage, ExitUsage},
		{exec.ErrNotFound, ExitNotFound},
	}
	for _, tc := range cases {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestUnavailableError(t *testing.T) {
	reason := errors.New("ENOSYS")
	err := error(&UnavailableError{Mode: WorkspaceWrite, Err: reason})
	want := "SANDBOX_UNAVAILABLE: Landlock is not available on this kernel; refusing to run unconfined in mode workspace-write"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, reason) {
		t.Errorf("%v does not match ErrUnavailable and its reason", err)
	}
}

func TestProbeForcedUnavailable(t *testing.T) {
	t.Setenv(ForceUnavailableEnv, "1")
	abi, err := Probe()
	if abi != 0 || !errors.Is(err, ErrUnavailable) {
		t.Errorf("Probe() = %d, %v; want 0 and ErrUnavailable", abi, err)
	}
	sb := New("/bin/false")
	if sb.ABI() != 0 || !strings.Contains(sb.Describe(ReadOnly), "Landlock is unavailable") {
		t.Errorf("ABI %d, Describe %q", sb.ABI(), sb.Describe(ReadOnly))
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		code   int
		stderr string
		mode   string
		want   Outcome
	}{
		{0, "", WorkspaceWrite, OK},
		{0, "bash: /x: Permission denied\n", WorkspaceWrite, OK},
		{1, "bash: /x: Permission denied\n", WorkspaceWrite, Denied},
		{1, "rm: cannot remove '/x': Operation not permitted\n", ReadOnly, Denied},
		{1, "ln: failed to create hard link 'a' => '/x': Invalid cross-device link\n", WorkspaceWrite, Denied},
		{1, "bash: /x: Permission denied\n", DangerFullAccess, Failed},
		{2, "grep: pattern not found\n", ReadOnly, Failed},
		{126, "SANDBOX_UNAVAILABLE: Landlock is not available on this kernel; refusing to run unconfined in mode read-only\n", ReadOnly, Unavailable},
		{126, "bash: ./x: Permission denied\n", WorkspaceWrite, Denied},
		{126, "bash: ./x: cannot execute binary file\n", WorkspaceWrite, Failed},
		{1, "SANDBOX_UNAVAILABLE mentioned by the program\n", WorkspaceWrite, Failed},
	}
	for _, tc := range cases {
		if got := Classify(tc.code, tc.stderr, tc.mode); got != tc.want {
			t.Errorf("Classify(%d, %q, %s) = %v, want %v", tc.code, tc.stderr, tc.mode, got, tc.want)
		}
	}
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[Outcome]string{OK: "ok", Failed: "failed", Denied: "denied", Unavailable: "unavailable", 9: "Outcome(9)"} {
		if o.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(o), o.String(), want)
		}
	}
}

func TestMarker(t *testing.T) {
	if got := Marker(ReadOnly); got != "[sandbox denied: mode read-only]" {
		t.Errorf("Marker = %q", got)
	}
}

func TestDescribe(t *testing.T) {
	cases := []struct {
		mode      string
		abi       int
		contains  []string
		excludes  []string
		identical string // mode whose description must equal this one
	}{
		{mode: ReadOnly, abi: 7, contains: []string{"write nothing"}, excludes: []string{"Landlock"}},
		{mode: WorkspaceWrite, abi: 3, contains: []string{"working directory", "temp directory"}, excludes: []string{"Landlock"}},
		{mode: WorkspaceWrite, abi: 2, contains: []string{"Landlock ABI 2: file truncation is not confined."}},
		{mode: ReadOnly, abi: 1, contains: []string{"Landlock ABI 1: file truncation is not confined"}},
		{mode: WorkspaceWrite, abi: 0, contains: []string{"Landlock is unavailable: commands in this mode fail with SANDBOX_UNAVAILABLE"}},
		{mode: DangerFullAccess, abi: 0, contains: []string{"Nothing is confined"}, excludes: []string{"Landlock"}},
		{mode: "yolo", abi: 7, contains: []string{"Unknown sandbox mode", "refused"}},
	}
	for _, tc := range cases {
		got := describe(tc.mode, tc.abi)
		for _, s := range tc.contains {
			if !strings.Contains(got, s) {
				t.Errorf("describe(%s, %d) = %q, want it to say %q", tc.mode, tc.abi, got, s)
			}
		}
		for _, s := range tc.excludes {
			if strings.Contains(got, s) {
				t.Errorf("describe(%s, %d) = %q, must not say %q", tc.mode, tc.abi, got, s)
			}
		}
	}
	// Full enforcement reads the same on every kernel from ABI 3 on, so
	// recorded system prompts do not depend on the machine.
	for abi := 4; abi <= 12; abi++ {
		for _, m := range []string{ReadOnly, WorkspaceWrite} {
			if describe(m, abi) != describe(m, 3) {
				t.Errorf("describe(%s, %d) differs from ABI 3", m, abi)
			}
		}
	}
}

func TestTempDirs(t *testing.T) {
	a, b := DefaultTempDir("/w/a"), DefaultTempDir("/w/b")
	if a == b || a != DefaultTempDir("/w/a/") || filepath.Dir(a) != filepath.Clean(os.TempDir()) {
		t.Errorf("DefaultTempDir: %q, %q", a, b)
	}
	parent := t.TempDir()
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		ok    bool
	}{
		{"created", func(*testing.T, string) {}, true},
		{"existing private", func(t *testing.T, dir string) { mkdirMode(t, dir, 0o700) }, true},
		{"open to others", func(t *testing.T, dir string) { mkdirMode(t, dir, 0o777) }, false},
		{"symlink planted", func(t *testing.T, dir string) { symlink(t, t.TempDir(), dir) }, false},
		{"file planted", func(t *testing.T, dir string) { writeFile(t, filepath.Dir(dir), filepath.Base(dir), "") }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(parent, strings.ReplaceAll(tc.name, " ", "-"), "tmp")
			mkdir(t, filepath.Dir(dir))
			tc.setup(t, dir)
			err := prepareTempDir(dir)
			if (err == nil) != tc.ok {
				t.Fatalf("prepareTempDir = %v, want ok %v", err, tc.ok)
			}
			if tc.ok {
				fi, err := os.Lstat(dir)
				if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
					t.Errorf("temp dir %v, %v; want a 0700 directory", fi, err)
				}
			}
		})
	}
}

func mkdirMode(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}

func TestRealPath(t *testing.T) {
	dir := realTempDir(t)
	mkdir(t, filepath.Join(dir, "d"))
	symlink(t, "d", filepath.Join(dir, "rel"))
	symlink(t, filepath.Join(dir, "nowhere", "x"), filepath.Join(dir, "dangling"))
	symlink(t, "loop", filepath.Join(dir, "loop"))
	cases := []struct {
		in, want string
		err      bool
	}{
		{in: dir + "/rel/f", want: dir + "/d/f"},
		{in: dir + "/rel/../d/./f", want: dir + "/d/f"},
		{in: dir + "/dangling", want: dir + "/nowhere/x"},
		{in: dir + "/new/a/b", want: dir + "/new/a/b"},
		{in: dir + "/loop/x", err: true},
	}
	for _, tc := range cases {
		got, err := realPath(tc.in)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("realPath(%q) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}
