package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/tools"
)

// toolCall runs the write or edit tool with args in an Env guarded by the
// fixture's sandbox under mode.
func toolCall(t *testing.T, f *fixture, mode string, tool tools.Tool, args map[string]any) tools.Result {
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
		mode  string
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

// TestGuardResolvesDefensively calls the guard directly with paths the
// tools would have resolved, to check it does not rely on that.
func TestGuardResolvesDefensively(t *testing.T) {
	f := newFixture(t)
	symlink(t, f.out, filepath.Join(f.root, "linkdir"))
	symlink(t, filepath.Join(f.root, "loop"), filepath.Join(f.root, "loop"))
	g, _ := f.sb.Hooks(WorkspaceWrite, f.root)
	cases := []struct {
		path  string
		allow bool
	}{
		{filepath.Join(f.root, "linkdir", "victim"), false},
		{filepath.Join(f.root, "linkdir", "new", "deeper"), false},
		{f.root + "/a/../../" + filepath.Base(f.out) + "/victim", false},
		{filepath.Join(f.root, "loop"), false},
		{"relative/inside", true},
		{"../escape", false},
		{f.root, true},
		{f.root + "-sibling/x", false},
		{filepath.Join(f.tmp(), "x"), true},
	}
	for _, tc := range cases {
		err := g.CheckWrite(tc.path)
		if (err == nil) != tc.allow {
			t.Errorf("CheckWrite(%q) = %v, want allowed %v", tc.path, err, tc.allow)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "[sandbox denied: mode workspace-write] ") {
			t.Errorf("CheckWrite(%q) = %q, want the marker first", tc.path, err)
		}
	}
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
		mode string
		want []string
	}{
		{WorkspaceWrite, []string{f.sb.exe, "sandbox-exec", "--mode", WorkspaceWrite, "--root", f.root, "--tmp", f.tmp(), "--", "bash", "-c", "echo hi"}},
		{ReadOnly, []string{f.sb.exe, "sandbox-exec", "--mode", ReadOnly, "--root", f.root, "--", "bash", "-c", "echo hi"}},
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
