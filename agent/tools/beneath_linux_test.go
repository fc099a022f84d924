package tools

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// resolveModes are the resolution modes every confined test runs in:
// openat2 (what Run uses) and the component walk used where the kernel
// lacks openat2.
func resolveModes() []struct {
	name string
	how  resolveMode
} {
	return []struct {
		name string
		how  resolveMode
	}{{"openat2", resolveAuto}, {"walk", resolveWalk}}
}

const jailVictim = "original secret\n"

// jail is a writable root and a directory outside it holding a victim.
type jail struct {
	root, out string
}

func newJail(t *testing.T) *jail {
	t.Helper()
	j := &jail{root: realTempDir(t), out: realTempDir(t)}
	writeFile(t, j.out, "victim", jailVictim)
	writeFile(t, j.out, "a/keep", "kept\n")
	return j
}

func (j *jail) victim() string { return filepath.Join(j.out, "victim") }

// env returns an Env rooted at j.root whose Guard confines writes to it.
func (j *jail) env(t *testing.T) *Env {
	return &Env{Cwd: j.root, SpillDir: t.TempDir(), Guard: GuardFunc(func(string) ([]string, error) { return []string{j.root}, nil })}
}

// treeSnapshot lists every name under dir with its type, and content for
// regular files and targets for links.
func treeSnapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		line := p + " " + d.Type().String()
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + target
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func mkLink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// confinedCall runs write (content "pwn\n") or edit ("original" -> "pwned") on
// path with the resolution mode how.
func confinedCall(t *testing.T, env *Env, tool, path string, how resolveMode) Result {
	t.Helper()
	var res Result
	var err error
	switch tool {
	case "write":
		res, err = Write{}.run(context.Background(), env, mustJSON(t, map[string]any{"file_path": path, "content": "pwn\n"}), how)
	case "edit":
		res, err = Edit{}.run(context.Background(), env, mustJSON(t, map[string]any{"file_path": path, "old_string": "original", "new_string": "pwned"}), how)
	default:
		t.Fatalf("unknown tool %s", tool)
	}
	if err != nil {
		t.Fatalf("%s %s: %v", tool, path, err)
	}
	return res
}

