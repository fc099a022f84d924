package jsonl

import (
	"encoding/json"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// The fast paths accept exactly the canonical layout and defer everything
// else to the strict decoders; both must agree wherever the fast path
// answers.
func TestFastExpandRowAgreesOrDefers(t *testing.T) {
	cases := []struct {
		name, tag, row string
		fast           bool
	}{
		{"canonical text", rowText, `{"type":"text-chunks","seq0":3,"time0":10,"data":{"turn":1,"step":2,"index":0,"dt":[1,-2],"texts":["a","\u00e9\n","c"]}}`, true},
		{"canonical tool call with name", rowToolCall, `{"type":"tool-call-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":1,"dt":[0,0],"id":"c1","name":"bash","args":["","{","}"]}}`, true},
		{"canonical tool call without name", rowToolCall, `{"type":"tool-call-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":1,"dt":[0],"id":"c1","args":["{","}"]}}`, true},
		{"spaces", rowText, `{"type":"text-chunks", "seq0":3,"time0":10,"data":{"turn":1,"step":2,"index":0,"dt":[1],"texts":["a","b"]}}`, false},
		{"keys reordered", rowText, `{"type":"text-chunks","time0":10,"seq0":3,"data":{"turn":1,"step":2,"index":0,"dt":[1],"texts":["a","b"]}}`, false},
		{"dt too short", rowText, `{"type":"text-chunks","seq0":3,"time0":10,"data":{"turn":1,"step":2,"index":0,"dt":[],"texts":["a","b"]}}`, false},
		{"dt too long", rowText, `{"type":"text-chunks","seq0":3,"time0":10,"data":{"turn":1,"step":2,"index":0,"dt":[1,2],"texts":["a","b"]}}`, false},
		{"no members", rowText, `{"type":"text-chunks","seq0":3,"time0":10,"data":{"turn":1,"step":2,"index":0,"dt":[],"texts":[]}}`, false},
		{"member not a string", rowText, `{"type":"text-chunks","seq0":3,"time0":10,"data":{"turn":1,"step":2,"index":0,"dt":[1],"texts":["a",2]}}`, false},
		{"bad escape", rowText, `{"type":"text-chunks","seq0":3,"time0":10,"data":{"turn":1,"step":2,"index":0,"dt":[1],"texts":["a","\x"]}}`, false},
		{"short unicode escape", rowText, `{"type":"text-chunks","seq0":3,"time0":10,"data":{"turn":1,"step":2,"index":0,"dt":[1],"texts":["a","\u12"]}}`, false},
		{"leading zero", rowText, `{"type":"text-chunks","seq0":03,"time0":10,"data":{"turn":1,"step":2,"index":0,"dt":[1],"texts":["a","b"]}}`, false},
		{"negative seq0", rowText, `{"type":"text-chunks","seq0":-1,"time0":10,"data":{"turn":1,"step":2,"index":0,"dt":[1],"texts":["a","b"]}}`, false},
		{"trailing data", rowText, `{"type":"text-chunks","seq0":3,"time0":10,"data":{"turn":1,"step":2,"index":0,"dt":[1],"texts":["a","b"]}}x`, false},
		{"float turn", rowText, `{"type":"text-chunks","seq0":3,"time0":10,"data":{"turn":1.0,"step":2,"index":0,"dt":[1],"texts":["a","b"]}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs, ok := fastExpandRow(c.tag, []byte(c.row))
			if ok != c.fast {
				t.Fatalf("fast path answered %v, want %v", ok, c.fast)
			}
			full, err := expandRow(c.tag, []byte(c.row))
			if !ok {
				return // deferred: the strict path decides (and may refuse)
			}
			if err != nil || len(full) != len(evs) {
				t.Fatalf("strict path disagrees: %v", err)
			}
			for i := range evs {
				if string(evs[i].Data) != string(full[i].Data) || evs[i].Seq != full[i].Seq || evs[i].Time != full[i].Time {
					t.Fatalf("event %d differs: %+v vs %+v", i, evs[i], full[i])
				}
				if !json.Valid(evs[i].Data) {
					t.Fatalf("event %d data is not JSON: %s", i, evs[i].Data)
				}
				if _, ok := fastClassify(&evs[i]); !ok {
					t.Fatalf("an expanded event is not recognised as packable: %s", evs[i].Data)
				}
			}
		})
	}
}

func TestFastClassifyDefers(t *testing.T) {
	for _, data := range []string{
		`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"},"x":1}`,
		`{"step":1,"turn":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}`,
		`{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}`,
		`{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"c","name":7,"argumentsDelta":"a"}}`,
		`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}} `,
		`{"turn":01,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}`,
	} {
		e := sessionlog.Event{Type: sessionlog.TypeAssistantChunk, Data: json.RawMessage(data)}
		if _, ok := fastClassify(&e); ok {
			t.Errorf("fast path accepted non-canonical data %s", data)
		}
	}
	e := sessionlog.Event{Type: sessionlog.TypeAssistantChunk, Data: json.RawMessage(`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}`), SurfaceOp: sessionlog.AppendOp()}
	if _, ok := fastClassify(&e); ok {
		t.Error("fast path accepted an event with a surfaceOp")
	}
}
