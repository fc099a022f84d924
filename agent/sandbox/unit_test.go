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
			args: []string{"--mode", string(WorkspaceWrite), "--root", "/w/", "--tmp", "/t", "--", "bash", "-c", "echo hi"},
			want: execArgs{mode: WorkspaceWrite, root: "/w", tmp: "/t", network: true, livenessFD: -1, argv: []string{"bash", "-c", "echo hi"}},
		},
		{
			name: "read-only needs no root",
			args: []string{"--mode", string(ReadOnly), "--", "ls", "--", "-x"},
			want: execArgs{mode: ReadOnly, network: true, livenessFD: -1, argv: []string{"ls", "--", "-x"}},
		},
		{
			name: "program flags are not ours",
			args: []string{"--mode", string(DangerFullAccess), "--", "bash", "--mode", "x"},
			want: execArgs{mode: DangerFullAccess, network: true, livenessFD: -1, argv: []string{"bash", "--mode", "x"}},
		},
		{
			name: "network off and liveness fd",
			args: []string{"--mode", string(ReadOnly), "--network", "off", "--liveness-fd", "3", "--", "true"},
			want: execArgs{mode: ReadOnly, network: false, livenessFD: 3, argv: []string{"true"}},
		},
		{
			name: "network on",
			args: []string{"--mode", string(ReadOnly), "--network=on", "--", "true"},
			want: execArgs{mode: ReadOnly, network: true, livenessFD: -1, argv: []string{"true"}},
		},
		{name: "network bad value", args: []string{"--mode", string(ReadOnly), "--network", "maybe", "--", "true"}, wantErr: `want on or off, got "maybe"`},
		{name: "liveness fd of stdio", args: []string{"--mode", string(ReadOnly), "--liveness-fd", "1", "--", "true"}, wantErr: "--liveness-fd must be 3 or more"},
		{name: "workspace-write without tmp", args: []string{"--mode=workspace-write", "--root=/w", "--", "true"}, wantErr: "absolute --tmp"},
		{name: "no separator", args: []string{"--mode", string(ReadOnly), "bash"}, wantErr: "want -- before the program"},
		{name: "no program", args: []string{"--mode", string(ReadOnly), "--"}, wantErr: "no program"},
		{name: "no mode", args: []string{"--root", "/w", "--", "true"}, wantErr: "--mode is required"},
		{name: "unknown mode", args: []string{"--mode", "yolo", "--", "true"}, wantErr: `unknown mode "yolo"`},
		{name: "unknown flag", args: []string{"--mode", string(ReadOnly), "--net", "--", "true"}, wantErr: "flag provided but not defined"},
		{name: "workspace-write without root", args: []string{"--mode", string(WorkspaceWrite), "--", "true"}, wantErr: "absolute --root"},
		{name: "relative root", args: []string{"--mode", string(WorkspaceWrite), "--root", "w", "--", "true"}, wantErr: "absolute --root"},
		{name: "relative tmp", args: []string{"--mode", string(WorkspaceWrite), "--root", "/w", "--tmp", "t", "--", "true"}, wantErr: "absolute --tmp"},
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
			if got.mode != tc.want.mode || got.root != tc.want.root || got.tmp != tc.want.tmp || got.network != tc.want.network ||
				got.livenessFD != tc.want.livenessFD || !slices.Equal(got.argv, tc.want.argv) {
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
		{"program not found", []string{"--mode", string(WorkspaceWrite), "--root", t.TempDir(), "--tmp", t.TempDir(), "--", "reel-no-such-program-xyzzy"}, exec.ErrNotFound, ExitNotFound},
		{"program not found unconfined", []string{"--mode", string(DangerFullAccess), "--", "reel-no-such-program-xyzzy"}, exec.ErrNotFound, ExitNotFound},
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
	cases := []struct {
		err  *UnavailableError
		want string
	}{
		{&UnavailableError{Mode: WorkspaceWrite, Err: reason},
			"SANDBOX_UNAVAILABLE: Landlock is not available on this kernel; refusing to run unconfined in mode workspace-write"},
		{&UnavailableError{Mode: ReadOnly, Network: true, ABI: 3},
			"SANDBOX_UNAVAILABLE: --network off needs Landlock network rules (ABI 4), this kernel has ABI 3; refusing to run with network access in mode read-only"},
	}
	for _, tc := range cases {
		err := error(tc.err)
		if err.Error() != tc.want {
			t.Errorf("Error() = %q, want %q", err, tc.want)
		}
		if !errors.Is(err, ErrUnavailable) || (tc.err.Err != nil && !errors.Is(err, reason)) {
			t.Errorf("%v does not match ErrUnavailable and its reason", err)
		}
		if ExitCode(err) != ExitUnavailable || Classify(ExitUnavailable, err.Error()+"\n", tc.err.Mode) != Unavailable {
			t.Errorf("%v: ExitCode %d, Classify %v", err, ExitCode(err), Classify(ExitUnavailable, err.Error(), tc.err.Mode))
		}
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
		mode   Mode
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
		mode     Mode
		abi      int
		off      bool // --network off
		contains []string
		excludes []string
	}{
		{mode: ReadOnly, abi: 7, contains: []string{"write nothing"}, excludes: []string{"Landlock", "Network"}},
		{mode: WorkspaceWrite, abi: 3, contains: []string{"working directory", "temp directory"}, excludes: []string{"Landlock", "Network"}},
		{mode: WorkspaceWrite, abi: 2, contains: []string{"Landlock ABI 2: file truncation is not confined."}},
		{mode: ReadOnly, abi: 1, contains: []string{"Landlock ABI 1: file truncation is not confined"}},
		{mode: WorkspaceWrite, abi: 0, contains: []string{"Landlock is unavailable: commands in this mode fail with SANDBOX_UNAVAILABLE"}},
		{mode: WorkspaceWrite, abi: 0, off: true, contains: []string{"Landlock is unavailable"}, excludes: []string{"Network"}},
		{mode: DangerFullAccess, abi: 0, contains: []string{"Nothing is confined"}, excludes: []string{"Landlock"}},
		{mode: DangerFullAccess, abi: 7, off: true, contains: []string{"Nothing is confined"}, excludes: []string{"Network"}},
		{mode: "yolo", abi: 7, contains: []string{"Unknown sandbox mode", "refused"}},
		{mode: ReadOnly, abi: 4, off: true, contains: []string{"Network access is switched off: commands cannot connect or bind TCP sockets"}},
		{mode: WorkspaceWrite, abi: 7, off: true, contains: []string{"Network access is switched off: commands cannot connect or bind TCP sockets"}},
		{mode: ReadOnly, abi: 3, off: true, contains: []string{"Network access is switched off, but Landlock ABI 3 cannot deny it: commands in this mode fail with SANDBOX_UNAVAILABLE"}},
	}
	for _, tc := range cases {
		got := describe(tc.mode, tc.abi, !tc.off)
		for _, s := range tc.contains {
			if !strings.Contains(got, s) {
				t.Errorf("describe(%s, %d, off %v) = %q, want it to say %q", tc.mode, tc.abi, tc.off, got, s)
			}
		}
		for _, s := range tc.excludes {
			if strings.Contains(got, s) {
				t.Errorf("describe(%s, %d, off %v) = %q, must not say %q", tc.mode, tc.abi, tc.off, got, s)
			}
		}
	}
	// Full enforcement reads the same on every kernel from ABI 3 on (4 on
	// with the network off), so recorded system prompts do not depend on
	// the machine.
	for abi := 4; abi <= 12; abi++ {
		for _, m := range []Mode{ReadOnly, WorkspaceWrite} {
			if describe(m, abi, true) != describe(m, 3, true) || describe(m, abi, false) != describe(m, 4, false) {
				t.Errorf("describe(%s, %d) differs from ABI 3 (4 with the network off)", m, abi)
			}
		}
	}
	if New("/bin/false", Network(false)).Describe(ReadOnly) == New("/bin/false").Describe(ReadOnly) {
		t.Error("Describe does not depend on Network(false)")
	}
}

