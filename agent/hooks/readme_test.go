package hooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/hooks"
)

// TestReadmeExamples: the README's hook configs are configs reel loads,
// with the events the README says they configure.
func TestReadmeExamples(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		marker  string
		dialect hooks.Dialect
		events  []string
	}{
		{"<!-- hooks-example:claude-code -->", hooks.ClaudeCode, []string{hooks.EventPreToolUse, hooks.EventUserPromptSubmit, hooks.EventStop}},
		{"<!-- hooks-example:codex -->", hooks.Codex, []string{hooks.EventPostToolUse, hooks.EventUserPromptSubmit}},
	} {
		_, rest, ok := strings.Cut(string(b), c.marker)
		if !ok {
			t.Fatalf("README.md has no %s block", c.marker)
		}
		_, rest, ok = strings.Cut(rest, "```json\n")
		block, _, ok2 := strings.Cut(rest, "```")
		if !ok || !ok2 {
			t.Fatalf("the %s block has no ```json fence", c.marker)
		}
		cfg, skipped, err := hooks.Parse(c.dialect, []byte(block), hooks.Substitution{})
		if err != nil || len(skipped) > 0 {
			t.Fatalf("%s: %v (skipped %v)", c.marker, err, skipped)
		}
		for _, ev := range c.events {
			if len(cfg.Events[ev]) == 0 || len(cfg.Events[ev][0].Hooks) == 0 {
				t.Errorf("%s: no %s hook", c.marker, ev)
			}
		}
		if len(cfg.Events) != len(c.events) {
			t.Errorf("%s configures %d events, the test knows %d", c.marker, len(cfg.Events), len(c.events))
		}
	}
}
