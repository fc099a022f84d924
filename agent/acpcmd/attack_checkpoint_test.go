package acpcmd_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
)

// storeUsage is what the checkpoint stores under dir take on disk: the
// bytes of the blocks their files allocate (not their apparent size: a
// store of many tiny loose objects is small by size and large on disk) and
// how many files they hold.
func storeUsage(t *testing.T, dir string) (disk int64, files int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			disk += st.Blocks * 512
		}
		if fi.Mode().IsRegular() {
			files++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return disk, files
}

// TestAttackCheckpointHundredThousandFiles: the workspace holds 100,000
// files under REEL_SOAK=1 (about 3 minutes of git on this kind of machine),
// 10,000 otherwise — still past the 4,096 files above which a capture
// packs, so a store of loose objects fails it either way (a vendored
// tree, generated code, or a model that fanned one out)
// and a turn changes one of them and adds another. The turn's checkpoint
// either completes or is skipped with a note — never an unbounded store:
// the store stays within 64 MiB on disk and a few hundred files (git
// writes one loose object per file, a 4 KiB block each, unless told to
// pack them). When it completes, /undo restores both files.
func TestAttackCheckpointHundredThousandFiles(t *testing.T) {
	t.Parallel()
	n := 10000
	if os.Getenv("REEL_SOAK") == "1" {
		n = 100000
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	for i := range n {
		d := filepath.Join(ws, fmt.Sprintf("d%03d", i/1000))
		if i%1000 == 0 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.txt", i)), fmt.Appendf(nil, "file %d\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, sid := rwStart(t, dir, ws, "workspace-write", []standin.Response{
		{ToolCalls: []standin.ToolCall{awToolCall("edit", "bash", map[string]any{"command": "echo changed > d000/f0.txt && echo new > new.txt", "description": "edit"})}},
		{Text: "edited"},
	})
	rwPrompt(t, p, sid, "Change one file and add one.")
	recs := rwCheckpoints(t, filepath.Join(dir, "state"))
	if len(recs) == 0 {
		t.Fatal("no workspace/checkpoint record for the turn")
	}
	first := recs[0]
	switch first.Kind {
	case sessionlog.CheckpointCapture:
		if first.Files != n || first.Tree == "" {
			t.Errorf("the turn's checkpoint holds %d files (tree %q), want %d", first.Files, first.Tree, n)
		}
	case sessionlog.CheckpointSkipped:
		if !strings.Contains(first.Note, "files") {
			t.Errorf("the skipped checkpoint's note %q does not say why", first.Note)
		}
	default:
		t.Fatalf("the turn's first checkpoint record is %+v", first)
	}
	disk, files := storeUsage(t, filepath.Join(dir, "checkpoints"))
	t.Logf("checkpoint store after the turn: %d bytes on disk, %d files", disk, files)
	if disk > 64<<20 || files > 1000 {
		t.Errorf("the checkpoint store of a %d-file workspace takes %d bytes on disk in %d files; want at most 64 MiB in 1000 files", n, disk, files)
	}
	if first.Kind != sessionlog.CheckpointCapture {
		_ = p.finish()
		return
	}
	undo := rwPrompt(t, p, sid, "/undo")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "d000", "f0.txt")); string(b) != "file 0\n" {
		t.Errorf("d000/f0.txt holds %q after /undo, want %q (%q)", b, "file 0\n", undo)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
		t.Errorf("new.txt is still there after /undo (%q)", undo)
	}
}

// TestAttackCheckpointOutsideWorkspace: in danger-full-access the model
// changes a file inside the workspace and, with bash and with the write
// tool, files outside it (one changed, one created). /undo restores the file inside and touches
// nothing outside (checkpoints cover the workspace only), and its report
// says so: it names the file the write tool changed outside as not
// restored and says commands that ran with full access may have changed
// files outside that are not restored. The dry run says the same.
func TestAttackCheckpointOutsideWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws, out := filepath.Join(dir, "ws"), filepath.Join(dir, "out")
	rwFiles(t, ws, map[string]string{"a.txt": "a1"})
	rwFiles(t, out, map[string]string{"bashed.txt": "b1"}) // written.txt is new: the write tool creates it
	written := filepath.Join(out, "written.txt")
	p, sid := rwStart(t, dir, ws, "danger-full-access", []standin.Response{
		{ToolCalls: []standin.ToolCall{
			awToolCall("inside", "bash", map[string]any{"command": "echo a2 > a.txt && echo b2 > " + filepath.Join(out, "bashed.txt"), "description": "change"}),
			awToolCall("outside", "write", map[string]any{"file_path": written, "content": "w2\n"}),
		}},
		{Text: "changed"},
	})
	rwPrompt(t, p, sid, "Change files inside and outside.")
	if b, _ := os.ReadFile(written); string(b) != "w2\n" {
		t.Fatalf("the write tool did not change %s: %q", written, b)
	}
	dry := rwPrompt(t, p, sid, "/rewind 1 dry-run")
	undo := rwPrompt(t, p, sid, "/undo")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "a1" {
		t.Errorf("a.txt holds %q after /undo, want a1 (%q)", b, undo)
	}
	for name, want := range map[string]string{"bashed.txt": "b2\n", "written.txt": "w2\n"} {
		if b, _ := os.ReadFile(filepath.Join(out, name)); string(b) != want {
			t.Errorf("outside the workspace, %s holds %q after /undo, want %q (left as the turn made it)", name, b, want)
		}
	}
	for what, text := range map[string]string{"/undo": undo, "/rewind 1 dry-run": dry} {
		if !strings.Contains(text, "Not restored (outside the workspace): "+written) {
			t.Errorf("%s does not name %s as not restored: %q", what, written, text)
		}
		if !strings.Contains(text, "full access") {
			t.Errorf("%s does not say commands with full access may have changed files outside: %q", what, text)
		}
	}
}
