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
// then write the fixture). A process that replays no recorded session's
// model (a scenario without prompts, a deleteSession step) lists its auth
// methods differently in a record and a replay: record, then refresh.
//
// Session ids are random, so two things need more than placeholders. A
// session/list listing is paged in id order: a listSessions step with
// followCursor sends the previous answer's nextCursor, the finished
// listing is checked against the script's sessions (listdelete.go), and
// the transcript shows its sessions and cursors by their place in the
// listing (package normalize). A deleteSession step runs in a fresh
// process; the deleted session's log as it was just before is its fixture
// log, and its file must be gone after the answer and at the end. A
// forkSession step sends session/fork anchored at an earlier answer's
// message id (atAnswer, by its place among the session's answers on the
// wire) or at a seq; the fork is the next session, replayed from its own
// log, so its model requests (the prefix and its new prompts only) are
// compared like any other's.
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
