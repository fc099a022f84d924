package sessionlog_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// Lines of a small valid log, by seq, for the bad-input table.
const (
	hdr    = `{"type":"session","version":0,"id":"s","createdAt":1}`
	turn0  = `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`
	step1  = `{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1}}`
	user2  = `{"type":"user/message","seq":2,"time":1,"data":{"role":"user","content":[{"type":"text","text":"hi"}]},"surfaceOp":"append"}`
	chunk3 = `{"type":"assistant/chunk","seq":3,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"ok"}}}`
	asst4  = `{"type":"assistant/message","seq":4,"time":1,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"tool-call","id":"c1","name":"bash","arguments":"{}"}]}},"sourceEventSeqs":[3],"surfaceOp":"append"}`
	call5  = `{"type":"tool/call","seq":5,"time":1,"data":{"turn":1,"step":1,"callId":"c1","name":"bash","arguments":"{}"}}`
	res6   = `{"type":"tool/result","seq":6,"time":1,"data":{"turn":1,"step":1,"message":{"role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"out"}]}]}},"sourceEventSeqs":[5],"surfaceOp":"append"}`
	end7   = `{"type":"step/end","seq":7,"time":1,"data":{"turn":1,"step":1}}`
	tend8  = `{"type":"turn/end","seq":8,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`
)

// prefix is the valid log up to (not including) seq n.
func prefix(n int) []string {
	return []string{turn0, step1, user2, chunk3, asst4, call5, res6, end7, tend8}[:n]
}

