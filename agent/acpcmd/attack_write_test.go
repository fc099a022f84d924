package acpcmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// awToolCall is a scripted tool call of the stand-in model.
func awToolCall(id, name string, args map[string]any) standin.ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return standin.ToolCall{ID: id, Name: name, Arguments: string(b)}
}

// awRun drives one prompt of `reel acp` in workspace-write in ws against a
// stand-in model playing responses, and returns the text of every tool
// result the model was sent, by tool call id.
func awRun(t *testing.T, dir, ws string, responses []standin.Response) map[string]string {
	t.Helper()
	return awRunIn(t, "workspace-write", dir, ws, responses)
}

// awRunIn is awRun in the given sandbox mode.
func awRunIn(t *testing.T, mode, dir, ws string, responses []standin.Response) map[string]string {
	t.Helper()
	url, model := standinURL(t, &standin.Script{Responses: responses})
	env := append(baseEnv(t), "DEEPSEEK_API_KEY=sk-reel-fake-attack")
	p := startProc(t, dir, env, "acp", "--state-dir", filepath.Join(dir, "state"), "--session-id", "ATK",
		"--mode", mode, "--provider", "deepseek", "--base-url", url, "--model", "standin")
	p.initialize()
	sid := p.newSession(ws)
	if stop, _ := p.prompt(sid, "Attack the sandbox through the file tools."); stop != "end_turn" {
		t.Fatalf("stopReason %q; stderr:\n%s", stop, p.stderr.String())
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	reqs := model.Requests()
	if len(reqs) != len(responses) {
		t.Fatalf("the model got %d requests, want %d", len(reqs), len(responses))
	}
	results := map[string]string{}
	for _, body := range reqs {
		var req struct {
			Messages []struct {
				Role       string          `json:"role"`
				ToolCallID string          `json:"tool_call_id"`
				Content    json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		for _, m := range req.Messages {
			if m.Role != "tool" {
				continue
			}
			var s string
			if json.Unmarshal(m.Content, &s) != nil {
				s = string(m.Content)
			}
			results[m.ToolCallID] = s
		}
	}
	return results
}

// awDirs makes the workspace and a directory outside it.
func awDirs(t *testing.T) (dir, ws, out string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, out = filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	for _, d := range []string{ws, filepath.Join(out, "a", "b")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, ws, out
}

// TestAttackWriteDanglingChain is finding 2 of issue 12: the model's bash
// plants `sub -> OUT/a/b` and `L -> sub/../x` (dangling: x does not
// exist), then writes L. A resolver that joins the dangling target
// lexically collapses sub/.. to the inside name x and allows the write,
// which the kernel resolves through sub to OUT/a/x. The write must fail
// and OUT/a/x must not exist.
func TestAttackWriteDanglingChain(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, ws, out := awDirs(t)
	sub := filepath.Join(out, "a", "b")
	results := awRun(t, dir, ws, []standin.Response{
		{ToolCalls: []standin.ToolCall{awToolCall("call_ln", "bash", map[string]any{
			"command": fmt.Sprintf("ln -s %q sub && ln -s sub/../x L && ls -l L sub", sub), "description": "Plant the links"})}},
		{ToolCalls: []standin.ToolCall{
			awToolCall("call_write", "write", map[string]any{"file_path": "L", "content": "pwned\n"}),
			awToolCall("call_edit", "edit", map[string]any{"file_path": "L", "old_string": "a", "new_string": "b"}),
		}},
		{Text: "done"},
	})
	if r := results["call_ln"]; !strings.Contains(r, "L -> sub/../x") {
		t.Fatalf("the links were not planted: %q", r)
	}
	escaped := filepath.Join(out, "a", "x")
	if b, err := os.ReadFile(escaped); err == nil {
		t.Errorf("ESCAPE: write through the dangling chain created %s holding %q", escaped, b)
	}
	for _, id := range []string{"call_write", "call_edit"} {
		r, ok := results[id]
		if !ok {
			t.Errorf("%s: no tool result reached the model", id)
			continue
		}
		// An edit of L never reaches the sandbox: L leads nowhere, so the
		// read-before-edit rule refuses it first. Either refusal is fine;
		// what matters is that it names L and nothing outside changed.
		refused := strings.Contains(r, "[sandbox denied: mode workspace-write]") ||
			id == "call_edit" && strings.Contains(r, "edit requires reading")
		if !strings.Contains(r, filepath.Join(ws, "L")) || !refused {
			t.Errorf("%s: result %q; want a refusal naming %s", id, r, filepath.Join(ws, "L"))
		}
	}
	if entries, err := os.ReadDir(filepath.Join(out, "a")); err != nil || len(entries) != 1 {
		t.Errorf("the outside directory holds %v (%v), want only b/", entries, err)
	}
}

// TestAttackWriteRenameRace is finding 3 of issue 12: a background bash
// loop flips d between a symbolic link to an inside directory and one to
// an outside directory (each flip an atomic rename by ln -sfn) while the
// model issues write and edit calls on d/victim.txt. A check-then-write
// tool sees the inside directory at the check and writes the outside file.
// The outside file must be unchanged.
func TestAttackWriteRenameRace(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, ws, out := awDirs(t)
	const outside = "outside original\n"
	victim := filepath.Join(out, "victim.txt")
	if err := os.WriteFile(victim, []byte(outside), 0o644); err != nil {
		t.Fatal(err)
	}
	const calls = 120
	var burst []standin.ToolCall
	for i := range calls {
		id := fmt.Sprintf("call_%03d", i)
		if i%2 == 0 {
			burst = append(burst, awToolCall(id, "write", map[string]any{"file_path": "d/victim.txt", "content": "original inside\n"}))
		} else {
			burst = append(burst, awToolCall(id, "edit", map[string]any{"file_path": "d/victim.txt", "old_string": "original", "new_string": "edited"}))
		}
	}
	// perl, when present, flips thousands of times a second from one
	// process; the ln loop is the fallback (one rename per fork).
	flip := fmt.Sprintf(`out=%q; end=$((SECONDS+20))
if command -v perl >/dev/null; then
  exec perl -e 'my ($out, $end, $n) = ($ARGV[0], time + 20, 0);
    while (!-e "stop" && time < $end) { for my $t ($out, "real") { symlink($t, "d.new") or die "symlink: $!"; rename("d.new", "d") or die "rename: $!"; } $n++ }
    open(my $f, ">", "flips") or die; print $f "flipped $n times (perl)\n";' "$out"
fi
n=0; while [ ! -e stop ] && [ $SECONDS -lt $end ]; do ln -sfn "$out" d; ln -sfn real d; n=$((n+1)); done; echo "flipped $n times (ln)" > flips`, out)
	wait := `for i in $(seq 200); do [ -s flips.started ] && break; [ "$(readlink d)" != real ] && echo yes > flips.started; sleep 0.01; done; cat flips.started`
	results := awRun(t, dir, ws, []standin.Response{
		{ToolCalls: []standin.ToolCall{awToolCall("call_setup", "bash", map[string]any{
			"command": "mkdir real && echo 'original inside' > real/victim.txt && ln -s real d && echo ready", "description": "Set up"})}},
		{ToolCalls: []standin.ToolCall{awToolCall("call_flip", "bash", map[string]any{
			"command": flip, "description": "Flip d", "run_in_background": true})}},
		{ToolCalls: []standin.ToolCall{awToolCall("call_wait", "bash", map[string]any{"command": wait, "description": "Wait for the flipping"})}},
		{ToolCalls: burst},
		{ToolCalls: []standin.ToolCall{awToolCall("call_stop", "bash", map[string]any{
			"command": "touch stop; for i in $(seq 300); do [ -e flips ] && break; sleep 0.01; done; cat flips", "description": "Stop flipping"})}},
		{Text: "done"},
	})
	if r := results["call_wait"]; !strings.Contains(r, "yes") {
		t.Fatalf("the flipping never started: %q (setup %q, flip %q)", r, results["call_setup"], results["call_flip"])
	}
	t.Logf("flipper: %s", strings.TrimSpace(results["call_stop"]))
	if b, err := os.ReadFile(victim); err != nil || string(b) != outside {
		t.Fatalf("ESCAPE: the outside victim holds %q (%v), want %q", b, err, outside)
	}
	var ok, denied int
	other := map[string]int{}
	for i := range calls {
		r := results[fmt.Sprintf("call_%03d", i)]
		switch {
		case strings.HasPrefix(r, "Wrote ") || strings.HasPrefix(r, "Edited "):
			ok++
		case strings.Contains(r, "[sandbox denied: mode workspace-write]"):
			denied++
		default:
			other[strings.ReplaceAll(r, ws, "WS")]++
		}
	}
	t.Logf("%d calls wrote inside, %d were denied, %d failed otherwise: %v", ok, denied, calls-ok-denied, other)
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 2 {
		t.Errorf("the outside directory holds %v (%v), want only a/ and victim.txt", entries, err)
	}
}

// TestAttackWriteReadOnlyPlantedLinks is findings 2 and 3 in read-only,
// where the model's bash cannot plant links itself: the workspace already
// holds them (a cloned repository can), the dangling chain of finding 2 and
// a link to an outside directory. write and edit through them are refused
// with the read-only marker and nothing outside changes.
func TestAttackWriteReadOnlyPlantedLinks(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir, ws, out := awDirs(t)
	victim := filepath.Join(out, "victim.txt")
	if err := os.WriteFile(victim, []byte("outside original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		filepath.Join(ws, "sub"): filepath.Join(out, "a", "b"),
		filepath.Join(ws, "L"):   "sub/../x",
		filepath.Join(ws, "d"):   out,
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	results := awRunIn(t, "read-only", dir, ws, []standin.Response{
		{ToolCalls: []standin.ToolCall{
			awToolCall("w_chain", "write", map[string]any{"file_path": "L", "content": "pwned\n"}),
			awToolCall("e_chain", "edit", map[string]any{"file_path": "L", "old_string": "a", "new_string": "b"}),
			awToolCall("w_dir", "write", map[string]any{"file_path": "d/victim.txt", "content": "pwned\n"}),
			// Read first, so the edit passes the read-before-edit rule
			// and meets the sandbox.
			awToolCall("r_dir", "read", map[string]any{"file_path": "d/victim.txt"}),
			awToolCall("e_dir", "edit", map[string]any{"file_path": "d/victim.txt", "old_string": "outside", "new_string": "pwned"}),
			awToolCall("bash", "bash", map[string]any{"command": "echo pwned > d/victim.txt; echo pwned > L; echo tried"}),
		}},
		{Text: "done"},
	})
	for _, id := range []string{"w_chain", "e_chain", "w_dir", "e_dir"} {
		r := results[id]
		// e_chain's L leads nowhere: the read-before-edit rule refuses it
		// before the sandbox is asked.
		if !strings.Contains(r, "[sandbox denied: mode read-only]") && !(id == "e_chain" && strings.Contains(r, "edit requires reading")) {
			t.Errorf("%s: result %q, want the read-only denial", id, r)
		}
	}
	if r := results["r_dir"]; !strings.Contains(r, "outside original") {
		t.Errorf("the read before the edit did not read the victim: %q", r)
	}
	if r := results["bash"]; !strings.Contains(r, "tried") {
		t.Errorf("the bash attack did not run: %q", r)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "outside original\n" {
		t.Errorf("ESCAPE: the outside victim holds %q (%v)", b, err)
	}
	if _, err := os.Lstat(filepath.Join(out, "a", "x")); err == nil {
		t.Errorf("ESCAPE: the dangling chain created %s", filepath.Join(out, "a", "x"))
	}
}
