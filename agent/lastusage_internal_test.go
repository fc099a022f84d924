package agent

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// TestLastUsageMarkIsTheFullScan holds lastUsage with the mark track keeps
// (events seen in order, some appended unseen after) to lastUsage reading
// every event back (a zero mark), over random logs of messages with a
// usage, without one, with one that does not decode, and one that only
// mentions it.
func TestLastUsageMarkIsTheFullScan(t *testing.T) {
	datas := []string{
		`{"turn":1,"step":1,"message":{"role":"assistant","content":[]},"usage":{"inputTokens":10,"outputTokens":2}}`,
		`{"turn":1,"step":1,"message":{"role":"assistant","content":[]},"usage":{"inputTokens":30,"outputTokens":5,"cacheReadTokens":7}}`,
		`{"turn":1,"step":1,"message":{"role":"assistant","content":[]}}`,
		`{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"the \"usage\" member"}]}}`,
		`{"turn":1,"step":1,"message":{"role":"assistant","content":[]},"usage":"broken"}`,
	}
	r := rand.New(rand.NewPCG(36, 1))
	for range 3000 {
		n := r.IntN(12)
		events := make([]sessionlog.Event, n)
		for i := range events {
			typ := sessionlog.TypeAssistantMessage
			if r.IntN(4) == 0 {
				typ = sessionlog.TypeStepEnd
			}
			events[i] = sessionlog.Event{Type: typ, Seq: i, Data: json.RawMessage(datas[r.IntN(len(datas))])}
		}
		var mark usageMark
		seen := r.IntN(n + 1)
		for i := range events[:seen] {
			mark.see(&events[i])
		}
		got, gok := lastUsage(events, mark, 1000)
		want, wok := lastUsage(events, usageMark{}, 1000)
		if gok != wok || !reflect.DeepEqual(got, want) {
			t.Fatalf("%d events, %d seen: lastUsage %+v %v, reading every event %+v %v", n, seen, got, gok, want, wok)
		}
	}
}
