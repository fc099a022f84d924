package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// memObservations is a test Observations: a map under a mutex.
type memObservations struct {
	mu sync.Mutex
	m  map[string]Observation
}

func newObservations() *memObservations { return &memObservations{m: map[string]Observation{}} }

func (o *memObservations) Observation(key string) (Observation, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	v, ok := o.m[key]
	return v, ok
}

func (o *memObservations) Observe(key string, v Observation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.m[key] = v
}

// guardStep is one step of a read-before-edit scenario: a tool call (and
// what its result must be) or something done to the disk behind the
// tools' back.
type guardStep struct {
	tool string         // "read", "write", "edit"; "" for do
	args map[string]any // file_path relative to the cwd
	// want is the exact error text (with {P} for the absolute path, {O}
	// for the outside dir), "" for success, or "error" for any error.
	want string
	do   func(t *testing.T, cwd, out string)
}

func call(tool, path string, kv ...any) guardStep {
	args := map[string]any{"file_path": path}
	for i := 0; i+1 < len(kv); i += 2 {
		args[kv[i].(string)] = kv[i+1]
	}
	return guardStep{tool: tool, args: args}
}

func (s guardStep) wants(w string) guardStep { s.want = w; return s }

func do(f func(t *testing.T, cwd, out string)) guardStep { return guardStep{do: f} }

// touch rewrites name in the cwd with content, as another program would,
// making sure its times move.
func touch(name, content string) guardStep {
	return do(func(t *testing.T, cwd, _ string) {
		p := filepath.Join(cwd, name)
		writeFile(t, cwd, name, content)
		later := time.Now().Add(2 * time.Second)
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
	})
}

const (
	notRead   = `edit requires reading "{P}" first — read the file, then retry`
	notFound  = `cannot edit "{P}": not found`
	editStale = `cannot edit "{P}": file changed since it was read — re-read the file, then retry`
	writeGone = `cannot write "{P}": file no longer exists — re-read the file, then retry`
	writeStal = `cannot write "{P}": file changed since it was read — re-read the file, then retry`
	overwrite = `cannot overwrite existing "{P}" without reading it first — read the file, then retry`
)

