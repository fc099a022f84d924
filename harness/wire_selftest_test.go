package harness_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
)

// TestWireCatchesSourceBugs patches realistic bugs of reel's ACP wire
// into a copy of the module's source, one at a time
// (testdata/wire/*.patch), builds each reel and runs one corpus scenario
// with it: the corpus check's session-update rules (equiv.UpdateRules)
// must fail the scenario with the line naming the update and both
// values. Before those rules every one of these bugs passed the corpus
// check (only message text, answers and permission requests were
// compared there).
func TestWireCatchesSourceBugs(t *testing.T) {
	t.Parallel() // builds its own reels and runs them in its own trees
	if testing.Short() {
		t.Skip("builds patched reels; not in -short")
	}
	corpus, err := filepath.Abs(corpustest.Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		patch, scenario string
		// line is the failure line, in parts (the reel line numbers
		// between them depend on how the thoughts were chunked).
		line []string
	}{
		// ToolEnd leaves out the final status of a successful call.
		{"no-completed.patch", "fs-read", []string{"wire tool status, call 1 read call_00_hHPZCcivsIkXAGS9jTGy8417 (turn 1 step 1; recording seq 58), reel lines ",
			": status sequence [pending in_progress]: it ends in_progress, want completed (the recorded result: completed)"}},
		// Plan never sends the todo list.
		{"no-plan.patch", "todo-write", []string{"wire plans: recording's log writes 1 todo list(s), reel's wire sends 0 plan(s)"}},
		// The context used leaves out the cached input.
		{"usage-no-cache.patch", "todo-write", []string{"wire usage: usage_update used: recording [5895 5919], reel [5895 159]"}},
		// Only agent_message_chunk reaches the client (issue 27's example).
		{"message-chunks-only.patch", "fs-read", []string{"wire tool calls: recording's log makes 1 tool call(s) [read], reel's wire announces 0 []"}},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.patch, ".patch"), func(t *testing.T) {
			tmp := t.TempDir()
			for _, name := range []string{"go.mod", "go.sum", "agent", "cmd", "harness", "internal", "sessionlog"} {
				if out, err := exec.Command("cp", "-a", filepath.Join(root, name), tmp).CombinedOutput(); err != nil {
					t.Fatalf("copy %s: %v\n%s", name, err, out)
				}
			}
			exe := buildPatched(t, root, tmp, filepath.Join(root, "harness", "testdata", "wire", c.patch))
			out, err := exec.Command(exe, "snapshot", "--corpus", corpus, "-j", "1", "-run", "^"+c.scenario+"$").CombinedOutput()
			if err == nil {
				t.Fatalf("the reel patched with %s passed %s:\n%s", c.patch, c.scenario, out)
			}
			line := failureLine(string(out), c.line)
			if line == "" {
				t.Fatalf("the failure does not name the update and both values (want a line with %q):\n%s", c.line, out)
			}
			t.Logf("failure line: %s", line)
		})
	}
}

// failureLine is the first line of out that holds every part in order,
// "" for none.
func failureLine(out string, parts []string) string {
	for _, l := range strings.Split(out, "\n") {
		rest, ok := l, true
		for _, p := range parts {
			i := strings.Index(rest, p)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(p):]
		}
		if ok {
			return l
		}
	}
	return ""
}
