package jsonl_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

func chunk(seq int, t int64, data string) sessionlog.Event {
	return sessionlog.Event{Type: sessionlog.TypeAssistantChunk, Seq: seq, Time: t, Data: []byte(data)}
}

func text(index int, s string) string {
	return fmt.Sprintf(`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":%d,"text":%q}}`, index, s)
}

func toolDelta(id, name, args string) string {
	n := ""
	if name != "" {
		n = fmt.Sprintf(`,"name":%q`, name)
	}
	return fmt.Sprintf(`{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":1,"id":%q%s,"argumentsDelta":%q}}`, id, n, args)
}

// TestPacking pins which runs become packed rows: the record count of each
// encoding, and that every encoding decodes to the same events.
func TestPacking(t *testing.T) {
	for _, tc := range []struct {
		name    string
		events  []string
		records int
	}{
		{"two deltas stay unpacked", []string{text(0, "a"), text(0, "b")}, 2},
		{"three deltas pack", []string{text(0, "a"), text(0, "b"), text(0, "c")}, 1},
		{"an index change splits the run", []string{text(0, "a"), text(0, "b"), text(0, "c"), text(1, "d"), text(1, "e")}, 3},
		{"reasoning packs apart from text", []string{
			`{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":0,"text":"r"}}`,
			`{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":0,"text":"s"}}`,
			`{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":0,"text":"t"}}`,
			text(0, "a")}, 2},
		{"tool-call deltas pack", []string{toolDelta("c", "bash", ""), toolDelta("c", "bash", "{"), toolDelta("c", "bash", "}")}, 1},
		{"a tool id change splits", []string{toolDelta("c", "", "1"), toolDelta("c", "", "2"), toolDelta("d", "", "3"), toolDelta("d", "", "4"), toolDelta("d", "", "5")}, 3},
		{"a name change splits", []string{toolDelta("c", "bash", "1"), toolDelta("c", "", "2"), toolDelta("c", "", "3"), toolDelta("c", "", "4")}, 2},
		{"non-canonical data stays unpacked", []string{text(0, "a"), `{"step":1,"turn":1,"chunk":{"type":"text-delta","index":0,"text":"b"}}`, text(0, "c")}, 3},
		{"an extra field stays unpacked", []string{text(0, "a"), text(0, "b"), `{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"c","x":1}}`}, 3},
		{"other chunks break runs", []string{text(0, "a"), `{"turn":1,"step":1,"chunk":{"type":"finish"}}`, text(0, "b"), text(0, "c"), text(0, "d")}, 3},
		{"non-integer turn stays unpacked", []string{`{"turn":"1","step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}`}, 1},
		{"data not an object stays unpacked", []string{`[1]`}, 1},
		{"non-string text stays unpacked", []string{`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":5}}`}, 1},
		{"non-string tool id stays unpacked", []string{`{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":1,"id":5,"argumentsDelta":""}}`}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var evs []sessionlog.Event
			for i, d := range tc.events {
				evs = append(evs, chunk(i, int64(100+i*i), d))
			}
			out := jsonl.AppendRecords(nil, evs)
			if n := bytes.Count(out, []byte("\n")); n != tc.records {
				t.Fatalf("%d records, want %d:\n%s", n, tc.records, out)
			}
			h := sessionlog.NewHeader("p", 1, "")
			d, err := jsonl.Decode(bytes.NewReader(append(append(h.Raw, '\n'), out...)), "p")
			if err != nil || d.Torn != nil {
				t.Fatalf("decode: %v %+v", err, d.Torn)
			}
			for i := range evs {
				if a, b := evs[i].AppendJSON(nil), d.Events[i].AppendJSON(nil); !bytes.Equal(a, b) {
					t.Fatalf("event %d:\n%s\n%s", i, a, b)
				}
			}
		})
	}
}

// TestMalformedRows pins the error of every malformed packed row (placed
// before a complete turn/end, so that it is corruption).
func TestMalformedRows(t *testing.T) {
	row := func(typ, rest string) string { return fmt.Sprintf(`{"type":%q,"seq0":0,"time0":1%s}`, typ, rest) }
	okData := `,"data":{"turn":1,"step":1,"index":0,"dt":[0,0],"texts":["a","b","c"]}`
	for _, tc := range []struct {
		name, line, want string
	}{
		{"unknown row field", row("text-chunks", okData+`,"x":1`), `malformed text-chunks row: json: unknown field "x"`},
		{"no seq0", `{"type":"text-chunks","time0":1` + okData + `}`, "malformed text-chunks row: needs seq0 ≥ 0, time0 and data"},
		{"negative seq0", `{"type":"text-chunks","seq0":-1,"time0":1` + okData + `}`, "malformed text-chunks row: needs seq0 ≥ 0, time0 and data"},
		{"unknown data field", row("text-chunks", `,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"],"y":2}`), `malformed text-chunks row: data: json: unknown field "y"`},
		{"string turn", row("text-chunks", `,"data":{"turn":"1","step":1,"index":0,"dt":[],"texts":["a"]}`), "malformed text-chunks row: turn, step and index must be integers"},
		{"tool row without id", row("tool-call-chunks", `,"data":{"turn":1,"step":1,"index":0,"dt":[],"args":["a"]}`), "malformed tool-call-chunks row: needs a string id, an optional string name and args"},
		{"tool row with texts", row("tool-call-chunks", `,"data":{"turn":1,"step":1,"index":0,"dt":[],"id":"c","texts":["a"]}`), "malformed tool-call-chunks row: needs a string id, an optional string name and args"},
		{"text row with an id", row("text-chunks", `,"data":{"turn":1,"step":1,"index":0,"dt":[],"id":"c","texts":["a"]}`), "malformed text-chunks row: id, name and args belong to tool-call-chunks"},
		{"no members", row("reasoning-chunks", `,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":[]}`), "malformed reasoning-chunks row: no members"},
		{"member not a string", row("text-chunks", `,"data":{"turn":1,"step":1,"index":0,"dt":[0],"texts":["a",1]}`), "malformed text-chunks row: member 1 is not a string"},
		{"not JSON", `{"type":"text-chunks",`, "malformed text-chunks row: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := sessionlog.NewHeader("m", 1, "")
			end := `{"type":"turn/end","seq":3,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`
			input := strings.Join([]string{string(h.Raw), tc.line, end}, "\n") + "\n"
			_, err := jsonl.Decode(strings.NewReader(input), "m.jsonl")
			want := "m.jsonl:2: sessionlog: corrupt log: sessionlog: invalid event: " + tc.want + " (before the complete turn/end on line 3)"
			if err == nil || err.Error() != want {
				t.Fatalf("error\n got: %v\nwant: %s", err, want)
			}
		})
	}
	// Two events from a packed row on line 2, one event on line 3.
	h := sessionlog.NewHeader("m", 1, "")
	input := string(h.Raw) + "\n" +
		`{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[0,0],"texts":["a","b","c"]}}` + "\n" +
		`{"type":"turn/end","seq":3,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"
	d, err := jsonl.Decode(strings.NewReader(input), "m.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if d.LineOf(0) != 2 || d.LineOf(2) != 2 || d.LineOf(3) != 3 || d.LineOf(-1) != 0 || d.LineOf(4) != 0 {
		t.Fatalf("LineOf: %d %d %d", d.LineOf(0), d.LineOf(2), d.LineOf(3))
	}
}
