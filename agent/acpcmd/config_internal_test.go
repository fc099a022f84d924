package acpcmd

import (
	"io"
	"slices"
	"testing"
)

// TestFlagsReachTheEngine: every behaviour flag of reel acp ends up in the
// engine configuration (they were once parsed and then dropped).
func TestFlagsReachTheEngine(t *testing.T) {
	t.Parallel()
	env := IO{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	o, err := parse([]string{"--state-dir", "/s/sessions", "--inline-bytes", "800", "--instruction-root-markers", ".git,.hg",
		"--no-instructions", "--no-read-guard", "--no-repeat-reminders", "--glob-max-results", "4", "--glob-sample", "--glob-no-spill",
		"--mode", "read-only", "--approval", "never", "--max-tokens", "99", "--max-response-bytes", "4096", "--context-window", "1000", "--no-skills", "--network", "off", "--terminals"}, env)
	if err != nil {
		t.Fatal(err)
	}
	c := engineConfig(o)
	checks := []struct {
		name string
		ok   bool
	}{
		{"--inline-bytes", c.MaxInlineBytes == 800},
		{"--instruction-root-markers", slices.Equal(c.Instructions.RootMarkers, []string{".git", ".hg"})},
		{"--no-instructions", c.Instructions.Disabled},
		{"--no-read-guard", c.DisableReadGuard},
		{"--no-repeat-reminders", c.DisableRepeatReminders},
		{"--glob-max-results", c.GlobMaxResults == 4},
		{"--glob-sample", c.GlobSample},
		{"--glob-no-spill", c.GlobNoSpill},
		{"--mode", c.Mode == "read-only"},
		{"--approval", c.Approval == "never"},
		{"--max-tokens", c.MaxTokens == 99},
		{"--max-response-bytes", c.MaxResponseBytes == 4096},
		{"--context-window", c.ContextWindow == 1000},
		{"spill dir beside the state dir", c.SpillDir == "/s/spill"},
		{"--no-skills", c.DisableSkills},
		{"--network off", c.NetworkOff},
		{"--terminals", c.Terminals},
	}
	for _, ck := range checks {
		if !ck.ok {
			t.Errorf("%s did not reach the engine config: %+v", ck.name, c)
		}
	}
	// The defaults leave every behaviour on.
	o, err = parse(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	if c := engineConfig(o); c.Instructions.Disabled || c.DisableReadGuard || c.DisableRepeatReminders || c.GlobNoSpill || c.MaxInlineBytes != 0 || c.DisableSkills || c.NetworkOff || c.Terminals {
		t.Errorf("defaults turn a behaviour off: %+v", c)
	}
}