// TestReadBeforeEdit holds write and edit to the reference agent's
// observation rule, unconfined (danger-full-access) and confined beneath
// a writable root: edit needs the file seen (read, written or edited) in
// this session and refuses one seen absent; write may create a file not
// seen, and may replace an existing one only after seeing it; both refuse
// a file that changed since (another version, gone, or a name that now
// leads to another file), and a refused call changes nothing.
func TestReadBeforeEdit(t *testing.T) {
	cases := []struct {
		name  string
		seed  map[string]string
		steps []guardStep
		// final is the content of f.txt at the end ("" = do not check).
		final string
	}{
		{"edit unread", map[string]string{"f.txt": "one\n"}, []guardStep{
			call("edit", "f.txt", "old_string", "one", "new_string", "two").wants(notRead),
		}, "one\n"},
		{"read then edit", map[string]string{"f.txt": "one\n"}, []guardStep{
			call("read", "f.txt"),
			call("edit", "f.txt", "old_string", "one", "new_string", "two"),
			call("edit", "f.txt", "old_string", "two", "new_string", "three"),
		}, "three\n"},
		{"a window of the file is enough", map[string]string{"f.txt": "one\ntwo\nthree\n"}, []guardStep{
			call("read", "f.txt", "offset", 3, "limit", 1),
			call("edit", "f.txt", "old_string", "one", "new_string", "1"),
		}, "1\ntwo\nthree\n"},
		{"changed on disk since the read", map[string]string{"f.txt": "one\n"}, []guardStep{
			call("read", "f.txt"),
			touch("f.txt", "one\nmore\n"),
			call("edit", "f.txt", "old_string", "one", "new_string", "two").wants(editStale),
			call("read", "f.txt"),
			call("edit", "f.txt", "old_string", "one", "new_string", "two"),
		}, "two\nmore\n"},
		{"replaced by a new file with the same content", map[string]string{"f.txt": "one\n"}, []guardStep{
			call("read", "f.txt"),
			do(func(t *testing.T, cwd, _ string) {
				writeFile(t, cwd, "f.new", "one\n")
				if err := os.Rename(filepath.Join(cwd, "f.new"), filepath.Join(cwd, "f.txt")); err != nil {
					t.Fatal(err)
				}
			}),
			call("edit", "f.txt", "old_string", "one", "new_string", "two").wants(editStale),
			call("write", "f.txt", "content", "two\n").wants(writeStal),
		}, "one\n"},
		{"deleted since the read", map[string]string{"f.txt": "one\n"}, []guardStep{
			call("read", "f.txt"),
			do(func(t *testing.T, cwd, _ string) { _ = os.Remove(filepath.Join(cwd, "f.txt")) }),
			call("edit", "f.txt", "old_string", "one", "new_string", "two").wants(editStale),
		}, ""},
		{"read found nothing", nil, []guardStep{
			call("read", "f.txt").wants("error"),
			call("edit", "f.txt", "old_string", "one", "new_string", "two").wants(notFound),
			call("write", "f.txt", "content", "new\n"),
			call("edit", "f.txt", "old_string", "new", "new_string", "newer"),
		}, "newer\n"},
		{"write creates an unseen file", nil, []guardStep{
			call("write", "f.txt", "content", "fresh\n"),
			call("write", "f.txt", "content", "again\n"),
		}, "again\n"},
		{"write over an unread file", map[string]string{"f.txt": "keep\n"}, []guardStep{
			call("write", "f.txt", "content", "clobbered\n").wants(overwrite),
			call("read", "f.txt"),
			call("write", "f.txt", "content", "replaced\n"),
		}, "replaced\n"},
		{"write after the read found it changed", map[string]string{"f.txt": "one\n"}, []guardStep{
			call("read", "f.txt"),
			touch("f.txt", "theirs\n"),
			call("write", "f.txt", "content", "mine\n").wants(writeStal),
		}, "theirs\n"},
		{"delete and recreate (corpus fs-delete-recreate)", map[string]string{"f.txt": "original\n"}, []guardStep{
			call("read", "f.txt"),
			do(func(t *testing.T, cwd, _ string) { _ = os.Remove(filepath.Join(cwd, "f.txt")) }),
			call("write", "f.txt", "content", "fresh\n").wants(writeGone),
			call("read", "f.txt").wants("error"),
			call("write", "f.txt", "content", "fresh\n"),
		}, "fresh\n"},
		{"another program recreated it after the read found nothing", nil, []guardStep{
			call("read", "f.txt").wants("error"),
			touch("f.txt", "theirs\n"),
			call("write", "f.txt", "content", "mine\n").wants(overwrite),
		}, "theirs\n"},
		{"replaced by a symlink to a file never read", map[string]string{"f.txt": "one\n"}, []guardStep{
			call("read", "f.txt"),
			do(func(t *testing.T, cwd, out string) {
				writeFile(t, out, "secret", "one\n")
				_ = os.Remove(filepath.Join(cwd, "f.txt"))
				if err := os.Symlink(filepath.Join(out, "secret"), filepath.Join(cwd, "f.txt")); err != nil {
					t.Fatal(err)
				}
			}),
			call("edit", "f.txt", "old_string", "one", "new_string", "pwned").wants(notRead),
			call("write", "f.txt", "content", "pwned\n").wants("error"),
			do(func(t *testing.T, _, out string) {
				if got := readFile(t, filepath.Join(out, "secret")); got != "one\n" {
					t.Fatalf("the file outside was changed to %q", got)
				}
			}),
		}, ""},
		{"the file seen through another name", map[string]string{"real.txt": "one\n"}, []guardStep{
			do(func(t *testing.T, cwd, _ string) {
				if err := os.Symlink("real.txt", filepath.Join(cwd, "f.txt")); err != nil {
					t.Fatal(err)
				}
			}),
			call("read", "f.txt"),
			call("edit", "real.txt", "old_string", "one", "new_string", "two"),
		}, "two\n"},
		{"replaced by a FIFO since the read", map[string]string{"f.txt": "one\n"}, []guardStep{
			call("read", "f.txt"),
			do(func(t *testing.T, cwd, _ string) {
				p := filepath.Join(cwd, "f.txt")
				_ = os.Remove(p)
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
			}),
			call("edit", "f.txt", "old_string", "one", "new_string", "two").wants("error"),
			call("write", "f.txt", "content", "two\n").wants("error"),
		}, ""},
		{"a failed edit keeps the observation", map[string]string{"f.txt": "one\n"}, []guardStep{
			call("read", "f.txt"),
			call("edit", "f.txt", "old_string", "absent", "new_string", "x").wants("error"),
			call("edit", "f.txt", "old_string", "one", "new_string", "two"),
		}, "two\n"},
	}
	for _, confined := range []bool{false, true} {
		for _, tc := range cases {
			name := tc.name
			if confined {
				name += " (confined)"
			}
			t.Run(name, func(t *testing.T) {
				env := newEnv(t)
				env.Observed = newObservations()
				out := realTempDir(t)
				if confined {
					env.Guard = GuardFunc(func(string) ([]string, error) { return []string{env.Cwd}, nil })
				}
				for name, content := range tc.seed {
					writeFile(t, env.Cwd, name, content)
				}
				for i, st := range tc.steps {
					if st.do != nil {
						st.do(t, env.Cwd, out)
						continue
					}
					res := runTool(t, env, st.tool, st.args)
					p := filepath.Join(env.Cwd, st.args["file_path"].(string))
					want := strings.NewReplacer("{P}", p, "{O}", out).Replace(st.want)
					switch {
					case st.want == "" && res.IsError:
						t.Fatalf("step %d (%s %v): %q, want success", i, st.tool, st.args, res.Text)
					case st.want == "error" && !res.IsError:
						t.Fatalf("step %d (%s %v): success %q, want an error", i, st.tool, st.args, res.Text)
					case st.want != "" && st.want != "error" && (!res.IsError || res.Text != want):
						t.Fatalf("step %d (%s %v): %q (error=%v), want %q", i, st.tool, st.args, res.Text, res.IsError, want)
					}
				}
				if tc.final != "" {
					if got := readFile(t, filepath.Join(env.Cwd, "f.txt")); got != tc.final {
						t.Errorf("f.txt holds %q, want %q", got, tc.final)
					}
				}
			})
		}
	}
}

