package harness_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reel-agent/reel/harness"
)

// TestMCPReplayUsesTheRecording: a replayed MCP scenario answers the
// model's MCP calls from the recording, not from a server (none runs in a
// replay). Tampering with the recorded result of one call must show up in
// the replay's transcript, and a recording whose servers differ from the
// scenario's must fail the session, not silently run without them.
func TestMCPReplayUsesTheRecording(t *testing.T) {
	const name = "mcp-stdio-tools"
	t.Run("control", func(t *testing.T) {
		tr := newTree(t, name)
		if failures, _ := runSuite(t, tr.suite(harness.Replay, harness.FileGolden{})); len(failures) > 0 {
			t.Fatalf("the untouched copy fails:\n%s", strings.Join(failures, "\n"))
		}
	})
	t.Run("tampered result", func(t *testing.T) {
		tr := newTree(t, name)
		edit(t, filepath.Join(tr.scenario(name), "session.jsonl"), func(s string) string {
			return strings.Replace(s, `"text":"hello again"}],"isError":false`, `"text":"forged by the log"}],"isError":false`, 1)
		})
		failures, _ := runSuite(t, tr.suite(harness.Replay, harness.FileGolden{}))
		if oneContaining(failures, "forged by the log") == "" {
			t.Fatalf("the forged result is not in what the replay reports:\n%s", strings.Join(failures, "\n"))
		}
	})
	t.Run("other servers", func(t *testing.T) {
		tr := newTree(t, name)
		edit(t, filepath.Join(tr.scenario(name), "input.json"), func(s string) string {
			return strings.Replace(s, `"name": "tools"`, `"name": "other"`, 1)
		})
		failures, _ := runSuite(t, tr.suite(harness.Replay, harness.FileGolden{}))
		if oneContaining(failures, "newSession", "Internal error") == "" {
			t.Fatalf("a replay connecting servers the recording did not connect did not fail session/new:\n%s", strings.Join(failures, "\n"))
		}
	})
}

// TestMCPFixturesCatchBrokenAgents: the MCP fixtures fail a reel that is
// wrong on purpose (a -tags reelbreak build, see agent/break_on.go): one
// that runs MCP tools without asking, and one whose tool results are
// garbage. The control run of the same binary without REEL_BREAK passes.
func TestMCPFixturesCatchBrokenAgents(t *testing.T) {
	t.Parallel() // builds its own reels and runs them in its own trees
	exe := reelBreakExe(t)
	for _, c := range []struct {
		kind, scenario, want string
	}{
		{"", "mcp-stdio-tools", ""},
		{"", "mcp-http-tool", ""},
		{"autoapprove", "mcp-stdio-tools", "permission"},
		{"autoapprove", "mcp-http-tool", "permission"},
		{"garbage", "mcp-http-tool", "garbage"},
	} {
		t.Run(c.kind+"/"+c.scenario, func(t *testing.T) {
			tr := newTree(t, c.scenario)
			s := tr.suite(harness.Replay, harness.FileGolden{})
			s.Runner.Exe = exe
			if c.kind != "" {
				s.Runner.Env = []string{"REEL_BREAK=" + c.kind}
			}
			s.Filter = regexp.MustCompile("^" + regexp.QuoteMeta(c.scenario) + "$")
			failures, _ := runSuite(t, s)
			switch {
			case c.kind == "" && len(failures) > 0:
				t.Fatalf("the control fails:\n%s", strings.Join(failures, "\n"))
			case c.kind != "" && oneContaining(failures, c.want) == "":
				t.Fatalf("REEL_BREAK=%s: want a failure mentioning %q, got:\n%s", c.kind, c.want, strings.Join(failures, "\n"))
			}
		})
	}
}