// TestConfinedWriteTricks attacks write and edit with every path trick, in
// both resolution modes: each must fail with an error result naming the
// path and leave the outside unchanged.
func TestConfinedWriteTricks(t *testing.T) {
	rel := func(j *jail, p string) string {
		r, err := filepath.Rel(j.root, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, j *jail)
		path  func(j *jail) string // relative to the root, or absolute
		tools []string
		want  string // substring of the error text
	}{
		{
			name: "dangling chain (finding 2)",
			setup: func(t *testing.T, j *jail) {
				writeFile(t, j.out, "a/b/keep", "")
				mkLink(t, filepath.Join(j.out, "a", "b"), filepath.Join(j.root, "sub"))
				mkLink(t, "sub/../x", filepath.Join(j.root, "L"))
			},
			path:  func(*jail) string { return "L" },
			tools: []string{"write", "edit"},
			want:  "leads outside the writable root",
		},
		{
			name: "relative dangling chain",
			setup: func(t *testing.T, j *jail) {
				writeFile(t, j.out, "a/b/keep", "")
				mkLink(t, rel(j, filepath.Join(j.out, "a", "b")), filepath.Join(j.root, "sub"))
				mkLink(t, "sub/../x", filepath.Join(j.root, "L"))
			},
			path:  func(*jail) string { return "L" },
			tools: []string{"write", "edit"},
			want:  "leads outside the writable root",
		},
		{
			name:  "dotdot",
			path:  func(j *jail) string { return rel(j, j.victim()) },
			tools: []string{"write", "edit"},
			want:  "beneath none of the writable roots",
		},
		{
			name:  "dotdot through a subdirectory",
			setup: func(t *testing.T, j *jail) { writeFile(t, j.root, "a/f", "") },
			path:  func(j *jail) string { return "a/../" + rel(j, j.victim()) },
			tools: []string{"write", "edit"},
			want:  "beneath none of the writable roots",
		},
		{
			name:  "absolute path outside",
			path:  func(j *jail) string { return j.victim() },
			tools: []string{"write", "edit"},
			want:  "beneath none of the writable roots",
		},
		{
			name:  "absolute symlink to the victim",
			setup: func(t *testing.T, j *jail) { mkLink(t, j.victim(), filepath.Join(j.root, "link")) },
			path:  func(*jail) string { return "link" },
			tools: []string{"write", "edit"},
			want:  "leads outside the writable root",
		},
		{
			name:  "relative symlink to the victim",
			setup: func(t *testing.T, j *jail) { mkLink(t, rel(j, j.victim()), filepath.Join(j.root, "link")) },
			path:  func(*jail) string { return "link" },
			tools: []string{"write", "edit"},
			want:  "leads outside the writable root",
		},
		{
			name:  "absolute symlink to a directory",
			setup: func(t *testing.T, j *jail) { mkLink(t, j.out, filepath.Join(j.root, "d")) },
			path:  func(*jail) string { return "d/victim" },
			tools: []string{"write", "edit"},
			want:  "leads outside the writable root",
		},
		{
			name:  "new file through a symlinked directory",
			setup: func(t *testing.T, j *jail) { mkLink(t, j.out, filepath.Join(j.root, "d")) },
			path:  func(*jail) string { return "d/new/deeper/file" },
			tools: []string{"write"},
			want:  "leads outside the writable root",
		},
		{
			name:  "relative symlink to a directory, deep",
			setup: func(t *testing.T, j *jail) { mkLink(t, "../../"+rel(j, j.out), filepath.Join(j.root, "x", "y", "d")) },
			path:  func(*jail) string { return "x/y/d/victim" },
			tools: []string{"write", "edit"},
			want:  "leads outside the writable root",
		},
		{
			name: "chain of links",
			setup: func(t *testing.T, j *jail) {
				mkLink(t, j.out, filepath.Join(j.root, "d"))
				mkLink(t, "d", filepath.Join(j.root, "c1"))
				mkLink(t, "c1/victim", filepath.Join(j.root, "c2"))
			},
			path:  func(*jail) string { return "c2" },
			tools: []string{"write", "edit"},
			want:  "leads outside the writable root",
		},
		{
			name: "dangling absolute symlink",
			setup: func(t *testing.T, j *jail) {
				mkLink(t, filepath.Join(j.out, "new"), filepath.Join(j.root, "dangling"))
			},
			path:  func(*jail) string { return "dangling" },
			tools: []string{"write", "edit"},
			want:  "leads outside the writable root",
		},
		{
			name:  "symlink to /proc/self/root",
			setup: func(t *testing.T, j *jail) { mkLink(t, "/proc/self/root", filepath.Join(j.root, "pr")) },
			path:  func(j *jail) string { return "pr" + j.victim() },
			tools: []string{"write", "edit"},
			want:  "leads outside the writable root",
		},
		{
			name: "hard link to the victim",
			setup: func(t *testing.T, j *jail) {
				if err := os.Link(j.victim(), filepath.Join(j.root, "hl")); err != nil {
					t.Fatal(err)
				}
			},
			path:  func(*jail) string { return "hl" },
			tools: []string{"write", "edit"},
			want:  "has 2 hard links",
		},
		{
			name: "symlink loop",
			setup: func(t *testing.T, j *jail) {
				mkLink(t, "b", filepath.Join(j.root, "a"))
				mkLink(t, "a", filepath.Join(j.root, "b"))
			},
			path:  func(*jail) string { return "a/x" },
			tools: []string{"write", "edit"},
			want:  "too many levels of symbolic links",
		},
		{
			name: "41 links",
			setup: func(t *testing.T, j *jail) {
				writeFile(t, j.root, "l41", "original")
				for i := 40; i >= 0; i-- {
					mkLink(t, fmt.Sprintf("l%d", i+1), filepath.Join(j.root, fmt.Sprintf("l%d", i)))
				}
			},
			path:  func(*jail) string { return "l0" },
			tools: []string{"write", "edit"},
			want:  "too many levels of symbolic links",
		},
	}
	for _, m := range resolveModes() {
		for _, tc := range tests {
			for _, tool := range tc.tools {
				t.Run(m.name+"/"+tc.name+"/"+tool, func(t *testing.T) {
					j := newJail(t)
					if tc.setup != nil {
						tc.setup(t, j)
					}
					before := treeSnapshot(t, j.out)
					env := j.env(t)
					res := confinedCall(t, env, tool, tc.path(j), m.how)
					p := env.abs(tc.path(j))
					if !res.IsError || !strings.Contains(res.Text, p) || !strings.Contains(res.Text, tc.want) {
						t.Errorf("result %+v; want an error naming %s and saying %q", res, p, tc.want)
					}
					if res.Diff != nil {
						t.Errorf("refused call reports a diff: %+v", res.Diff)
					}
					if after := treeSnapshot(t, j.out); after != before {
						t.Errorf("ESCAPE: the outside changed\nbefore:\n%s\nafter:\n%s", before, after)
					}
				})
			}
		}
	}
}

