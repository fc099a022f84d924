// Package equiv decides whether two runs of one scenario are semantically
// equivalent: a recording of the reference system (a corpus scenario) and
// reel's run of the same script, or any two session logs. It is the engine
// of `reel snapshot --corpus` and of `reel log diff`.
//
// A run is a Side: its session logs and, when there is one, its wire
// transcript (the agent's stdout). Compare reads both sides the same way
// and reports every difference with the check that found it, where it is
// (session, turn and step, call or message, and the seq on each side) and
// both values:
//
//   - tool calls: the same calls in the same order (name, arguments, id);
//   - tool results: the same outcome (isError) per call and, for a
//     successful call, the same essential content by the per-tool table
//     ToolRules, which reduces either system's presentation to the facts
//     that matter (file lines, command output and exit status, paths,
//     matches) — failures' wording is not compared;
//   - messages: the same user and injected messages on the surface, by
//     the class table MessageRules (prompts, instruction files,
//     repeat-call reminders, compaction summaries, …); a presentation
//     class (the reference's runtime-context message) is compared through
//     what it states instead (settings);
//   - settings: the same sandbox modes and approval policy in force;
//   - assistant text of every step, and every turn's end reason;
//   - session titles: the same session/title records (source kind, text,
//     the prompts they were made from, where they lie) and title-model
//     requests (system prompt, messages, maxTokens; not the route);
//   - requests: at every step, sessionlog's reconstruction of the request
//     has the same history shape on both sides (roles and message classes,
//     tool-call ids, the call each result answers, in order), a system
//     prompt when the expected side has one, and offers every tool the
//     model calls;
//   - the wire: the same answers to the client's requests (stop reasons,
//     JSON-RPC error codes), the same agent_message_chunk text before
//     each, the same permission requests (count, order, tool, offered
//     option kinds), and nothing on stdout that is not a frame;
//   - the wire's session updates: every session/update kind by its rule in
//     UpdateRules — tool calls (id, rawInput, location, title and kind by
//     presence), each call's status sequence, final content and diff,
//     plans, thoughts, mode and config-option updates, titles, commands
//     and usage — most against the recording's log, since the reference's
//     automation-only transport sends none of them. In-progress output
//     updates are left out by the streamed-output rule (timing); a kind
//     no rule knows is unchecked.
//
// Logs are paired by index; a child (subagent) session's log — its header
// names a parentSession — is named "child K" in differences, and its
// header must agree on its parent, its delegationDepth and what a fork's
// seed inherits. A fork's seed (its first seedLength events) must be a
// copy of the parent's first events closed by session/end-seed; it is the
// parent's, so the child's facts are read from its own events only.
//
// Paths are compared with each log's working directory (its header's cwd)
// as {{cwd}} and the side's temp dirs as {{tmp}}. What cannot be checked —
// a missing transcript, an expected result in no presentation the table
// knows, a tool without a rule — is listed in Report.Unchecked, and the
// verdict is then Partial, never Equivalent.
//
// MarkdownTables renders both tables for docs/scenarios.md, and
// UpdateRulesMarkdown the session update rules.
package equiv
