package hooks_test

import (
	"fmt"

	"github.com/reel-agent/reel/agent/hooks"
)

func ExampleParse() {
	raw := []byte(`{
	  "hooks": {
	    "PreToolUse": [
	      {"matcher": "bash|write", "hooks": [
	        {"type": "command", "command": "${CLAUDE_PROJECT_DIR}/.claude/guard.sh", "timeout": 30},
	        {"type": "prompt", "prompt": "Is this safe?"}
	      ]}
	    ],
	    "Stop": [{"matcher": "ignored", "hooks": [{"command": "./stop.sh"}]}]
	  }
	}`)
	cfg, skipped, err := hooks.Parse(hooks.ClaudeCode, raw, hooks.Substitution{ProjectDir: "/work/app"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range []string{hooks.EventPreToolUse, hooks.EventStop} {
		for _, g := range cfg.Events[ev] {
			fmt.Printf("%s %q: %s (%v)\n", ev, g.Matcher, g.Hooks[0].Command, g.Hooks[0].Timeout)
		}
	}
	for _, s := range skipped {
		fmt.Println(s)
	}
	fmt.Println(hooks.Match(hooks.ClaudeCode, "bash|write", "bash"), hooks.Match(hooks.Codex, "bash", "my_bash"))

	_, _, err = hooks.Parse(hooks.Codex, []byte(`{"PreToolUse":[{"matcher":"(?<!x)y","hooks":[{"command":"c"}]}]}`), hooks.Substitution{})
	fmt.Println(err)
	// Output:
	// PreToolUse "bash|write": /work/app/.claude/guard.sh (30s)
	// Stop "": ./stop.sh (0s)
	// hooks-claude-code: skipping unsupported "prompt" hook on PreToolUse (only command hooks run)
	// true true
	// hooks: invalid codex regex matcher "(?<!x)y" on event "PreToolUse" (invalid named capture)
}
