// Package agent is reel's turn engine: it owns sessions and their logs, the
// turn/step loop, tool runs and their approval (logged as dsh's
// approval/asked and approval/decided), compaction, background jobs, the
// skill catalog, session titles, image admission, the sessions' MCP
// connections ([MCPConnector]; mcprun.go), the model choice, subagents
// (child sessions with their own logs; subagent.go) and the extension
// points hooks listen on ([Hook]: session start, prompt submit, before and
// after each tool call, the turn's stopping; the Claude Code and Codex
// bridges are in agent/hooks). It knows nothing of the Agent Client
// Protocol: a session reports what a turn does through the small [Updates]
// interface and asks for approvals through [Approver], both supplied per
// prompt in a [Client]. The ACP adapter (package agent/acpserver)
// implements them with session/update and session/request_permission; a
// subagent's parent implements them with its own tool call's progress.
//
// A prompt opens turn/start. Each step writes step/start, the entered
// user/messages, the request/header the step owes (initial, resume, change,
// series — or none), request/context right before the model call, the
// stream as assistant/chunk events, assistant/message citing its chunks,
// tool/call then tool/result (citing the call) per tool call, and step/end;
// hook/invoked and hook/result pairs lie where their hooks ran (a
// UserPromptSubmit before step 1, a Stop after the step that ended the
// answer).
// The turn ends with turn/end. The model request is built from the log, so
// nothing reaches a model unless it is on the log first; the log is made
// durable before each model call, before each tool runs, after each step
// and at turn end.
//
// Diagnostics go to the injected *slog.Logger (stderr in reel acp).
package agent
