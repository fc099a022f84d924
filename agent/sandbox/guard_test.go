package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reel-agent/reel/agent/tools"
)

// toolCall runs the write or edit tool with args in an Env guarded by the
// fixture's sandbox under mode.
func toolCall(t *testing.T, f *fixture, mode Mode, tool tools.Tool, args map[string]any) tools.Result {
	t.Helper()
	g, _ := f.sb.Hooks(mode, f.root)
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	env := &tools.Env{Cwd: f.root, SpillDir: filepath.Join(f.tempRoot, "spill"), Guard: g}
	res, err := tool.Run(context.Background(), env, raw)
	if err != nil {
		t.Fatalf("%s: %v", tool.Name(), err)
	}
	return res
}

func TestGuardThroughTools(t *testing.T) {
	write := func(path string) (tools.Tool, func(f *fixture) map[string]any) {
		return tools.Write{}, func(*fixture) map[string]any { return map[string]any{"file_path": path, "content": "pwn\n"} }
	}
	edit := func(path string) (tools.Tool, func(f *fixture) map[string]any) {
		return tools.Edit{}, func(*fixture) map[string]any {
			return map[string]any{"file_path": path, "old_string": "original", "new_string": "pwned"}
		}
	}
	type toolArgs = func(f *fixture) map[string]any
	cases := []struct {
		name  string
		mode  Mode
		setup func(t *testing.T, f *fixture)
		// call returns the tool and its arguments for the fixture.
		call  func(f *fixture) (tools.Tool, toolArgs)
		allow bool
		// check verifies the effect of an allowed call.
		check func(t *testing.T, f *fixture)
	}{
		{
			name: "relative inside", mode: WorkspaceWrite, allow: true,
			call:  func(*fixture) (tools.Tool, toolArgs) { return write("sub/inside.txt") },
			check: wantFile("sub/inside.txt", "pwn\n"),
		},
		{
			name: "temp dir", mode: WorkspaceWrite, allow: true,
			call: func(f *fixture) (tools.Tool, toolArgs) { return write(filepath.Join(f.tmp(), "t.txt")) },
			check: func(t *testing.T, f *fixture) {
				if b, err := os.ReadFile(filepath.Join(f.tmp(), "t.txt")); err != nil || string(b) != "pwn\n" {
					t.Errorf("temp file: %q, %v", b, err)
				}
			},
		},
		{
			name: "edit inside", mode: WorkspaceWrite, allow: true,
			setup: func(t *testing.T, f *fixture) { writeFile(t, f.root, "own.txt", "original\n") },
			call:  func(*fixture) (tools.Tool, toolArgs) { return edit("own.txt") },
			check: wantFile("own.txt", "pwned\n"),
		},
		{
			name: "dotdot", mode: WorkspaceWrite,
			call: func(f *fixture) (tools.Tool, toolArgs) {
				rel, _ := filepath.Rel(f.root, f.victim())
				return write(rel)
			},
		},
		{
			name: "absolute outside", mode: WorkspaceWrite,
			call: func(f *fixture) (tools.Tool, toolArgs) { return write(f.victim()) },
		},
		{
			name: "new file outside", mode: WorkspaceWrite,
			call: func(f *fixture) (tools.Tool, toolArgs) { return write(filepath.Join(f.out, "new")) },
		},
		{
			name: "dotdot hidden in a subdirectory", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) { mkdir(t, filepath.Join(f.root, "a")) },
			call: func(f *fixture) (tools.Tool, toolArgs) {
				return write("a/../../" + filepath.Base(f.out) + "/victim")
			},
		},
		{
			name: "symlink to file", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) { symlink(t, f.victim(), filepath.Join(f.root, "link")) },
			call:  func(*fixture) (tools.Tool, toolArgs) { return write("link") },
		},
		{
			name: "edit through symlink", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) { symlink(t, f.victim(), filepath.Join(f.root, "link")) },
			call:  func(*fixture) (tools.Tool, toolArgs) { return edit("link") },
		},
		{
			name: "symlink to dir", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) { symlink(t, f.out, filepath.Join(f.root, "linkdir")) },
			call:  func(*fixture) (tools.Tool, toolArgs) { return write("linkdir/new") },
		},
		{
			name: "relative symlink to dir", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) {
				rel, _ := filepath.Rel(f.root, f.out)
				symlink(t, rel, filepath.Join(f.root, "rel"))
			},
			call: func(*fixture) (tools.Tool, toolArgs) { return edit("rel/victim") },
		},
		{
			name: "dangling symlink", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) {
				symlink(t, filepath.Join(f.out, "new"), filepath.Join(f.root, "dangling"))
			},
			call: func(*fixture) (tools.Tool, toolArgs) { return write("dangling") },
		},
		{
			name: "dangling chain (issue 12, finding 2)", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) {
				mkdir(t, filepath.Join(f.out, "a", "b"))
				symlink(t, filepath.Join(f.out, "a", "b"), filepath.Join(f.root, "sub"))
				symlink(t, "sub/../x", filepath.Join(f.root, "L"))
			},
			call: func(*fixture) (tools.Tool, toolArgs) { return write("L") },
		},
		{
			name: "edit through the dangling chain", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) {
				symlink(t, filepath.Join(f.out, "nowhere", "b"), filepath.Join(f.root, "sub"))
				symlink(t, "sub/../../victim", filepath.Join(f.root, "L"))
			},
			call: func(*fixture) (tools.Tool, toolArgs) { return edit("L") },
		},
		{
			name: "relative link chain climbing out", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) {
				mkdir(t, filepath.Join(f.root, "x", "y"))
				rel, _ := filepath.Rel(filepath.Join(f.root, "x", "y"), f.out)
				symlink(t, rel, filepath.Join(f.root, "x", "y", "up"))
				symlink(t, "x/y/up/victim", filepath.Join(f.root, "c"))
			},
			call: func(*fixture) (tools.Tool, toolArgs) { return edit("c") },
		},
		{
			name: "symlink to a proc magic link", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) {
				symlink(t, "/proc/self/root"+f.victim(), filepath.Join(f.root, "magic"))
			},
			call: func(*fixture) (tools.Tool, toolArgs) { return edit("magic") },
		},
		{
			name: "planted hardlink, write", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) {
				if err := os.Link(f.victim(), filepath.Join(f.root, "hl")); err != nil {
					t.Fatal(err)
				}
			},
			call: func(*fixture) (tools.Tool, toolArgs) { return write("hl") },
		},
		{
			name: "planted hardlink", mode: WorkspaceWrite,
			setup: func(t *testing.T, f *fixture) {
				if err := os.Link(f.victim(), filepath.Join(f.root, "hl")); err != nil {
					t.Fatal(err)
				}
			},
			call: func(*fixture) (tools.Tool, toolArgs) { return edit("hl") },
		},
		{
			name: "proc self root", mode: WorkspaceWrite,
			call: func(f *fixture) (tools.Tool, toolArgs) { return write("/proc/self/root" + f.victim()) },
		},
		{
			name: "temp dirs' parent", mode: WorkspaceWrite,
			call: func(f *fixture) (tools.Tool, toolArgs) { return write(filepath.Join(f.tempRoot, "escaped")) },
		},
		{
			name: "read-only inside", mode: ReadOnly,
			call: func(*fixture) (tools.Tool, toolArgs) { return write("inside.txt") },
		},
		{
			name: "read-only edit inside", mode: ReadOnly,
			setup: func(t *testing.T, f *fixture) { writeFile(t, f.root, "own.txt", "original\n") },
			call:  func(*fixture) (tools.Tool, toolArgs) { return edit("own.txt") },
		},
		{
			name: "read-only temp dir", mode: ReadOnly,
			call: func(f *fixture) (tools.Tool, toolArgs) { return write(filepath.Join(f.tmp(), "t.txt")) },
		},
		{
			name: "unknown mode", mode: "yolo",
			call: func(*fixture) (tools.Tool, toolArgs) { return write("inside.txt") },
		},
		{
			name: "danger outside", mode: DangerFullAccess, allow: true,
			call: func(f *fixture) (tools.Tool, toolArgs) { return write(f.victim()) },
			check: func(t *testing.T, f *fixture) {
				if b, _ := os.ReadFile(f.victim()); string(b) != "pwn\n" {
					t.Errorf("victim %q, want the unconfined write", b)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			tool, args := tc.call(f)
			before := f.outside(t, ReadOnly) // the workspace too
			res := toolCall(t, f, tc.mode, tool, args(f))
			if tc.allow {
				if res.IsError {
					t.Fatalf("denied: %s", res.Text)
				}
				tc.check(t, f)
				return
			}
			if !res.IsError || !strings.HasPrefix(res.Text, Marker(tc.mode)+" ") {
				t.Errorf("result %+v; want an error starting with %q", res, Marker(tc.mode))
			}
			if d := diffSnapshots(before, f.outside(t, ReadOnly)); len(d) > 0 {
				t.Errorf("ESCAPE through %s:\n%s", tool.Name(), strings.Join(d, "\n"))
			}
			checkVictim(t, f)
		})
	}
}

