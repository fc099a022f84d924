package replay_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/internal/strictjson"
)

// encodeOverride writes an override back as a whole-script document, each
// chunk in its canonical form.
func encodeOverride(t *testing.T, entries []replay.Entry, chunksGiven []bool) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, e := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		m := map[string]any{"kind": e.Kind}
		if e.Message != "" {
			m["message"] = e.Message
		}
		if e.Code != "" {
			m["code"] = e.Code
		}
		if e.ReadyFile != "" {
			m["readyFile"] = e.ReadyFile
		}
		if chunksGiven[i] {
			chunks := []json.RawMessage{}
			for _, c := range e.Chunks {
				raw, err := c.AppendJSON(nil)
				if err != nil {
					t.Fatalf("an accepted chunk does not encode: %+v: %v", c, err)
				}
				chunks = append(chunks, raw)
			}
			m["chunks"] = chunks
		}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// FuzzOverrideRoundTrip parses arbitrary override documents: ParseOverride
// never panics, a refusal is a positioned *strictjson.Error, an accepted
// chunks entry ends with a finish chunk, and an accepted document written
// back (chunks in their canonical encoding) parses to the same entries.
// The seeds include every committed fixture override.
func FuzzOverrideRoundTrip(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "fixtures", "*", "replay.override.json"))
	for _, file := range files {
		if raw, err := os.ReadFile(file); err == nil {
			f.Add(raw)
		}
	}
	f.Add([]byte(`[{"kind":"chunks","chunks":[{"type":"block-start","index":0,"blockType":"tool-call"},{"type":"tool-call-delta","index":0,"id":"c","name":"read","argumentsDelta":"{}"},{"type":"block-end","index":0,"block":{"type":"tool-call","id":"c","name":"read","arguments":"{}"}},{"type":"usage","usage":{"inputTokens":1,"outputTokens":2,"cacheReadTokens":0}},{"type":"finish","reason":{"kind":"error","failure":{"message":"m","code":"AUTH"}}}]}]`))
	f.Add([]byte(`{"patches":[{"at":1,"entry":{"kind":"hang","chunks":[{"type":"reasoning-delta","index":0,"text":"\u2028"}]}}]}`))
	f.Add([]byte(`[{"kind":"chunks","chunks":[{"type":"text-delta","index":0,"text":"a"}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := replay.ParseOverride("fuzz.json", data)
		if err != nil {
			var se *strictjson.Error
			if !errors.As(err, &se) || se.File != "fuzz.json" || se.Line == 0 {
				t.Fatalf("error %v (%T) is not a positioned *strictjson.Error", err, err)
			}
			return
		}
		entries := o.Entries()
		given := make([]bool, len(entries))
		for i, e := range entries {
			given[i] = !e.Inherits()
			if e.Kind == replay.KindChunks && (len(e.Chunks) == 0 || e.Chunks[len(e.Chunks)-1].Type != llm.ChunkFinish) {
				t.Fatalf("entry %d: a chunks entry without a final finish", i)
			}
		}
		again, err := replay.ParseOverride("again.json", encodeOverride(t, entries, given))
		if err != nil {
			t.Fatalf("the written-back override is refused: %v", err)
		}
		a, _ := (&replay.Override{Replace: true, Script: entries}).Apply(nil)
		b, _ := again.Apply(nil)
		for i := range a {
			a[i].Where, b[i].Where = "", ""
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip differs:\n%+v\n%+v", a, b)
		}
	})
}
