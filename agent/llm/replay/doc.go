// Package replay serves model streams recorded in a session log, so the
// agent runs keylessly and offline.
//
// The script is derived from the log: assistant/chunk events are split into
// one entry per model call at every finish chunk (a change of turn/step also
// closes a call); a compaction/summary marked as a local stream call
// ("llmStreamCall": true) becomes one entry built from its raw output. A call
// that ended without a finish chunk (the live stream threw or hung) cannot be
// derived: such a scenario provides replay.override.json, either a whole
// script (an array of entries) or {"patches":[{"at":N,"entry":…}]} over the
// derived one. Entries are {"kind":"chunks","chunks":[…]},
// {"kind":"throw","chunks":[…],"message":…,"code":…} and
// {"kind":"hang","readyFile":…}.
//
// The Provider serves entries positionally, one stream in flight at a time.
// An exhausted script fails loudly with the call number.
package replay
