package harness_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequestMatchCatchesSourceBug patches realistic bugs into a copy of
// the module's source (testdata/reqmatch/*.patch), one at a time, builds
// that reel and replays one fixture with it: the replay's request matching
// must fail the scenario with a line naming the call and the field. Each
// bug passed every suite before the matching that catches it (see
// docs/scenarios.md, "Replay matches requests"). The default run keeps two
// patches; REEL_SELFTEST_ALL=1 runs every one.
func TestRequestMatchCatchesSourceBug(t *testing.T) {
	t.Parallel() // builds its own reels and runs them in its own trees
	if testing.Short() {
		t.Skip("builds patched reels; not in -short")
	}
	all := os.Getenv("REEL_SELFTEST_ALL") == "1"
	cases := []struct {
		patch, fixture, line string
		extra                bool // only under REEL_SELFTEST_ALL=1
	}{
		// The model request drops every tool result (agent/loop.go).
		{"drop-tool-results", "tool-call-turn",
			"turn 1 step 2 message 2 message count: recorded 3 messages, message 2 (user: tool-result) not sent, sent 2", false},
		// The compaction summary request leaves out the last message of
		// the range it summarizes (agent/compact.go); the log is unchanged.
		{"compaction-range-off-by-one", "compaction",
			"compaction summary at seq 56 message 3 message count: recorded 4 messages, message 3 (assistant: text) not sent, sent 3", false},
		// A changed header (set_mode) is written with reason series
		// (sessionlog/header.go).
		{"mode-header-series", "sandbox-mode-switch",
			`turn 2 step 1 header reason: recorded "change", sent "series"`, true},
		// No header is written after set_mode: the old one stays in force.
		{"mode-header-missing", "sandbox-mode-switch",
			`turn 2 step 1 header reason: recorded "change", sent ""`, true},
		// The header logged is the new mode's, the request sends the old
		// mode's system prompt (agent/loop.go); the log is unchanged.
		{"mode-old-system-prompt", "sandbox-mode-switch",
			"turn 2 step 1 system prompt: differ at byte 139 (recorded 819 bytes, sent ", true},
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.patch, func(t *testing.T) {
			if c.extra && !all {
				t.Skip("set REEL_SELFTEST_ALL=1 to build this patched reel too")
			}
			tmp := t.TempDir()
			for _, name := range []string{"go.mod", "go.sum", "agent", "cmd", "harness", "internal", "sessionlog", "fixtures", "snapshots"} {
				if out, err := exec.Command("cp", "-a", filepath.Join(root, name), tmp).CombinedOutput(); err != nil {
					t.Fatalf("copy %s: %v\n%s", name, err, out)
				}
			}
			exe := buildPatched(t, root, tmp, filepath.Join(root, "harness", "testdata", "reqmatch", c.patch+".patch"))
			run := exec.Command(exe, "snapshot", "-j", "1", "-run", "^"+c.fixture+"$")
			run.Dir = tmp
			out, err := run.CombinedOutput()
			if err == nil {
				t.Fatalf("the reel patched with %s passed %s:\n%s", c.patch, c.fixture, out)
			}
			if !strings.Contains(string(out), c.line) {
				t.Fatalf("the failure does not name the call and field (want %q):\n%s", c.line, out)
			}
			t.Logf("failure line: %s", c.line)
		})
	}
}