// runTool runs one tool call within a bounded time (a FIFO must not hang it).
func runTool(t *testing.T, env *Env, tool string, args map[string]any) Result {
	t.Helper()
	tools := map[string]Tool{"read": Read{}, "write": Write{}, "edit": Edit{}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, _ := json.Marshal(args)
	res, err := tools[tool].Run(ctx, env, raw)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, raw, err)
	}
	return res
}

// TestReadBeforeEditOrder: like the reference, edit's observation check
// comes before the sandbox's refusal, and write's after it.
func TestReadBeforeEditOrder(t *testing.T) {
	env := newEnv(t)
	env.Observed = newObservations()
	denied := errors.New("[sandbox denied: mode read-only] writes are not allowed")
	env.Guard = GuardFunc(func(string) ([]string, error) { return nil, denied })
	p := writeFile(t, env.Cwd, "f.txt", "one\n")
	res := runTool(t, env, "edit", map[string]any{"file_path": "f.txt", "old_string": "one", "new_string": "two"})
	if want := strings.ReplaceAll(notRead, "{P}", p); res.Text != want {
		t.Errorf("edit of an unread file in read-only: %q, want %q", res.Text, want)
	}
	res = runTool(t, env, "write", map[string]any{"file_path": "f.txt", "content": "two"})
	if res.Text != denied.Error() {
		t.Errorf("write of an unread file in read-only: %q, want the sandbox's refusal", res.Text)
	}
	runTool(t, env, "read", map[string]any{"file_path": "f.txt"})
	res = runTool(t, env, "edit", map[string]any{"file_path": "f.txt", "old_string": "one", "new_string": "two"})
	if res.Text != denied.Error() {
		t.Errorf("edit of a read file in read-only: %q, want the sandbox's refusal", res.Text)
	}
}

// TestReadBeforeEditThroughFS: a file the editor knows but the disk does
// not may be edited after a read through Env.FS.
func TestReadBeforeEditThroughFS(t *testing.T) {
	env := newEnv(t)
	env.Observed = newObservations()
	p := filepath.Join(env.Cwd, "buffer.txt")
	env.FS = newMemFS(map[string]string{p: "one\n"})
	if res := runTool(t, env, "edit", map[string]any{"file_path": "buffer.txt", "old_string": "one", "new_string": "two"}); res.Text != strings.ReplaceAll(notRead, "{P}", p) {
		t.Fatalf("edit before the read: %q", res.Text)
	}
	runTool(t, env, "read", map[string]any{"file_path": "buffer.txt"})
	if res := runTool(t, env, "edit", map[string]any{"file_path": "buffer.txt", "old_string": "one", "new_string": "two"}); res.IsError {
		t.Fatalf("edit after the read: %q", res.Text)
	}
}

// TestFileKey: names of one file share a key; a missing file's key is its
// resolved parent and name.
func TestFileKey(t *testing.T) {
	dir := realTempDir(t)
	real := writeFile(t, dir, "real.txt", "x")
	if err := os.Symlink("real.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{real, real},
		{filepath.Join(dir, "link"), real},
		{filepath.Join(dir, "dirlink", "real.txt"), real},
		{filepath.Join(dir, "dirlink", "missing", "deeper.txt"), filepath.Join(dir, "missing", "deeper.txt")},
		{filepath.Join(dir, "dangling"), filepath.Join(dir, "dangling")},
	} {
		if got := fileKey(tc.in); got != tc.want {
			t.Errorf("fileKey(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
