package replay_test

import (
	"bytes"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// FuzzDerive derives replay scripts from arbitrary logs and applies
// arbitrary override documents: neither may panic, and a derived script's
// chunks entries always end with a finish chunk.
func FuzzDerive(f *testing.F) {
	const log = `{"type":"session","version":0,"id":"s","createdAt":1}
{"type":"assistant/chunk","seq":0,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}
{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[0,0],"texts":["a","b","c"]}}
{"type":"assistant/chunk","seq":4,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}
{"type":"compaction/summary","seq":5,"time":1,"data":{"llmStreamCall":true,"rawOutput":[{"type":"text","text":"sum"}],"usage":{"inputTokens":1,"outputTokens":2}}}
{"type":"assistant/chunk","seq":6,"time":1,"data":{"turn":2,"step":1,"chunk":{"type":"text-delta","index":0,"text":"partial"}}}
`
	f.Add([]byte(log), []byte(`[{"kind":"hang","readyFile":"r"}]`))
	f.Add([]byte(log), []byte(`{"patches":[{"at":2,"entry":{"kind":"throw","message":"x","code":"AUTH"}}]}`))
	f.Add([]byte(log), []byte(`{"patches":[{"at":9,"entry":{"kind":"hang"}}]}`))
	f.Add([]byte(`{"type":"session","version":0,"id":"s","createdAt":1}`+"\n"), []byte(`[]`))
	f.Fuzz(func(t *testing.T, logBytes, override []byte) {
		d, err := jsonl.Decode(bytes.NewReader(logBytes), "fuzz.jsonl")
		if err != nil {
			return
		}
		script, err := replay.Derive(d.Events)
		if err != nil {
			return
		}
		for i, e := range script {
			if e.Kind == replay.KindChunks && (len(e.Chunks) == 0 || e.Chunks[len(e.Chunks)-1].Type != llm.ChunkFinish) {
				t.Fatalf("entry %d: a chunks entry without a final finish chunk", i)
			}
		}
		_, _ = replay.ApplyOverride(script, override, "fuzz.override.json")
	})
}
