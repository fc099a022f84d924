// Package harness is reel's keyless snapshot harness. A scenario is a
// folder of data (fixtures/<name>/: input.json, session.jsonl and
// session.N.jsonl, optional replay.override.json, optional workspace/). The
// harness runs it through the real reel binary over stdio with its own
// JSON-RPC client (harness/rpcclient, never the agent's SDK), then compares
//
//   - the normalized stdout transcript with its golden
//     (snapshots/transcripts/<name>_1.snap.jsonl, a go-snaps standalone file);
//   - the normalized, canonically re-encoded session log(s) with the
//     fixture's session.jsonl files, reporting the first differing seq,
//     its type and field;
//   - every system prompt and tool-schema list the agent wrote, pinned once
//     each as readable files (snapshots/prompts/prompt-<hash>_1.snap.md,
//     snapshots/tools/tools-<hash>_1.snap.json) that the fixture's
//     request/header events refer to ("{{prompt:<hash>}}", "{{tools:<hash>}}").
//
// Modes: replay (keyless: model calls are served from the fixture's log),
// refresh (replay, then rewrite the expected outputs from current
// behaviour) and record (a real provider or the stand-in model server,
// then write the fixture).
//
// The corpus mode (CorpusMain, `reel snapshot --corpus DIR`) runs the
// reference system's recordings instead: each eligible corpus scenario is
// replayed through reel, after the workspace preparation the reference's
// suite does in code for it (CorpusPreps), and reel's logs and transcript
// are compared with the recording for semantic equivalence by package
// harness/equiv. A scenario passes, fails with the differences, is partial
// (something could not be checked) or is ineligible (Eligible names every
// capability reel lacks). break_test.go runs deliberately broken builds of
// reel (-tags reelbreak) through it and expects each to fail.
package harness