func wantFile(name, content string) func(t *testing.T, f *fixture) {
	return func(t *testing.T, f *fixture) {
		t.Helper()
		if b, err := os.ReadFile(filepath.Join(f.root, name)); err != nil || string(b) != content {
			t.Errorf("%s: %q, %v; want %q", name, b, err, content)
		}
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestGuardWriteRoots calls the guard directly. It judges the path by
// name only (the tools resolve it beneath the roots it returns), so a path
// through a link is given the roots, and everything else is refused with
// the marker, naming the path.
func TestGuardWriteRoots(t *testing.T) {
	f := newFixture(t)
	symlink(t, f.out, filepath.Join(f.root, "linkdir"))
	tmp := f.tmp()
	ws := []string{f.root, tmp}
	cases := []struct {
		mode       Mode
		path       string
		roots      []string // nil: refused (unless unconfined)
		unconfined bool
		want       string // substring of the refusal
	}{
		{mode: WorkspaceWrite, path: filepath.Join(f.root, "a", "b"), roots: ws},
		{mode: WorkspaceWrite, path: f.root, roots: ws},
		{mode: WorkspaceWrite, path: "relative/inside", roots: ws},
		{mode: WorkspaceWrite, path: filepath.Join(f.root, "linkdir", "victim"), roots: ws},
		{mode: WorkspaceWrite, path: filepath.Join(tmp, "x"), roots: ws},
		{mode: WorkspaceWrite, path: f.victim(), want: "is outside the writable roots " + f.root + " and " + tmp},
		{mode: WorkspaceWrite, path: f.root + "/a/../../" + filepath.Base(f.out) + "/victim", want: "is outside the writable roots"},
		{mode: WorkspaceWrite, path: "../escape", want: "is outside the writable roots"},
		{mode: WorkspaceWrite, path: f.root + "-sibling/x", want: "is outside the writable roots"},
		{mode: WorkspaceWrite, path: "/proc/self/root" + f.victim(), want: "is outside the writable roots"},
		{mode: ReadOnly, path: filepath.Join(f.root, "x"), want: "this mode permits no writes"},
		{mode: "yolo", path: filepath.Join(f.root, "x"), want: "unknown sandbox mode"},
		{mode: DangerFullAccess, path: f.victim(), unconfined: true},
	}
	for _, tc := range cases {
		g, _ := f.sb.Hooks(tc.mode, f.root)
		roots, err := g.WriteRoots(tc.path)
		switch {
		case tc.unconfined:
			if roots != nil || err != nil {
				t.Errorf("%s: WriteRoots(%q) = %q, %v; want unconfined", tc.mode, tc.path, roots, err)
			}
		case tc.roots != nil:
			if err != nil || strings.Join(roots, "|") != strings.Join(tc.roots, "|") {
				t.Errorf("%s: WriteRoots(%q) = %q, %v; want %q", tc.mode, tc.path, roots, err, tc.roots)
			}
		default:
			if err == nil || roots != nil {
				t.Errorf("%s: WriteRoots(%q) = %q, %v; want a refusal", tc.mode, tc.path, roots, err)
				continue
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, Marker(tc.mode)+" ") || !strings.Contains(msg, tc.path) || !strings.Contains(msg, tc.want) {
				t.Errorf("%s: WriteRoots(%q) = %q; want the marker first, the path and %q", tc.mode, tc.path, msg, tc.want)
			}
		}
	}
}

// TestGuardRootThroughSymlink: a session root named through a symbolic
// link accepts paths named by its real location, and the tools write them.
func TestGuardRootThroughSymlink(t *testing.T) {
	f := newFixture(t)
	link := filepath.Join(f.tempRoot, "rootlink")
	symlink(t, f.root, link)
	g, _ := f.sb.Hooks(WorkspaceWrite, link)
	for _, p := range []string{filepath.Join(f.root, "real.txt"), filepath.Join(link, "named.txt")} {
		if _, err := g.WriteRoots(p); err != nil {
			t.Errorf("WriteRoots(%q): %v", p, err)
		}
		env := &tools.Env{Cwd: link, Guard: g}
		res, err := tools.Write{}.Run(context.Background(), env, json.RawMessage(`{"file_path":`+strconv.Quote(p)+`,"content":"ok"}`))
		if err != nil || res.IsError {
			t.Errorf("write %s: %+v, %v", p, res, err)
		}
	}
	wantFile("real.txt", "ok")(t, f)
	wantFile("named.txt", "ok")(t, f)
}

// TestGuardRefuse: refusals the tools find are marked like every denial.
func TestGuardRefuse(t *testing.T) {
	f := newFixture(t)
	g, _ := f.sb.Hooks(WorkspaceWrite, f.root)
	r, ok := g.(tools.Refuser)
	if !ok {
		t.Fatal("the guard does not word the tools' refusals")
	}
	err := r.Refuse("/w/L", "a reason")
	if want := Marker(WorkspaceWrite) + " write to /w/L refused: a reason"; err == nil || err.Error() != want {
		t.Errorf("Refuse = %v, want %q", err, want)
	}
}

// TestGuardRenameRace flips the symbolic link d between a directory inside
// the root and one outside (each flip an atomic rename of a fresh link over
// d) while write and edit run on d/victim through the guard's Env: the
// victim outside never changes.
func TestGuardRenameRace(t *testing.T) {
	f := newFixture(t)
	mkdir(t, filepath.Join(f.root, "real"))
	writeFile(t, filepath.Join(f.root, "real"), "victim", "original inside\n")
	symlink(t, "real", filepath.Join(f.root, "d"))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		d, tmp := filepath.Join(f.root, "d"), filepath.Join(f.root, "d.new")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			target := "real"
			if i%2 == 0 {
				target = f.out
			}
			if err := os.Symlink(target, tmp); err != nil {
				t.Errorf("symlink: %v", err)
				return
			}
			if err := os.Rename(tmp, d); err != nil {
				t.Errorf("rename: %v", err)
				return
			}
		}
	})
	for i := range 200 {
		if i%2 == 0 {
			toolCall(t, f, WorkspaceWrite, tools.Write{}, map[string]any{"file_path": "d/victim", "content": "original inside\n"})
		} else {
			toolCall(t, f, WorkspaceWrite, tools.Edit{}, map[string]any{"file_path": "d/victim", "old_string": "original", "new_string": "pwned"})
		}
	}
	close(stop)
	wg.Wait()
	checkVictim(t, f)
}

