package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// FuzzLoadInput checks that ParseInput never panics, that every refusal is
// an *Error naming the file, and that an accepted input survives a
// marshal → parse round trip unchanged.
func FuzzLoadInput(f *testing.F) {
	f.Add([]byte(`{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"hi"}]}`))
	f.Add([]byte(`{"steps":[{"op":"promptAndCancel","text":"x","waitForFile":{"path":".r"}}],"permissionAnswers":[{"kind":"allow_once"}]}`))
	f.Add([]byte(`{"steps":[{"op":"prompt","txt":"x"}]}`))
	f.Add([]byte(`{"steps":[{"op":"newSession"},{"op":"forkSession","atAnswer":2},{"op":"forkSession","session":1,"atSeq":9}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseInput("input.json", data)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != "input.json" {
				t.Fatalf("error %v (%T) is not an *Error for input.json", err, err)
			}
			return
		}
		out, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("marshal %+v: %v", in, err)
		}
		again, err := ParseInput("again.json", out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		if !reflect.DeepEqual(in, again) {
			t.Fatalf("round trip differs:\n%+v\n%+v", in, again)
		}
	})
}

// FuzzParseOverride runs arbitrary replay.override.json content through
// both readers of the format, the scenario loader (Load) and the replay
// provider (replay.Load), which share replay.ParseOverride: neither may
// panic, every refusal is an *Error naming the file, and both give the same
// answer with the same text (the provider alone also refuses a patch beyond
// the derived script, at its "at").
func FuzzParseOverride(f *testing.F) {
	f.Add([]byte(`[{"kind":"throw","chunks":[],"message":"simulated provider error (HTTP 401)","code":"AUTH"}]`))
	f.Add([]byte(`[{"kind":"hang","readyFile":".dsh-snapshot-stream-ready"}]`))
	f.Add([]byte(`{"patches":[{"at":1,"entry":{"kind":"chunks","chunks":[{"type":"finish","reason":{"kind":"stop"}}]}}]}`))
	events := derivedEvents(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "sc")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, OverrideFile)
		for name, content := range map[string][]byte{InputFile: []byte(minimalInput), OverrideFile: data} {
			if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sc, lerr := Load(dir)
		script, rerr := replay.Load(events, path)
		for _, err := range []error{lerr, rerr} {
			var se *Error
			if err != nil && (!errors.As(err, &se) || se.File != path) {
				t.Fatalf("error %v (%T) is not an *Error for %s", err, err, path)
			}
		}
		switch {
		case lerr != nil && (rerr == nil || rerr.Error() != lerr.Error()):
			t.Fatalf("the loader refuses with\n%v\nthe provider with\n%v", lerr, rerr)
		case lerr == nil && rerr != nil:
			var se *Error
			if errors.As(rerr, &se); !strings.HasSuffix(se.Path, ".at") || !strings.Contains(se.Msg, "at must be 0…") {
				t.Fatalf("the loader accepts, the provider refuses with %v", rerr)
			}
		case lerr == nil:
			if sc.Override == nil {
				t.Fatal("an accepted override was not kept")
			}
			for i, e := range script {
				if e.Kind == replay.KindChunks && (len(e.Chunks) == 0 || e.Chunks[len(e.Chunks)-1].Type != llm.ChunkFinish) {
					t.Fatalf("script entry %d is a chunks entry without a final finish", i)
				}
			}
		}
	})
}

// derivedEvents is a small log whose derived script has two calls.
func derivedEvents(f *testing.F) []sessionlog.Event {
	const log = `{"type":"session","version":0,"id":"s","createdAt":1}
{"type":"assistant/chunk","seq":0,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}}
{"type":"assistant/chunk","seq":1,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}
{"type":"assistant/chunk","seq":2,"time":1,"data":{"turn":2,"step":1,"chunk":{"type":"text-delta","index":0,"text":"partial"}}}
`
	d, err := jsonl.Decode(strings.NewReader(log), "derived.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	return d.Events
}
