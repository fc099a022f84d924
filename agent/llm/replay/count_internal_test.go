package replay

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// chunkCases are chunk data at the edges of what the fast read accepts.
var chunkCases = []string{
	`{"turn":1,"step":2,"chunk":{"type":"finish","reason":{"kind":"stop"}}}`,
	`{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"say \"type\":\"finish\" }"}}`,
	`{"chunk":{"text":"\"type\":\"x\"","type":"text-delta"},"step":3,"turn":7}`,
	`{"turn":1,"step":2,"chunk":{"type":"fin\u0069sh"}}`,
	`{"Turn":1,"STEP":2,"Chunk":{"TYPE":"finish"}}`,
	`{"turn":1,"step":2,"turn":5,"chunk":{"type":"a","type":"finish"}}`,
	`{"t\u0075rn":4,"step":2,"chunk":{"type":"finish"}}`,
	`{"turn":1.5,"step":2,"chunk":{"type":"finish"}}`,
	`{"turn":1e2,"step":2,"chunk":{"type":"finish"}}`,
	`{"turn":-3,"step":-0,"chunk":{"type":"finish"}}`,
	`{"turn":99999999999999999999,"step":2,"chunk":{"type":"finish"}}`,
	`{"turn":"1","step":2,"chunk":{"type":"finish"}}`,
	`{"turn":null,"step":2,"chunk":{"type":"finish"}}`,
	`{"turn":1,"step":2,"chunk":null}`,
	`{"turn":1,"step":2,"chunk":"finish"}`,
	`{"turn":1,"step":2,"chunk":{"type":null}}`,
	`{"turn":1,"step":2,"chunk":{"type":7}}`,
	`{"turn":1,"step":2,"chunk":{"type":"bad \xff"}}`,
	`{"turn":1,"step":2}`,
	`{"step":2,"chunk":{"type":"finish"}}`,
	`{"turn":1,"step":2,"chunk":{}}`,
	`{"turn":1,"step":2,"chunk":{"type":"finish"}`,
	`{"turn":1,"step":2,"chunk":{"type":"finish"}}x`,
	` { "turn" : 1 , "step" : 2 , "chunk" : { "type" : "finish" } } `,
	`[]`, `null`, `{}`, `"x"`, ``,
}

// checkChunkHead fails when the fast read accepts data and reads other
// values than json.Unmarshal does (or json.Unmarshal refuses the data).
func checkChunkHead(t *testing.T, data []byte) {
	t.Helper()
	fast, ok := chunkHeadFast(data)
	if !ok {
		return
	}
	var want chunkHead
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("fast read accepted %q, json.Unmarshal: %v", data, err)
	}
	if fast != want {
		t.Fatalf("%q: fast read %+v, json.Unmarshal %+v", data, fast, want)
	}
}

// TestChunkHeadFastIsUnmarshals holds chunkHeadFast to json.Unmarshal over
// the edge cases and random chunk-shaped texts, and checks that the
// plain shapes take the fast read at all.
func TestChunkHeadFastIsUnmarshals(t *testing.T) {
	for _, s := range chunkCases {
		checkChunkHead(t, []byte(s))
	}
	for _, s := range chunkCases[:3] {
		if _, ok := chunkHeadFast([]byte(s)); !ok {
			t.Errorf("%s: not read by the fast path", s)
		}
	}
	r := rand.New(rand.NewPCG(34, 31))
	parts := []string{`{`, `}`, `"turn":`, `"step":`, `"chunk":`, `"type":`, `"Type":`, `"finish"`, `"text-delta"`, `"a\"b"`, `"\u0066"`, `1`, `-2`, `1.0`, `null`, `,`, `"x":`, `[`, `]`, ` `}
	for range 100000 {
		var sb strings.Builder
		for range r.IntN(14) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		checkChunkHead(t, []byte(sb.String()))
	}
}

// FuzzChunkHeadFast holds chunkHeadFast to json.Unmarshal on any input.
func FuzzChunkHeadFast(f *testing.F) {
	for _, s := range chunkCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkChunkHead(t, data) })
}
