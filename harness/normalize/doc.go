// Package normalize makes a run's wire transcript and session logs
// comparable across runs by replacing what differs from run to run with
// stable placeholders.
//
// A Normalizer handles one run, line by line (Line) or a whole stream
// (Transcript). A line that is JSON is parsed into an ordered tree — object
// members keep their order, duplicates included, and untouched scalars keep
// their original bytes — rewritten, and written back compact. Rules:
//
//   - Session ids: the string value of a session key ("sessionId",
//     "session_id", "parentSession", any key ending in "SessionId", plus
//     Options.SessionKeys) and the "id" of a session log header
//     ({"type":"session",…}) become {{sessionId}}, {{sessionId2}}, … in
//     order of first appearance in the run. Any format is accepted, not
//     only UUIDs.
//   - Message ids: a UUID value of an id key ("id", keys ending in "Id",
//     "ID" or "_id", plus Options.IDKeys) that is not a session id becomes
//     {{id:1}}, {{id:2}}, … in order of first appearance.
//   - A known id is replaced wherever it is a whole string, and inside
//     longer strings (and object keys) when it has at least 8 characters.
//     Within one line, session ids are registered before message ids, and
//     both before any replacement, so a line that mentions an id before
//     declaring it still normalizes consistently.
//   - Options.Cwd becomes {{cwd}} and Options.TempDirs become {{tmp}},
//     {{tmp2}}, … wherever they occur in a string; longer literals win.
//   - Any string that is an ISO-8601 date-time becomes {{time}}.
//   - Numbers under time, pid and duration keys (time, time0, dt,
//     createdAt, updatedAt, startedAt, endedAt, finishedAt, timestamp,
//     pid, ppid, durationMs, elapsedMs, latencyMs, wall_ms, duration_ms,
//     elapsed_ms, plus Options.ZeroKeys) become 0, including every number
//     of an array under such a key (the "dt" arrays of packed chunk rows).
//   - A session/list answer of a paged listing (one with a nextCursor and
//     the answers after it up to one without) lists its sessions as
//     {{listed:1}}, {{listed:2}}, … in listing order — which sessions a
//     page holds depends on the random ids — marking a repeat
//     ({{listed:K again}}) or an id out of order ({{listed:N out of
//     order}}), and its cursor, decoded as reel encodes it, as
//     {{cursor:after listed:K}} (listing.go).
//   - Everything else — seqs included — is kept.
//
// A line that is not JSON (a torn tail, a log message) only gets the
// literal and known-id replacements. Normalizing is idempotent, and valid
// JSON in gives valid JSON out.
package normalize
