package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// TestLineOfEveryEvent checks LineOf against the lines themselves: logs
// of single events and packed rows in random order, each event's line
// found by decoding the file line by line.
func TestLineOfEveryEvent(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 53))
	for round := range 200 {
		h := sessionlog.NewHeader("l", 1, "")
		var evs []sessionlog.Event
		add := func(typ, data string) {
			evs = append(evs, sessionlog.Event{Type: typ, Seq: len(evs), Time: 1, Data: json.RawMessage(data)})
		}
		for k := range r.IntN(12) {
			if r.IntN(2) == 0 {
				add("turn/start", fmt.Sprintf(`{"turn":%d}`, k))
				continue
			}
			for j := range r.IntN(6) { // a run of 3 or more deltas is a row
				add("assistant/chunk", fmt.Sprintf(`{"turn":1,"step":%d,"chunk":{"type":"text-delta","index":0,"text":"t%d"}}`, k, j))
			}
		}
		var b bytes.Buffer
		if err := Encode(&b, h, evs); err != nil {
			t.Fatal(err)
		}
		d, err := Decode(bytes.NewReader(b.Bytes()), "l")
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]int{}
		seq := 0
		for i, line := range bytes.Split(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte("\n"))[1:] {
			got, err := decodeRecord(line)
			if err != nil {
				t.Fatal(err)
			}
			for range got {
				want[seq] = i + 2
				seq++
			}
		}
		for s := -1; s <= len(evs); s++ {
			if d.LineOf(s) != want[s] {
				t.Fatalf("round %d: LineOf(%d) = %d, the event is on line %d\n%s", round, s, d.LineOf(s), want[s], b.Bytes())
			}
		}
	}
}
