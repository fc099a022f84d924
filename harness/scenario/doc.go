// Package scenario loads snapshot-harness scenario folders. The user
// documentation of the formats, with an example of each, is
// docs/scenarios.md; a test keeps its table of ops equal to the loader's.
//
// # Folder layout
//
// A scenario is a folder (fixtures/<name>/) holding:
//
//	input.json            required: the client script (below)
//	session.jsonl         the first session's recorded log (optional for
//	                      scenarios that never record one, reported by
//	                      Scenario.HasSession)
//	session.N.jsonl       further sessions, N = 1, 2, … without gaps
//	replay.override.json  optional: model calls replay cannot take from the log
//	workspace/            optional: seed copied into the run's cwd; symlinks
//	                      inside must stay inside, special files are refused
//	standin.json          optional: the stand-in model script used to record
//
// input.json, the session logs, the override and the stand-in script must
// be regular files (symlinks are refused). Any other entry is listed in
// Scenario.Other and otherwise ignored. Discover
// lists the scenario folders directly under a root; Orphans lists the folders
// there without an input.json.
//
// # input.json
//
//	{"steps":[STEP, …], "permissionAnswers":[{"kind":KIND}, …], "recordedWith":"…",
//	 "mode":"workspace-write", "approval":"never"}
//
// steps is required and not empty. permissionAnswers is a FIFO queue of ACP
// permission option kinds (allow_once, allow_always, reject_once,
// reject_always). recordedWith says how the fixture was recorded, e.g.
// "standin:standin.json" (a local file that must exist) or
// "deepseek:deepseek-chat". mode and approval are the agent's default
// sandbox mode and approval policy for the run (reel acp --mode and
// --approval); absent, reel's defaults apply. Each STEP is an object with an "op" and the
// fields that op accepts ("session", a 0-based session index, defaults to 0):
//
//	initialize, newSession                       —
//	prompt, promptExpectError                    text; session
//	promptContent                                content (ACP content blocks: text,
//	                                             image, audio, resource_link); session
//	promptAndCancel                              text, waitForFile {path}; session
//	promptAndWaitForAgentMessage                 text, waitForText; session
//	waitForTurnEnd, waitForTitleAfterTurnEnd     session
//	waitForTurnStart                             minimumTurn; session
//	waitForSubagentTurnEnd                       optional child, minimumTurn; session
//	waitForFile                                  path
//	loadSession (fresh process), cancel          session
//	setMode                                      mode; session
//
// Paths (waitForFile.path, path, an override's readyFile) are slash-separated
// and relative to the run's cwd; absolute paths and paths that climb out with
// ".." are refused.
//
// # replay.override.json
//
// An array of entries, applied in order to the model calls that need them
// (or {"patches":[{"at":N,"entry":ENTRY}, …]}, which replaces call N of the
// script derived from the log and keeps the others):
//
//	{"kind":"chunks","chunks":[CHUNK, …]}                      a scripted stream
//	{"kind":"throw","chunks":[…],"message":"…","code":"AUTH"}  fail the call
//	{"kind":"hang","readyFile":".ready","chunks":[…]}          block until cancelled
//
// CHUNK is a dsh stream chunk: block-start, text-delta, reasoning-delta,
// tool-call-delta, block-end, usage or finish, each with exactly its fields.
//
// # Strictness
//
// Parsing is strict in the manner of json.Decoder.DisallowUnknownFields, and
// stricter: unknown fields, fields an op does not accept, duplicate keys,
// missing required fields and wrongly typed values are all refused with an
// *Error naming the file and the field, for example
//
//	fixtures/x/input.json: steps[2]: unknown field "txt"
package scenario
