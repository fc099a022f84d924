// Package scenario loads snapshot-harness scenario folders. The user
// documentation of the formats, with an example of each, is
// docs/scenarios.md; its table of ops is generated from the loader's.
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
//	 "mode":"workspace-write", "approval":"never", "network":"off"}
//
// steps is required and not empty. permissionAnswers is a FIFO queue of ACP
// permission option kinds (allow_once, allow_always, reject_once,
// reject_always). recordedWith says how the fixture was recorded, e.g.
// "standin:standin.json" (a local file that must exist) or
// "deepseek:deepseek-chat". mode, approval and network are the agent's
// default sandbox mode, approval policy and network switch for the run
// (reel acp --mode, --approval and --network); absent, reel's defaults
// apply. Each STEP is an object with
// an "op" and exactly the fields that op accepts, listed by the vocabulary
// (below) and by docs/scenarios.md's table generated from it; "session", a
// 0-based session index, defaults to 0.
//
// "expectError": true says the agent must answer with a JSON-RPC error. The
// corpus's promptExpectError is read as prompt with expectError (and written
// back in that form).
//
// # The vocabulary
//
// The ops are one table, the vocabulary (ops.go): each op's required and
// optional fields, whether it sends a prompt, the Driver method that runs it
// (none for the corpus ops reel's harness does not drive), and the sentence
// docs/scenarios.md shows for it — that table of the documentation is
// generated from it. ParseInput dispatches on it, Step.Run calls the Driver
// (the snapshot harness implements Driver), Ops lists it. A step whose op
// it does not define fails loading with ErrUnknownOp, naming the op and the
// step ("steps[3].op").
//
// Paths (waitForFile.path, path) are slash-separated and relative to the
// run's cwd; absolute paths and paths that climb out with ".." are refused.
//
// # replay.override.json
//
// The override is parsed by replay.ParseOverride (package
// agent/llm/replay), the format's one parser, which reel acp
// --replay-override uses too; Scenario.Override holds the result. Its
// format is documented there and in docs/scenarios.md.
//
// # Strictness
//
// Parsing is strict in the manner of json.Decoder.DisallowUnknownFields, and
// stricter (package internal/strictjson): unknown fields, fields an op does
// not accept, duplicate keys, missing required fields and wrongly typed
// values are all refused with an *Error naming the file, the field's JSON
// path and its line and column, for example
//
//	fixtures/x/input.json: steps[2]: unknown field "txt" (line 5, column 30)
package scenario
