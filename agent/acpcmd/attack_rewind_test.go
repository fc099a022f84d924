package acpcmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/checkpoint"
	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
)

// rwStart starts `reel acp --checkpoints` in mode with a stand-in model
// playing responses, and opens a session (id RW) in ws.
func rwStart(t *testing.T, dir, ws, mode string, responses []standin.Response, extra ...string) (*proc, string) {
	t.Helper()
	url, _ := standinURL(t, &standin.Script{Responses: responses})
	env := append(baseEnv(t), "DEEPSEEK_API_KEY=sk-reel-fake-attack")
	args := append([]string{"acp", "--state-dir", filepath.Join(dir, "state"), "--session-id", "RW", "--checkpoints",
		"--mode", mode, "--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model"}, extra...)
	p := startProc(t, dir, env, args...)
	p.initialize()
	return p, p.newSession(ws)
}

// rwPrompt runs a prompt (allowing everything) and returns the agent's
// text.
func rwPrompt(t *testing.T, p *proc, sid, text string) string {
	t.Helper()
	stop, _, frames := promptAllowing(t, p, sid, text)
	if stop != "end_turn" {
		t.Fatalf("%q: stopReason %q", text, stop)
	}
	return readAttackMessage(frames)
}

// rwFiles writes name → content under dir.
func rwFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rwCheckpoints returns the workspace/checkpoint records of the log.
func rwCheckpoints(t *testing.T, state string) []sessionlog.CheckpointData {
	t.Helper()
	var out []sessionlog.CheckpointData
	for _, e := range logEvents(t, state, "RW") {
		if e.Type == sessionlog.TypeWorkspaceCheckpoint {
			d, err := sessionlog.DecodeData[sessionlog.CheckpointData](&e)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
	}
	return out
}

// TestAttackRewindWritesOnlyInside: the model turns the files of the
// checkpoint into a hard link and a symbolic link to files outside the
// workspace, and a directory into a symbolic link to a directory outside,
// then the user undoes the turn. Through the real binary, in
// danger-full-access (the model may plant anything): the restore
// replaces the links, never writes through them, and creates nothing
// outside; the workspace is back as it was and the log lists the files.
func TestAttackRewindWritesOnlyInside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws, out := filepath.Join(dir, "ws"), filepath.Join(dir, "out")
	rwFiles(t, ws, map[string]string{"notes.txt": "v1", "notes2.txt": "v2", "dir/c.txt": "c"})
	rwFiles(t, out, map[string]string{"victim": "victim", "victim2": "victim2"})
	plant := "rm notes.txt notes2.txt && ln " + out + "/victim notes.txt && ln -s " + out + "/victim2 notes2.txt && rm -rf dir && ln -s " + out + " dir"
	p, sid := rwStart(t, dir, ws, "danger-full-access", []standin.Response{
		{ToolCalls: []standin.ToolCall{awToolCall("plant", "bash", map[string]any{"command": plant, "description": "plant"})}},
		{Text: "planted"},
	})
	rwPrompt(t, p, sid, "Plant the links.")
	if fi, err := os.Lstat(filepath.Join(ws, "dir")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the model's links were not planted: %v", err)
	}
	text := rwPrompt(t, p, sid, "/undo")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for name, want := range map[string]string{"victim": "victim", "victim2": "victim2", "c.txt": "<absent>"} {
		got := "<absent>"
		if b, err := os.ReadFile(filepath.Join(out, name)); err == nil {
			got = string(b)
		}
		if got != want {
			t.Errorf("outside the workspace, %s holds %q after /undo, want %q (the restore wrote outside)", name, got, want)
		}
	}
	for name, want := range map[string]string{"notes.txt": "v1", "notes2.txt": "v2", "dir/c.txt": "c"} {
		p := filepath.Join(ws, name)
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s after /undo: %v, %v; want a regular file (agent said %q)", name, fi, err, text)
			continue
		}
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("%s holds %q after /undo, want %q", name, b, want)
		}
	}
	recs := rwCheckpoints(t, filepath.Join(dir, "state"))
	var restored *sessionlog.CheckpointData
	for i := range recs {
		if recs[i].Kind == sessionlog.CheckpointRestored {
			restored = &recs[i]
		}
	}
	if restored == nil || restored.Note != "" || len(restored.Paths) != 4 {
		t.Errorf("the log's restore record: %+v; want 4 files restored without a note (agent said %q)", restored, text)
	}
}

