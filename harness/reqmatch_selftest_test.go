package harness_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequestMatchCatchesSourceBug patches a realistic bug into a copy of
// the module's source — the model request drops every tool result
// (testdata/reqmatch/drop-tool-results.patch, on agent/loop.go) — builds
// that reel and replays one fixture with it: the replay's request matching
// must fail the scenario with a line naming the call, the message and the
// field. Before request matching this bug passed every suite.
func TestRequestMatchCatchesSourceBug(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a patched reel; not in -short")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum", "agent", "cmd", "harness", "internal", "sessionlog", "fixtures", "snapshots"} {
		if out, err := exec.Command("cp", "-a", filepath.Join(root, name), tmp).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v\n%s", name, err, out)
		}
	}
	patch := filepath.Join(root, "harness", "testdata", "reqmatch", "drop-tool-results.patch")
	apply := exec.Command("patch", "-p1", "-i", patch)
	apply.Dir = tmp
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("apply %s: %v\n%s", patch, err, out)
	}
	exe := filepath.Join(tmp, "reel")
	build := exec.Command("go", "build", "-o", exe, "./cmd/reel")
	build.Dir = tmp
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the patched reel: %v\n%s", err, out)
	}
	run := exec.Command(exe, "snapshot", "-j", "1", "-run", "^tool-call-turn$")
	run.Dir = tmp
	out, err := run.CombinedOutput()
	if err == nil {
		t.Fatalf("the patched reel (drops tool results) passed tool-call-turn:\n%s", out)
	}
	const line = "turn 1 step 2 message 2 message count: recorded 3 messages, message 2 (user: tool-result) not sent, sent 2"
	if !strings.Contains(string(out), line) {
		t.Fatalf("the failure does not name the call, message and field (want %q):\n%s", line, out)
	}
	t.Logf("failure line: %s", line)
}
