// Package hooks is reel's bridge to the shell hooks of Claude Code and
// Codex: it reads a hook config written for either, runs its command
// hooks at the engine's extension points ([agent.Hook]) and maps what the
// commands say onto the engine's decisions. It owns the two config
// formats, the matcher rules, the hook output protocol, the stdin
// payloads and the hook/invoked and hook/result records; the engine owns
// running a command (its sandbox, environment scrub and time limit,
// through [agent.HookPoint.Run]) and where a decision takes effect.
//
// # Config
//
// A config is a JSON file: a settings file whose "hooks" member is the
// event map, or the bare event map (when "hooks" is not an object, the
// file itself is the map). The map names events; each holds a list of
// matcher groups {"matcher": pattern, "hooks": [hook…]}, each hook
// {"type": "command", "command": script, "timeout": seconds}. Claude Code
// knows SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop,
// SubagentStart and SubagentStop; Codex the first five. Other events, and
// entries of the wrong shape, are ignored. "type" defaults to command;
// other types (and, in Codex, "async": true) are skipped with a warning.
// Codex also reads "timeoutSec". In Claude Code commands
// ${CLAUDE_PLUGIN_ROOT} and ${CLAUDE_PROJECT_DIR} are replaced at parse
// time when their values are set. UserPromptSubmit and Stop have no
// matcher subject: their matchers are dropped. A config that is not JSON,
// or whose runnable group carries an invalid matcher, is refused whole
// (*[ConfigError]): no hook of it runs.
//
// # Matchers
//
// A missing, "" or "*" matcher matches every subject (the tool name for
// PreToolUse and PostToolUse, the session source for SessionStart). In
// Claude Code a pattern made only of letters, digits, '_' and '|' lists
// exact names separated by '|'; every other pattern, and every Codex
// pattern, is an unanchored regular expression. The reference reads them
// as JavaScript RegExps; reel reads them with Go's regexp (RE2), which
// has no lookaround (?=, ?!, ?<=, ?<!) and no backreferences (\1): such a
// matcher is refused as invalid, so its config does not load.
//
// # Running and output
//
// The commands of the groups that match run one after another, in config
// order, each fed its event's JSON payload on stdin (Claude Code ends it
// with a newline, Codex does not). Claude Code commands get
// CLAUDE_PROJECT_DIR (Options.ProjectDir, else the session's cwd). A
// command without its own timeout gets Options.DefaultTimeout (600 s).
// Exit 2 blocks, with stderr as the reason; exit 0 may print a JSON
// object ([ParseOutput]); any other outcome decides nothing. The outputs
// of a point merge ([Merge]): deny > ask > allow. Codex SessionStart and
// UserPromptSubmit commands that exit 0 with plain stdout give it as
// context. "updatedInput" is never honoured (a warning says so);
// "systemMessage" is shown through [agent.HookPoint.Warn]; continue:false
// is recorded (decision "stop") but does not halt the turn.
//
// # Records
//
// Inside a turn each command writes hook/invoked before it runs and
// hook/result after ([sessionlog.HookInvokedData],
// [sessionlog.HookResultData]), paired by a handler id
// "<dialect>:<event>:<n>", n counting every command the Bridge ran.
//
// # Differences from the reference
//
// The Stop payload's stop_hook_active is [agent.HookPoint.StopHookActive]
// (the reference always sends false). SubagentStart and SubagentStop
// hooks are parsed but never run: the engine has no subagent point yet.
// Matchers are RE2, see above. A "systemMessage" is shown through Warn
// (the reference only logs that it ignored it), and a Codex
// "updatedInput" is warned about as Claude Code's is. A timeout of zero
// or less means the default. A matcher of "" is not written to
// hook/invoked (the reference writes "matcher":""). A stderrSummary cut
// that would split a surrogate pair ends before it. A timed-out command's
// stderr ends with a line "hook timed out after N s". Once the context is
// done no further command of the point starts.
package hooks