// TestAttackRewindHugeSparseFile: the model makes a 1 TiB sparse file and
// then works on: the next turn's checkpoint leaves the file out unread
// (the store stays small), /checkpoints names it, and /undo of that turn
// neither reads nor removes it.
func TestAttackRewindHugeSparseFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	rwFiles(t, ws, map[string]string{"a.txt": "a1"})
	p, sid := rwStart(t, dir, ws, "workspace-write", []standin.Response{
		{ToolCalls: []standin.ToolCall{awToolCall("huge", "bash", map[string]any{"command": "truncate -s 1T huge.img", "description": "huge"})}},
		{Text: "made"},
		{ToolCalls: []standin.ToolCall{awToolCall("edit", "bash", map[string]any{"command": "echo a2 > a.txt", "description": "edit"})}},
		{Text: "edited"},
	})
	underAttack(t, p)
	rwPrompt(t, p, sid, "Make a huge file.")
	rwPrompt(t, p, sid, "Edit a.txt.")
	list := rwPrompt(t, p, sid, "/checkpoints")
	if !strings.Contains(list, "left out for their size: huge.img") {
		t.Errorf("/checkpoints does not name the file left out: %q", list)
	}
	undo := rwPrompt(t, p, sid, "/undo")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "a1" {
		t.Errorf("a.txt holds %q after /undo, want a1 (%q)", b, undo)
	}
	if fi, err := os.Stat(filepath.Join(ws, "huge.img")); err != nil || fi.Size() != 1<<40 {
		t.Errorf("huge.img after /undo: %v %v; want it untouched", fi, err)
	}
	var size int64
	_ = filepath.Walk(filepath.Join(dir, "checkpoints"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
		return nil
	})
	if size > 4<<20 {
		t.Errorf("the checkpoint store holds %d bytes: the huge file was stored", size)
	}
}