// log joins a header and event lines into a file.
func log(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// withEvent is the valid prefix up to seq n followed by line.
func withEvent(n int, line string) string {
	return log(append(append([]string{hdr}, prefix(n)...), line)...)
}

func ev(seq int, typ, rest string) string {
	return fmt.Sprintf(`{"type":%q,"seq":%d,"time":1%s}`, typ, seq, rest)
}

// load decodes and loads a JSONL log the way a store does.
func load(input string) (*jsonl.Decoded, *sessionlog.Loaded, error) {
	d, err := jsonl.Decode(strings.NewReader(input), "bad.jsonl")
	if err != nil {
		return nil, nil, err
	}
	l, err := sessionlog.Load("bad.jsonl", d.Header, d.Events)
	return d, l, err
}

func TestBadInput(t *testing.T) {
	hdrEv := func(seq int, data string) string { return ev(seq, "request/header", `,"data":`+data) }
	replace := func(seq int, typ, data, src string, start, end int) string {
		return ev(seq, typ, fmt.Sprintf(`,"data":%s,"sourceEventSeqs":%s,"surfaceOp":{"op":"replace","start":%d,"end":%d}`, data, src, start, end))
	}
	resultData := `{"turn":1,"step":1,"message":{"role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"short"}]}]}}`
	userData := `{"role":"user","content":[{"type":"text","text":"summary"}]}`
	for _, tc := range []struct {
		name, input, want string
	}{
		// The file and its header.
		{"empty file", "", `bad.jsonl: sessionlog: invalid header: empty log (no header line)`},
		{"header missing", log(turn0, step1), `bad.jsonl:1: sessionlog: invalid header: first record must have "type":"session"`},
		{"header not JSON", log(`{"type":"session",`), `bad.jsonl:1: sessionlog: invalid header: unexpected end of JSON input`},
		{"version 1", log(`{"type":"session","version":1,"id":"s","createdAt":1}`), `bad.jsonl:1: sessionlog: unsupported session format version 1 (reel reads version 0 only)`},
		{"version missing", log(`{"type":"session","id":"s","createdAt":1}`), `bad.jsonl:1: sessionlog: invalid header: header has no version`},
		{"id missing", log(`{"type":"session","version":0,"createdAt":1}`), `bad.jsonl:1: sessionlog: invalid header: header has no id`},
		{"createdAt missing", log(`{"type":"session","version":0,"id":"s"}`), `bad.jsonl:1: sessionlog: invalid header: header has no createdAt`},
		{"createdAt not an integer", log(`{"type":"session","version":0,"id":"s","createdAt":1.5}`), `bad.jsonl:1: sessionlog: invalid header: createdAt 1.5 is not a non-negative integer`},
		{"header not first", log(hdr, turn0, hdr, step1, tend8), `bad.jsonl:3: sessionlog: corrupt log: sessionlog: invalid event: a second session header (before the complete turn/end on line 5)`},

		// Physical damage before the last complete turn/end.
		{"invalid JSON mid-file", log(hdr, turn0, `{"type":"step/start","seq":1,`, user2, tend8), `bad.jsonl:3: sessionlog: corrupt log: sessionlog: invalid event: unexpected end of JSON input (before the complete turn/end on line 5)`},
		{"duplicate seq", log(hdr, turn0, step1, step1, tend8), `bad.jsonl:4: sessionlog: corrupt log: seq 1 (step/start) breaks the contiguous sequence: expected seq 2 (before the complete turn/end on line 5)`},
		{"seq gap", log(hdr, turn0, user2, tend8), `bad.jsonl:3: sessionlog: corrupt log: seq 2 (user/message) breaks the contiguous sequence: expected seq 1 (before the complete turn/end on line 4)`},
		{"unknown envelope field", log(hdr, ev(0, "turn/start", `,"data":{"turn":1},"extra":1`), tend8), `bad.jsonl:2: sessionlog: corrupt log: sessionlog: invalid event: json: unknown field "extra" (before the complete turn/end on line 3)`},
		{"time not an integer", log(hdr, ev(0, "turn/start", `,"data":{"turn":1}`)[:0]+`{"type":"turn/start","seq":0,"time":1.5,"data":{"turn":1}}`, tend8), `bad.jsonl:2: sessionlog: corrupt log: sessionlog: invalid event: seq 0 (turn/start): time 1.5 is not an integer (before the complete turn/end on line 3)`},
		{"malformed surfaceOp", log(hdr, turn0, step1, ev(2, "user/message", `,"data":{},"surfaceOp":"push"`), tend8), `bad.jsonl:4: sessionlog: corrupt log: sessionlog: invalid event: seq 2 (user/message): surfaceOp "push" is neither "append" nor {"op":"replace","start":S,"end":E} (before the complete turn/end on line 5)`},
		{"malformed packed row", log(hdr, turn0, `{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[0],"texts":["a","b","c"]}}`, tend8), `bad.jsonl:3: sessionlog: corrupt log: sessionlog: invalid event: malformed text-chunks row: dt has 1 gaps for 3 members (before the complete turn/end on line 4)`},

		// Rules of Log.check.
		{"legacy header delta", withEvent(2, ev(2, "request/header-delta", `,"data":{"delta":{}}`)), `bad.jsonl: seq 2 (request/header-delta): sessionlog: legacy request-header encoding refused: request/header-delta events were removed; headers are full snapshots`},
		{"negative time", withEvent(1, `{"type":"step/start","seq":1,"time":-5,"data":{"turn":1,"step":1}}`), `bad.jsonl: seq 1 (step/start): sessionlog: invalid event: time -5 is negative`},
		{"surface event without surfaceOp", withEvent(2, ev(2, "user/message", `,"data":{"role":"user","content":[]}`)), `bad.jsonl: seq 2 (user/message): sessionlog: invalid event: surface event has no surfaceOp`},
		{"surfaceOp on a non-surface event", withEvent(1, ev(1, "step/start", `,"data":{"turn":1,"step":1},"surfaceOp":"append"`)), `bad.jsonl: seq 1 (step/start): sessionlog: invalid event: only user/message, assistant/message and tool/result may carry a surfaceOp`},
		{"turn/end of unknown kind", withEvent(8, ev(8, "turn/end", `,"data":{"turn":1,"reason":{"kind":"exploded"}}`)), `bad.jsonl: seq 8 (turn/end): sessionlog: invalid event: unknown turn end reason kind "exploded"`},
		{"turn/end without data", withEvent(8, ev(8, "turn/end", ``)), `bad.jsonl: seq 8 (turn/end): sessionlog: invalid event: no data`},
		{"turn/end data of the wrong shape", withEvent(8, ev(8, "turn/end", `,"data":{"turn":"one"}`)), `bad.jsonl: seq 8 (turn/end): sessionlog: invalid event: data: json: cannot unmarshal string into Go struct field TurnEndData.turn of type int`},
		{"step/start data not an object", withEvent(1, ev(1, "step/start", `,"data":[1,1]`)), `bad.jsonl: seq 1 (step/start): sessionlog: invalid event: data must be a JSON object`},
		{"user/message without data", withEvent(2, ev(2, "user/message", `,"surfaceOp":"append"`)), `bad.jsonl: seq 2 (user/message): sessionlog: invalid event: no data`},
		{"user/message data not a message", withEvent(2, ev(2, "user/message", `,"data":"hi","surfaceOp":"append"`)), `bad.jsonl: seq 2 (user/message): sessionlog: invalid event: the message is not a JSON object`},
		{"assistant/message without message", withEvent(4, ev(4, "assistant/message", `,"data":{"turn":1,"step":1},"sourceEventSeqs":[3],"surfaceOp":"append"`)), `bad.jsonl: seq 4 (assistant/message): sessionlog: invalid event: data has no message`},
		{"assistant/message with a null message", withEvent(4, ev(4, "assistant/message", `,"data":{"turn":1,"step":1,"message":null},"sourceEventSeqs":[3],"surfaceOp":"append"`)), `bad.jsonl: seq 4 (assistant/message): sessionlog: invalid event: the message is not a JSON object`},

		// checkSources.
		{"assistant/message citing nothing", withEvent(4, ev(4, "assistant/message", `,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[]}},"surfaceOp":"append"`)), `bad.jsonl: seq 4 (assistant/message): sessionlog: invalid event: assistant/message must cite its chunk seqs in sourceEventSeqs`},
		{"empty sourceEventSeqs", withEvent(2, ev(2, "user/message", `,"data":{"role":"user","content":[]},"sourceEventSeqs":[],"surfaceOp":"append"`)), `bad.jsonl: seq 2 (user/message): sessionlog: invalid event: sourceEventSeqs is empty (only assistant/message may cite nothing)`},
		{"citing a later event", withEvent(4, ev(4, "assistant/message", `,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[]}},"sourceEventSeqs":[3,9],"surfaceOp":"append"`)), `bad.jsonl: seq 4 (assistant/message): sessionlog: invalid event: sourceEventSeqs cites 9, which is not an earlier event`},
		{"citing itself", withEvent(4, ev(4, "assistant/message", `,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[]}},"sourceEventSeqs":[4],"surfaceOp":"append"`)), `bad.jsonl: seq 4 (assistant/message): sessionlog: invalid event: sourceEventSeqs cites 4, which is not an earlier event`},
		{"citing a seq twice", withEvent(4, ev(4, "assistant/message", `,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[]}},"sourceEventSeqs":[3,3],"surfaceOp":"append"`)), `bad.jsonl: seq 4 (assistant/message): sessionlog: invalid event: sourceEventSeqs cites 3 twice`},
		{"citing a seq twice, out of order", withEvent(4, ev(4, "assistant/message", `,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[]}},"sourceEventSeqs":[3,1,3],"surfaceOp":"append"`)), `bad.jsonl: seq 4 (assistant/message): sessionlog: invalid event: sourceEventSeqs cites 3 twice`},
		{"tool/result not citing its call", withEvent(6, ev(6, "tool/result", `,"data":`+resultData+`,"sourceEventSeqs":[2],"surfaceOp":"append"`)), `bad.jsonl: seq 6 (tool/result): sessionlog: invalid event: tool/result must cite its tool/call seq in sourceEventSeqs`},
		{"tool/result citing nothing", withEvent(6, ev(6, "tool/result", `,"data":`+resultData+`,"surfaceOp":"append"`)), `bad.jsonl: seq 6 (tool/result): sessionlog: invalid event: tool/result must cite its tool/call seq in sourceEventSeqs`},

		// checkReplace.
		{"replace start off the surface", withEvent(9, replace(9, "user/message", userData, "[1]", 1, 2)), `bad.jsonl: seq 9 (user/message): sessionlog: invalid event: replace start 1 is not on the surface`},
		{"replace end off the surface", withEvent(9, replace(9, "user/message", userData, "[2]", 2, 5)), `bad.jsonl: seq 9 (user/message): sessionlog: invalid event: replace end 5 is not on the surface`},
		{"replace start after end", withEvent(9, replace(9, "user/message", userData, "[4,6]", 6, 4)), `bad.jsonl: seq 9 (user/message): sessionlog: invalid event: replace start 6 comes after end 4 on the surface`},
		{"replace not citing a shadowed seq", withEvent(9, replace(9, "user/message", userData, "[2,6]", 2, 6)), `bad.jsonl: seq 9 (user/message): sessionlog: invalid event: replace shadows seq 4 but sourceEventSeqs does not cite it`},
		{"tool/result replaced by a user message", withEvent(9, replace(9, "user/message", userData, "[6]", 6, 6)), `bad.jsonl: seq 9 (user/message): sessionlog: invalid event: a single tool/result (seq 6) may only be replaced by a tool/result`},
		{"tool/result replacement changing a field", withEvent(9, replace(9, "tool/result", strings.Replace(resultData, `"step":1`, `"step":2`, 1), "[6]", 6, 6)), `bad.jsonl: seq 9 (tool/result): sessionlog: invalid event: a single tool/result replacement must keep every data field of seq 6 except content`},

		// checkHeaderEvent.
		{"fallback header", withEvent(3, hdrEv(3, `{"header":{"config":{}},"reason":"fallback"}`)), `bad.jsonl: seq 3 (request/header): sessionlog: legacy request-header encoding refused: header reason "fallback" belongs to the removed delta codec`},
		{"header without reason", withEvent(3, hdrEv(3, `{"header":{"config":{}}}`)), `bad.jsonl: seq 3 (request/header): sessionlog: invalid event: request header has no reason`},
		{"header of unknown reason", withEvent(3, hdrEv(3, `{"header":{"config":{}},"reason":"whim"}`)), `bad.jsonl: seq 3 (request/header): sessionlog: invalid event: unknown request header reason "whim"`},
		{"header snapshot missing", withEvent(3, hdrEv(3, `{"reason":"initial"}`)), `bad.jsonl: seq 3 (request/header): sessionlog: invalid event: request header snapshot is missing or not an object`},
		{"header snapshot not an object", withEvent(3, hdrEv(3, `{"header":"full","reason":"initial"}`)), `bad.jsonl: seq 3 (request/header): sessionlog: invalid event: request header snapshot is missing or not an object`},
		{"header snapshot of the wrong shape", withEvent(3, hdrEv(3, `{"header":{"config":{},"system":7},"reason":"initial"}`)), `bad.jsonl: seq 3 (request/header): sessionlog: invalid event: request header: json: cannot unmarshal number into Go struct field .system of type string`},
		{"header without config", withEvent(3, hdrEv(3, `{"header":{"system":"s"},"reason":"initial"}`)), `bad.jsonl: seq 3 (request/header): sessionlog: invalid event: request header has no config`},
		{"header with empty system", withEvent(3, hdrEv(3, `{"header":{"config":{},"system":""},"reason":"initial"}`)), `bad.jsonl: seq 3 (request/header): sessionlog: invalid event: request header is not canonical: empty system must be absent`},
		{"header with empty tools", withEvent(3, hdrEv(3, `{"header":{"config":{},"tools":[]},"reason":"initial"}`)), `bad.jsonl: seq 3 (request/header): sessionlog: invalid event: request header is not canonical: empty tools must be absent`},
		{"header data not an object", withEvent(3, hdrEv(3, `[]`)), `bad.jsonl: seq 3 (request/header): sessionlog: invalid event: data: json: cannot unmarshal array into Go value of type sessionlog.RequestHeaderData`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := load(tc.input)
			if err == nil {
				t.Fatalf("loaded; want error %q", tc.want)
			}
			if err.Error() != tc.want {
				t.Fatalf("error\n got: %s\nwant: %s", err, tc.want)
			}
		})
	}
}