func TestUnknownModeRefusesCommands(t *testing.T) {
	f := newFixture(t)
	_, run := f.sb.Hooks("yolo", f.root)
	if run == nil {
		t.Fatal("no CommandFunc for an unknown mode; nil would run bash unconfined")
	}
	cmd, err := run(context.Background(), "true", f.root)
	if err == nil || cmd != nil || !strings.HasPrefix(err.Error(), Marker("yolo")) {
		t.Errorf("CommandFunc = %v, %v; want a marked error and no command", cmd, err)
	}
}

func TestCommandFunc(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		mode Mode
		want []string
	}{
		{WorkspaceWrite, []string{f.sb.exe, "sandbox-exec", "--mode", string(WorkspaceWrite), "--root", f.root, "--liveness-fd", "3", "--tmp", f.tmp(), "--", "bash", "-c", "echo hi"}},
		{ReadOnly, []string{f.sb.exe, "sandbox-exec", "--mode", string(ReadOnly), "--root", f.root, "--liveness-fd", "3", "--", "bash", "-c", "echo hi"}},
	} {
		_, run := f.sb.Hooks(tc.mode, f.root+"/")
		cmd, err := run(context.Background(), "echo hi", filepath.Join(f.root, "sub"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(cmd.Args, "\x00") != strings.Join(tc.want, "\x00") || cmd.Path != f.sb.exe {
			t.Errorf("%s: args %q, want %q", tc.mode, cmd.Args, tc.want)
		}
		if cmd.Dir != filepath.Join(f.root, "sub") {
			t.Errorf("%s: Dir %q", tc.mode, cmd.Dir)
		}
	}
}