func TestTempDirs(t *testing.T) {
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
			if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
				t.Fatal(err)
			}
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

// TestPrivateTempBase: each Sandbox has its own base dir with a random
// name, private to this user, holding the per-root dirs; Close removes it.
// A name another user could guess and plant is not used.
func TestPrivateTempBase(t *testing.T) {
	tempRoot := t.TempDir()
	a, b := New("/bin/false", TempRoot(tempRoot)), New("/bin/false", TempRoot(tempRoot))
	ta, tb := a.TempDir("/w/a"), b.TempDir("/w/a")
	if ta == "" || tb == "" || ta == tb {
		t.Fatalf("TempDir = %q and %q; want two different dirs", ta, tb)
	}
	if ta != a.TempDir("/w/a/") || ta == a.TempDir("/w/b") {
		t.Errorf("TempDir is not one dir per root: %q, %q, %q", ta, a.TempDir("/w/a/"), a.TempDir("/w/b"))
	}
	base := filepath.Dir(ta)
	if filepath.Dir(base) != tempRoot || !strings.HasPrefix(filepath.Base(base), "reel-sandbox-") {
		t.Errorf("base dir %s, want a reel-sandbox-* dir in %s", base, tempRoot)
	}
	fi, err := os.Lstat(base)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("base dir %v, %v; want a 0700 directory", fi, err)
	}
	// Hooks makes the per-root dir of workspace-write, private too.
	root := t.TempDir()
	_, run := a.Hooks(WorkspaceWrite, root)
	cmd, err := run(t.Context(), "true", root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cmd.Args, "--tmp") || !slices.Contains(cmd.Args, a.TempDir(root)) {
		t.Errorf("command %v does not name the temp dir %s", cmd.Args, a.TempDir(root))
	}
	if fi, err := os.Lstat(a.TempDir(root)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("per-root temp dir: %v, %v", fi, err)
	}
	writeFile(t, a.TempDir(root), "left-over", "x")
	for _, sb := range []*Sandbox{a, b} {
		if err := sb.Close(); err != nil {
			t.Fatal(err)
		}
		if err := sb.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
	if _, err := os.Lstat(base); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("base dir after Close: %v; want it removed", err)
	}
	if _, err := run(t.Context(), "true", root); err == nil {
		t.Error("a closed Sandbox still builds commands")
	}
	if d := a.TempDir(root); d != "" {
		t.Errorf("TempDir after Close = %q, want \"\"", d)
	}
}

// TestTempBaseUnusable: when the base dir cannot be made, commands that
// need it fail with a clear error and the guard allows the root only.
func TestTempBaseUnusable(t *testing.T) {
	sb := New("/bin/false", TempRoot(filepath.Join(t.TempDir(), "missing")))
	defer sb.Close()
	root := t.TempDir()
	g, run := sb.Hooks(WorkspaceWrite, root)
	if _, err := run(t.Context(), "true", root); err == nil || !strings.Contains(err.Error(), "making the private temp dir") {
		t.Errorf("CommandFunc error %v, want it to name the temp dir", err)
	}
	roots, err := g.WriteRoots(filepath.Join(root, "f"))
	if err != nil || !slices.Equal(roots, []string{root}) {
		t.Errorf("WriteRoots = %v, %v; want the root only", roots, err)
	}
	// read-only needs no temp dir.
	_, run = sb.Hooks(ReadOnly, root)
	if _, err := run(t.Context(), "true", root); err != nil {
		t.Errorf("read-only CommandFunc: %v", err)
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