// TestTornFinalLineLoads is the one malformed input that must load: an
// incomplete final record is dropped and the turn it interrupted repaired.
func TestTornFinalLineLoads(t *testing.T) {
	input := log(append([]string{hdr}, prefix(6)...)...) + `{"type":"tool/result","seq":6,"ti`
	d, l, err := load(input)
	if err != nil {
		t.Fatal(err)
	}
	if d.Torn == nil || d.Torn.Line != 8 || d.Torn.Records != 1 {
		t.Fatalf("torn = %+v, want line 8, 1 record", d.Torn)
	}
	if got := int64(len(input) - len(`{"type":"tool/result","seq":6,"ti`)); d.GoodBytes != got {
		t.Fatalf("GoodBytes = %d, want %d", d.GoodBytes, got)
	}
	if len(l.Closers) != 3 || l.Closers[0].Type != sessionlog.TypeToolResult || l.Closers[0].SourceEventSeqs[0] != 5 {
		t.Fatalf("closers = %v", l.Closers)
	}
	if !bytes.Contains(l.Closers[0].Data, []byte(sessionlog.ToolOutcomeUnknown)) {
		t.Fatalf("closer %s", l.Closers[0].Data)
	}
}

// TestSeedRules covers the rules no decoded log can reach (the decoder
// checks seqs and types first).
func TestSeedRules(t *testing.T) {
	h := sessionlog.NewHeader("s", 1, "")
	for _, tc := range []struct {
		name   string
		events []sessionlog.Event
		want   string
	}{
		{"seq out of order", []sessionlog.Event{{Type: "turn/start", Seq: 1, Data: []byte(`{"turn":1}`)}},
			`seq 1 (turn/start): sessionlog: invalid event: seq 1 out of order: expected 0`},
		{"no type", []sessionlog.Event{{Seq: 0}}, `seq 0 (): sessionlog: invalid event: event has no type`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sessionlog.Seed(h, tc.events)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n got: %v\nwant: %s", err, tc.want)
			}
		})
	}
}