// TestAttackRewindKilledMidRestore: reel is killed with SIGKILL in the
// middle of a restore (held after one of three files). Every file is then
// either as it was or restored, never torn or missing; loading the
// session logs which files were restored (from the restore's journal),
// and a second /undo finishes the job.
func TestAttackRewindKilledMidRestore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	state := filepath.Join(dir, "state")
	old := map[string]string{"a.txt": "a-old", "b.txt": "b-old", "c.txt": "c-old"}
	rwFiles(t, ws, old)
	edit := "for f in a b c; do echo $f-new > $f.txt; done"
	p, sid := rwStart(t, dir, ws, "workspace-write", []standin.Response{
		{ToolCalls: []standin.ToolCall{awToolCall("edit", "bash", map[string]any{"command": edit, "description": "edit"})}},
		{Text: "edited"},
	}, "--debug-restore-hold", "1")
	rwPrompt(t, p, sid, "Edit the files.")
	p.request("session/prompt", promptParams(sid, "/undo"))
	// Wait for the restore's journal to say one file is done, then kill.
	var journal string
	for journal == "" {
		m, _ := filepath.Glob(filepath.Join(dir, "checkpoints", "RW.git", "restore-*.journal"))
		if len(m) == 1 {
			journal = m[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		_, done, _, err := checkpoint.JournalDone(journal)
		if err == nil && len(done) == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	p.waited = true
	restored := 0
	for name, was := range old {
		b, err := os.ReadFile(filepath.Join(ws, name))
		switch {
		case err != nil:
			t.Errorf("%s after the kill: %v", name, err)
		case string(b) == was:
			restored++
		case string(b) != strings.TrimSuffix(was, "-old")+"-new\n":
			t.Errorf("%s after the kill holds %q: neither old nor restored", name, b)
		}
	}
	if restored != 1 {
		t.Errorf("%d files restored at the kill, want 1 (held after one)", restored)
	}
	// Load it again: the log is settled from the journal.
	p2, _ := rwStartLoad(t, dir, ws)
	recs := rwCheckpoints(t, state)
	last := recs[len(recs)-1]
	if last.Kind != sessionlog.CheckpointRestored || len(last.Paths) != 1 || !strings.Contains(last.Note, "1 of 3 files were restored") {
		t.Errorf("after the load, the last checkpoint record is %+v; want the interrupted restore settled with 1 of 3 files", last)
	}
	text := rwPrompt(t, p2, "RW", "/undo")
	if code := p2.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for name, was := range old {
		if b, _ := os.ReadFile(filepath.Join(ws, name)); string(b) != was {
			t.Errorf("%s holds %q after the second /undo, want %q (%q)", name, b, was, text)
		}
	}
}

// rwStartLoad starts reel again on the same state and loads session RW.
func rwStartLoad(t *testing.T, dir, ws string) (*proc, string) {
	t.Helper()
	url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{{Text: "unused"}}})
	env := append(baseEnv(t), "DEEPSEEK_API_KEY=sk-reel-fake-attack")
	p := startProc(t, dir, env, "acp", "--state-dir", filepath.Join(dir, "state"), "--checkpoints",
		"--mode", "workspace-write", "--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
	p.initialize()
	p.call("session/load", map[string]any{"sessionId": "RW", "cwd": ws, "mcpServers": []any{}})
	return p, "RW"
}

// TestRewindCommandLine: `reel rewind SESSION N` (with --dry-run first)
// restores the files of a finished session and takes the turn back, like
// /rewind N.
func TestRewindCommandLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	rwFiles(t, ws, map[string]string{"a.txt": "a-old"})
	p, sid := rwStart(t, dir, ws, "workspace-write", []standin.Response{
		{ToolCalls: []standin.ToolCall{awToolCall("edit", "bash", map[string]any{"command": "echo a-new > a.txt && echo x > b.txt", "description": "edit"})}},
		{Text: "edited"},
	})
	rwPrompt(t, p, sid, "Edit.")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	run := func(args ...string) string {
		cmd := exec.Command(reelExe, append([]string{"rewind", "--state-dir", filepath.Join(dir, "state")}, args...)...)
		cmd.Env = baseEnv(t)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("reel rewind %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := run("--dry-run", "RW", "1"); !strings.Contains(out, "- a.txt\n- b.txt\n") {
		t.Errorf("reel rewind --dry-run printed %q, want the two files", out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "a-new\n" {
		t.Fatalf("the dry run changed a.txt to %q", b)
	}
	out := run("RW", "1")
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "a-old" {
		t.Errorf("a.txt holds %q after reel rewind, want a-old (%q)", b, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err == nil {
		t.Errorf("b.txt is still there after reel rewind (%q)", out)
	}
}

// TestLogFork: `reel log fork LOG --at SEQ --id ID` starts a session from
// the turns that ended by SEQ; it loads and continues on its own (its
// first request holds turn 1 only), and the original still loads.
func TestLogFork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	state := filepath.Join(dir, "state")
	rwFiles(t, ws, map[string]string{"a.txt": "a"})
	p, sid := rwStart(t, dir, ws, "workspace-write", []standin.Response{{Text: "one"}, {Text: "two"}})
	rwPrompt(t, p, sid, "First turn.")
	rwPrompt(t, p, sid, "Second turn.")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	at := -1
	for _, e := range logEvents(t, state, "RW") {
		if e.Type == sessionlog.TypeTurnEnd && at < 0 {
			at = e.Seq
		}
	}
	cmd := exec.Command(reelExe, "log", "fork", filepath.Join(state, "RW.jsonl"), "--at", strconv.Itoa(at), "--id", "FORK")
	cmd.Env = baseEnv(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reel log fork: %v\n%s", err, out)
	}
	url, model := standinURL(t, &standin.Script{Responses: []standin.Response{{Text: "forked answer"}}})
	env := append(baseEnv(t), "DEEPSEEK_API_KEY=sk-reel-fake-attack")
	p2 := startProc(t, dir, env, "acp", "--state-dir", state, "--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
	p2.initialize()
	p2.call("session/load", map[string]any{"sessionId": "FORK", "cwd": ws, "mcpServers": []any{}})
	if got := rwPrompt(t, p2, "FORK", "Third turn, in the fork."); !strings.Contains(got, "forked answer") {
		t.Errorf("the fork answered %q", got)
	}
	p2.call("session/load", map[string]any{"sessionId": "RW", "cwd": ws, "mcpServers": []any{}})
	if code := p2.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	body := string(reqs[0])
	if !strings.Contains(body, "First turn.") || strings.Contains(body, "Second turn.") || !strings.Contains(body, "Third turn") {
		t.Errorf("the fork's request does not hold turn 1 and the new prompt alone: %s", body)
	}
}