// TestConfinedMagicLinks uses /proc/self itself as the root, so that its
// magic links (root, cwd, fd/N) are reached without leaving it: none may
// be followed.
func TestConfinedMagicLinks(t *testing.T) {
	for _, m := range resolveModes() {
		t.Run(m.name, func(t *testing.T) {
			j := newJail(t)
			f, err := os.OpenFile(j.victim(), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			t.Chdir(j.out) // for /proc/self/cwd
			env := &Env{Cwd: j.root, SpillDir: t.TempDir(), Guard: GuardFunc(func(string) ([]string, error) { return []string{"/proc/self"}, nil })}
			before := treeSnapshot(t, j.out)
			for _, p := range []string{
				fmt.Sprintf("/proc/self/fd/%d", f.Fd()),
				"/proc/self/root" + j.victim(),
				"/proc/self/cwd/victim",
			} {
				for _, tool := range []string{"write", "edit"} {
					res := confinedCall(t, env, tool, p, m.how)
					if !res.IsError || !strings.Contains(res.Text, p) {
						t.Errorf("%s %s: %+v; want an error naming the path", tool, p, res)
					}
				}
			}
			if after := treeSnapshot(t, j.out); after != before {
				t.Errorf("ESCAPE through a magic link\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// TestConfinedNonRegular: FIFOs, sockets, devices, directories and huge
// files are refused without blocking and left as they are.
func TestConfinedNonRegular(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) string // returns the name
		want  string
	}{
		{"fifo", func(t *testing.T, root string) string {
			if err := unix.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
			return "fifo"
		}, "not a regular file (a FIFO)"},
		{"socket", func(t *testing.T, root string) string {
			ln, err := net.Listen("unix", filepath.Join(root, "sock"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			return "sock"
		}, "not a regular file"},
		{"device", func(t *testing.T, root string) string {
			if err := unix.Mknod(filepath.Join(root, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
				t.Skipf("cannot make a device node: %v", err)
			}
			return "null"
		}, "not a regular file (a character device)"},
		{"directory", func(t *testing.T, root string) string {
			writeFile(t, root, "d/keep", "")
			return "d"
		}, "is a directory"},
		{"too large", func(t *testing.T, root string) string {
			p := writeFile(t, root, "big", "original")
			if err := os.Truncate(p, maxFileBytes+1); err != nil {
				t.Fatal(err)
			}
			return "big"
		}, "too large"},
	}
	for _, m := range resolveModes() {
		for _, tc := range tests {
			for _, tool := range []string{"write", "edit"} {
				t.Run(m.name+"/"+tc.name+"/"+tool, func(t *testing.T) {
					j := newJail(t)
					name := tc.setup(t, j.root)
					before := treeSnapshot(t, j.root)
					done := make(chan Result, 1)
					go func() { done <- confinedCall(t, j.env(t), tool, name, m.how) }()
					var res Result
					select {
					case res = <-done:
					case <-time.After(10 * time.Second):
						t.Fatalf("%s %s blocked", tool, name)
					}
					p := filepath.Join(j.root, name)
					if !res.IsError || !strings.Contains(res.Text, p) || !strings.Contains(res.Text, tc.want) {
						t.Errorf("result %+v; want an error naming %s and saying %q", res, p, tc.want)
					}
					if after := treeSnapshot(t, j.root); after != before {
						t.Errorf("the root changed\nbefore:\n%s\nafter:\n%s", before, after)
					}
				})
			}
		}
	}
}

// TestConfinedWriteWorks: the legitimate cases still work in both modes.
func TestConfinedWriteWorks(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(t *testing.T, j *jail)
		tool   string
		path   func(j *jail) string
		file   string  // the file that must hold the result, relative to the root
		want   string  // its content
		old    *string // the diff's old text
		absent bool    // the diff says the file is new
	}{
		{name: "new file", tool: "write", path: func(*jail) string { return "a.txt" }, file: "a.txt", want: "pwn\n", absent: true},
		{name: "nested new dirs", tool: "write", path: func(*jail) string { return "x/y/z/a.txt" }, file: "x/y/z/a.txt", want: "pwn\n", absent: true},
		{name: "absolute inside", tool: "write", path: func(j *jail) string { return filepath.Join(j.root, "abs.txt") }, file: "abs.txt", want: "pwn\n", absent: true},
		{
			name: "overwrite", tool: "write", setup: func(t *testing.T, j *jail) { writeFile(t, j.root, "o.txt", "before longer text") },
			path: func(*jail) string { return "o.txt" }, file: "o.txt", want: "pwn\n", old: ptr("before longer text"),
		},
		{
			name: "edit", tool: "edit", setup: func(t *testing.T, j *jail) { writeFile(t, j.root, "e.txt", "the original one") },
			path: func(*jail) string { return "e.txt" }, file: "e.txt", want: "the pwned one", old: ptr("the original one"),
		},
		{
			name: "relative symlink to a file inside", tool: "edit",
			setup: func(t *testing.T, j *jail) {
				writeFile(t, j.root, "real/f", "original")
				mkLink(t, "../real/f", filepath.Join(j.root, "links", "f"))
			},
			path: func(*jail) string { return "links/f" }, file: "real/f", want: "pwned", old: ptr("original"),
		},
		{
			name: "relative symlink to a directory inside, new dirs beneath", tool: "write",
			setup: func(t *testing.T, j *jail) {
				writeFile(t, j.root, "real/keep", "")
				mkLink(t, "../real", filepath.Join(j.root, "sub", "link"))
			},
			path: func(*jail) string { return "sub/link/n1/n2/f" }, file: "real/n1/n2/f", want: "pwn\n", absent: true,
		},
		{
			name: "dangling relative symlink inside", tool: "write",
			setup: func(t *testing.T, j *jail) { mkLink(t, "target.txt", filepath.Join(j.root, "dl")) },
			path:  func(*jail) string { return "dl" }, file: "target.txt", want: "pwn\n", absent: true,
		},
		{
			name: "dotdot staying inside", tool: "write",
			setup: func(t *testing.T, j *jail) { writeFile(t, j.root, "a/keep", "") },
			path:  func(*jail) string { return "a/../b.txt" }, file: "b.txt", want: "pwn\n", absent: true,
		},
		{
			name: "chain ending inside", tool: "write",
			setup: func(t *testing.T, j *jail) {
				writeFile(t, j.root, "d1/d2/keep", "")
				mkLink(t, "d1/d2", filepath.Join(j.root, "s"))
				mkLink(t, "s/../t.txt", filepath.Join(j.root, "L"))
			},
			path: func(*jail) string { return "L" }, file: "d1/t.txt", want: "pwn\n", absent: true,
		},
	}
	for _, m := range resolveModes() {
		for _, tc := range tests {
			t.Run(m.name+"/"+tc.name, func(t *testing.T) {
				j := newJail(t)
				if tc.setup != nil {
					tc.setup(t, j)
				}
				before := treeSnapshot(t, j.out)
				env := j.env(t)
				res := confinedCall(t, env, tc.tool, tc.path(j), m.how)
				if res.IsError {
					t.Fatalf("refused: %s", res.Text)
				}
				if got := readFile(t, filepath.Join(j.root, tc.file)); got != tc.want {
					t.Errorf("%s holds %q, want %q", tc.file, got, tc.want)
				}
				if res.Diff == nil || res.Diff.NewText != tc.want || res.Diff.Path != env.abs(tc.path(j)) {
					t.Fatalf("diff %+v", res.Diff)
				}
				switch {
				case tc.absent && res.Diff.OldText != nil:
					t.Errorf("old text %q, want none (new file)", *res.Diff.OldText)
				case tc.old != nil && (res.Diff.OldText == nil || *res.Diff.OldText != *tc.old):
					t.Errorf("old text %v, want %q", res.Diff.OldText, *tc.old)
				}
				if tc.absent && !strings.HasSuffix(res.Text, "(new file)") {
					t.Errorf("text %q, want it to say new file", res.Text)
				}
				if after := treeSnapshot(t, j.out); after != before {
					t.Errorf("the outside changed")
				}
			})
		}
	}
}

// TestConfinedRootForms: a root given through a symbolic link matches a
// path named by its real location, and the other way round.
func TestConfinedRootForms(t *testing.T) {
	real := realTempDir(t)
	link := filepath.Join(realTempDir(t), "rootlink")
	mkLink(t, real, link)
	for _, tc := range []struct{ root, path string }{
		{link, filepath.Join(real, "a.txt")},
		{link, filepath.Join(link, "b.txt")},
		{real, filepath.Join(real, "c.txt")},
	} {
		env := &Env{Cwd: real, Guard: GuardFunc(func(string) ([]string, error) { return []string{tc.root}, nil })}
		res := confinedCall(t, env, "write", tc.path, resolveAuto)
		if res.IsError {
			t.Errorf("root %s, path %s: %s", tc.root, tc.path, res.Text)
		}
	}
	for _, n := range []string{"a.txt", "b.txt", "c.txt"} {
		if readFile(t, filepath.Join(real, n)) != "pwn\n" {
			t.Errorf("%s not written", n)
		}
	}
}

// wordingGuard is a Guard that confines to root and words refusals itself.
type wordingGuard struct{ root string }

func (r wordingGuard) WriteRoots(string) ([]string, error) { return []string{r.root}, nil }
func (r wordingGuard) Refuse(path, reason string) error {
	return fmt.Errorf("[denied] %s: %s", path, reason)
}

func TestConfinedRefuserWords(t *testing.T) {
	j := newJail(t)
	mkLink(t, j.victim(), filepath.Join(j.root, "link"))
	env := &Env{Cwd: j.root, Guard: wordingGuard{j.root}}
	res := confinedCall(t, env, "write", "link", resolveAuto)
	want := "[denied] " + filepath.Join(j.root, "link") + `: a symbolic link or ".." in the path leads outside the writable root ` + j.root
	if !res.IsError || res.Text != want {
		t.Errorf("text %q, want %q", res.Text, want)
	}
	res = confinedCall(t, env, "write", j.victim(), resolveAuto)
	want = "[denied] " + j.victim() + ": it is beneath none of the writable roots " + j.root
	if !res.IsError || res.Text != want {
		t.Errorf("text %q, want %q", res.Text, want)
	}
}

// TestConfinedSkipsFS: a confined write goes to disk through the
// descriptor, never through the editor's FileSystem; an unconfined one (no
// roots) still uses it.
func TestConfinedSkipsFS(t *testing.T) {
	j := newJail(t)
	p := writeFile(t, j.root, "f.txt", "original on disk")
	mfs := newMemFS(map[string]string{p: "original in the buffer"})
	env := j.env(t)
	env.FS = mfs
	if res := confinedCall(t, env, "edit", "f.txt", resolveAuto); res.IsError || *res.Diff.OldText != "original on disk" {
		t.Fatalf("confined edit: %+v", res)
	}
	if res := confinedCall(t, env, "write", "g.txt", resolveAuto); res.IsError {
		t.Fatalf("confined write: %+v", res)
	}
	if len(mfs.reads)+len(mfs.writes) != 0 {
		t.Errorf("confined calls used the FS: reads %v writes %v", mfs.reads, mfs.writes)
	}
	if readFile(t, p) != "pwned on disk" || readFile(t, filepath.Join(j.root, "g.txt")) != "pwn\n" {
		t.Errorf("disk not written")
	}
	env.Guard = GuardFunc(func(string) ([]string, error) { return nil, nil })
	if res := confinedCall(t, env, "edit", "f.txt", resolveAuto); res.IsError || mfs.files[p] != "pwned in the buffer" {
		t.Fatalf("unconfined edit: %+v, fs %v", res, mfs.files)
	}
}

// TestConfinedRenameRace flips d between a directory inside the root and a
// symbolic link to a directory outside, with rename(2) in a tight loop,
// while write and edit run on d/victim.txt: the outside file never changes.
func TestConfinedRenameRace(t *testing.T) {
	const rounds = 300
	for _, m := range resolveModes() {
		for _, link := range []string{"absolute", "relative"} {
			t.Run(m.name+"/"+link, func(t *testing.T) {
				j := newJail(t)
				const outside = "outside A B\n"
				writeFile(t, j.out, "victim.txt", outside)
				writeFile(t, j.root, "d/victim.txt", "A")
				target := filepath.Join(j.out)
				if link == "relative" {
					r, err := filepath.Rel(j.root, j.out)
					if err != nil {
						t.Fatal(err)
					}
					target = r
				}
				d, e := filepath.Join(j.root, "d"), filepath.Join(j.root, "e")
				mkLink(t, target, e)
				stop := make(chan struct{})
				var flips atomic.Int64
				var wg sync.WaitGroup
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, e, unix.RENAME_EXCHANGE); err != nil {
							t.Errorf("rename: %v", err)
							return
						}
						flips.Add(1)
					}
				})
				env := j.env(t)
				var wrote, refused int
				// Under load the flipper may sit in one state for the
				// whole burst; go on (boundedly) until a write has landed
				// inside, so the race is really exercised.
				for i := 0; i < rounds || (wrote == 0 && i < 100*rounds); i++ {
					var res Result
					if i%2 == 0 {
						res = confinedCall(t, env, "write", "d/victim.txt", m.how)
					} else {
						args := map[string]any{"file_path": "d/victim.txt", "old_string": "A", "new_string": "B", "replace_all": true}
						if i%4 == 3 {
							args["old_string"], args["new_string"] = "B", "A"
						}
						var err error
						res, err = Edit{}.run(context.Background(), env, mustJSON(t, args), m.how)
						if err != nil {
							t.Fatal(err)
						}
					}
					if res.IsError {
						refused++
					} else {
						wrote++
					}
				}
				close(stop)
				wg.Wait()
				if b, err := os.ReadFile(filepath.Join(j.out, "victim.txt")); err != nil || string(b) != outside {
					t.Fatalf("ESCAPE: the outside victim holds %q (%v), want %q", b, err, outside)
				}
				t.Logf("%d flips; %d calls wrote inside, %d were refused", flips.Load(), wrote, refused)
				if wrote == 0 {
					t.Errorf("no call wrote inside; the race test did not exercise writes")
				}
			})
		}
	}
}

// TestWalkBeneathMatchesOpenat2 compares the fallback walk with openat2 on
// a tree of links, path by path: both open the same file or both fail.
func TestWalkBeneathMatchesOpenat2(t *testing.T) {
	j := newJail(t)
	writeFile(t, j.root, "d1/d2/f", "f")
	writeFile(t, j.root, "g", "g")
	mkLink(t, "d1/d2", filepath.Join(j.root, "s"))
	mkLink(t, "s/../../g", filepath.Join(j.root, "up"))
	mkLink(t, "../../../g", filepath.Join(j.root, "d1", "d2", "esc"))
	mkLink(t, "/etc", filepath.Join(j.root, "abs"))
	rootfd, err := unix.Open(j.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rootfd)
	for _, p := range []string{"g", "d1/d2/f", "s/f", "s/../g", "up", "d1/d2/esc", "abs/passwd", "..", "d1/..", "d1/../..", "s/../../..", "nope", "g/x", "."} {
		a, aerr := openat2Beneath(rootfd, p, unix.O_RDONLY|unix.O_NONBLOCK, 0)
		w, werr := walkBeneath(rootfd, p, unix.O_RDONLY|unix.O_NONBLOCK, 0)
		if !errors.Is(aerr, werr) && !(aerr == nil && werr == nil) {
			t.Errorf("%s: openat2 %v, walk %v", p, aerr, werr)
		}
		if aerr == nil && werr == nil {
			var sa, sw unix.Stat_t
			_ = unix.Fstat(a, &sa)
			_ = unix.Fstat(w, &sw)
			if sa.Ino != sw.Ino || sa.Dev != sw.Dev {
				t.Errorf("%s: openat2 and walk opened different files", p)
			}
		}
		if a >= 0 {
			unix.Close(a)
		}
		if w >= 0 {
			unix.Close(w)
		}
	}
}
