package scenario

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// twoCalls is a log whose derived script has two calls: a complete one and
// one that ended without a finish chunk.
const twoCalls = `{"type":"session","version":0,"id":"s","createdAt":1}
{"type":"assistant/chunk","seq":0,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}}
{"type":"assistant/chunk","seq":1,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}
{"type":"assistant/chunk","seq":2,"time":1,"data":{"turn":2,"step":1,"chunk":{"type":"text-delta","index":0,"text":"partial"}}}
`

func twoCallEvents(t testing.TB) []sessionlog.Event {
	t.Helper()
	d, err := jsonl.Decode(strings.NewReader(twoCalls), "derived.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return d.Events
}

// overrideCase is one replay.override.json document and the answer both of
// its readers must give.
type overrideCase struct {
	name, doc string
	// want is the error text, with DIR for the scenario folder; "" means
	// both readers accept the document.
	want string
	// beyond is an error only the provider gives: a patch past the derived
	// script, which the loader cannot know.
	beyond string
}

// overrideCases holds the four inputs the two former parsers disagreed on
// (first), then the rest of the format's malformed-input table.
var overrideCases = []overrideCase{
	// 1. The chunk dialect's tool-call-delta carries its call id
	//    (deepseek-harness packages/llm/llm/src/types.ts: `id: CallId`;
	//    llm.Chunk requires it).
	{name: "tool-call-delta without id", doc: `[{"kind":"chunks","chunks":[
  {"type":"block-start","index":0,"blockType":"tool-call"},
  {"type":"tool-call-delta","index":0,"name":"read","argumentsDelta":"{}"},
  {"type":"finish","reason":{"kind":"tool-calls"}}]}]`,
		want: `DIR/replay.override.json: [0].chunks[1]: tool-call-delta chunk: missing member "id" (line 3, column 3)`},
	// 2. A call without a finish chunk is a thrown or hung stream
	//    (the reference's README and deriveReplayScript): throw or hang.
	{name: "chunks entry without finish", doc: `[{"kind":"chunks","chunks":[{"type":"text-delta","index":0,"text":"a"}]}]`,
		want: `DIR/replay.override.json: [0].chunks: a chunks entry must end with a finish chunk (script a thrown or hung call as throw or hang) (line 1, column 28)`},
	// 3. No patches: the derived script as is (the reference's
	//    readOverrideDoc maps an empty array).
	{name: "empty patches", doc: `{"patches":[]}`},
	// 4. The reference's readReplayEntry: "code must be a non-empty string".
	{name: "empty code", doc: `[{"kind":"throw","chunks":[],"message":"x","code":""}]`,
		want: `DIR/replay.override.json: [0].code: must not be empty (line 1, column 51)`},

	{name: "empty script", doc: `[]`},
	{name: "fixture forms", doc: `[{"kind":"hang","chunks":[],"readyFile":".reel-stream-ready"},{"kind":"throw","chunks":[],"message":"m","code":"AUTH"},{"kind":"throw","message":"no code, no chunks"}]`},
	{name: "patch appends", doc: `{"patches":[{"at":2,"entry":{"kind":"chunks","chunks":[{"type":"finish","reason":{"kind":"stop"}}]}}]}`},
	{name: "patch beyond the script", doc: `{"patches":[{"at":0,"entry":{"kind":"hang"}},{"at":3,"entry":{"kind":"hang"}}]}`,
		beyond: `DIR/replay.override.json: patches[1].at: at must be 0…2 (the derived script has 2 calls; == length appends), got 3 (line 1, column 52)`},
	{name: "syntax", doc: "[\n  {\"kind\": \"hang\"},\n]", want: `DIR/replay.override.json: invalid JSON: invalid character ']' looking for beginning of value (line 3, column 1)`},
	{name: "trailing data", doc: `[] []`, want: `DIR/replay.override.json: invalid JSON: invalid character '[' after top-level value (line 1, column 4)`},
	{name: "not a document", doc: `7`, want: `DIR/replay.override.json: must be an array of entries or {"patches":[…]}, got number (line 1, column 1)`},
	{name: "object without patches", doc: `{}`, want: `DIR/replay.override.json: an override object requires field "patches" (line 1, column 1)`},
	{name: "object with more", doc: `{"patches":[],"script":[]}`, want: `DIR/replay.override.json: unknown field "script" (line 1, column 15)`},
	{name: "patches not an array", doc: `{"patches":{}}`, want: `DIR/replay.override.json: patches: expected array, got object (line 1, column 12)`},
	{name: "patch without entry", doc: `{"patches":[{"at":0}]}`, want: `DIR/replay.override.json: patches[0]: a patch requires field "entry" (line 1, column 13)`},
	{name: "negative at", doc: `{"patches":[{"at":-1,"entry":{"kind":"hang"}}]}`, want: `DIR/replay.override.json: patches[0].at: expected integer >= 0, got -1 (line 1, column 19)`},
	{name: "fractional at", doc: `{"patches":[{"at":1.5,"entry":{"kind":"hang"}}]}`, want: `DIR/replay.override.json: patches[0].at: expected integer, got 1.5 (line 1, column 19)`},
	{name: "duplicate at", doc: `{"patches":[{"at":0,"entry":{"kind":"hang"}},{"at":0,"entry":{"kind":"hang"}}]}`, want: `DIR/replay.override.json: patches[1].at: duplicate index 0 (line 1, column 52)`},
	{name: "entry not an object", doc: `[42]`, want: `DIR/replay.override.json: [0]: expected object, got number (line 1, column 2)`},
	{name: "missing kind", doc: `[{"message":"x"}]`, want: `DIR/replay.override.json: [0]: missing field "kind" (line 1, column 2)`},
	{name: "unknown kind", doc: `{"patches":[{"at":0,"entry":{"kind":"explode"}}]}`, want: `DIR/replay.override.json: patches[0].entry.kind: unknown kind "explode": want chunks, throw or hang (line 1, column 37)`},
	{name: "unknown member", doc: `[{"kind":"hang","wait":1}]`, want: `DIR/replay.override.json: [0]: unknown field "wait" (line 1, column 17)`},
	{name: "member of another kind", doc: `[{"kind":"hang","message":"x"}]`, want: `DIR/replay.override.json: [0]: field "message" is not allowed for a hang entry (line 1, column 17)`},
	{name: "chunks entry without chunks", doc: `[{"kind":"chunks"}]`, want: `DIR/replay.override.json: [0]: a chunks entry requires field "chunks" (line 1, column 2)`},
	{name: "empty chunks", doc: `[{"kind":"chunks","chunks":[]}]`, want: `DIR/replay.override.json: [0].chunks: a chunks entry must end with a finish chunk (script a thrown or hung call as throw or hang) (line 1, column 28)`},
	{name: "throw without message", doc: `[{"kind":"throw","code":"AUTH"}]`, want: `DIR/replay.override.json: [0]: a throw entry requires field "message" (line 1, column 2)`},
	{name: "empty message", doc: `[{"kind":"throw","message":""}]`, want: `DIR/replay.override.json: [0].message: must not be empty (line 1, column 28)`},
	{name: "duplicate member", doc: `[{"kind":"hang","kind":"throw"}]`, want: `DIR/replay.override.json: [0]: duplicate field "kind" (line 1, column 17)`},
	{name: "empty readyFile", doc: `[{"kind":"hang","readyFile":""}]`, want: `DIR/replay.override.json: [0].readyFile: must not be empty (line 1, column 29)`},
	{name: "absolute readyFile", doc: `[{"kind":"hang","readyFile":"/tmp/r"}]`, want: `DIR/replay.override.json: [0].readyFile: path "/tmp/r" is absolute; it must be relative to the session's cwd (line 1, column 29)`},
	{name: "escaping readyFile", doc: `[{"kind":"hang","readyFile":"a/../../r"}]`, want: `DIR/replay.override.json: [0].readyFile: path "a/../../r" escapes the session's cwd (line 1, column 29)`},
	{name: "chunks not an array", doc: `[{"kind":"hang","chunks":{}}]`, want: `DIR/replay.override.json: [0].chunks: expected array, got object (line 1, column 26)`},
	{name: "chunk not an object", doc: `[{"kind":"hang","chunks":["text"]}]`, want: `DIR/replay.override.json: [0].chunks[0]: expected object, got string (line 1, column 27)`},
	{name: "unknown chunk type", doc: `[{"kind":"hang","chunks":[{"type":"ping"}]}]`, want: `DIR/replay.override.json: [0].chunks[0].type: unknown chunk type "ping" (line 1, column 35)`},
	{name: "chunk without type", doc: `[{"kind":"hang","chunks":[{"index":0}]}]`, want: `DIR/replay.override.json: [0].chunks[0]: chunk: missing member "type" (line 1, column 27)`},
	{name: "chunk member of another type", doc: `[{"kind":"hang","chunks":[{"type":"text-delta","index":0,"text":"a","name":"b"}]}]`, want: `DIR/replay.override.json: [0].chunks[0]: text-delta chunk: unknown member "name" (line 1, column 27)`},
	{name: "chunk duplicate member", doc: `[{"kind":"hang","chunks":[{"type":"text-delta","index":0,"text":"a","text":"b"}]}]`, want: `DIR/replay.override.json: [0].chunks[0]: duplicate field "text" (line 1, column 69)`},
	{name: "duplicate member deep in a chunk", doc: `[{"kind":"hang","chunks":[{"type":"usage","usage":{"inputTokens":1,"outputTokens":2,"inputTokens":3}}]}]`, want: `DIR/replay.override.json: [0].chunks[0].usage: duplicate field "inputTokens" (line 1, column 85)`},
	{name: "negative index", doc: `[{"kind":"hang","chunks":[{"type":"text-delta","index":-1,"text":"a"}]}]`, want: `DIR/replay.override.json: [0].chunks[0]: text-delta chunk: member "index": out of range: -1 (line 1, column 27)`},
	{name: "unknown block type", doc: `[{"kind":"hang","chunks":[{"type":"block-start","index":0,"blockType":"image"}]}]`, want: `DIR/replay.override.json: [0].chunks[0].blockType: unknown block type "image": want text, reasoning or tool-call (line 1, column 71)`},
	{name: "unknown finished block type", doc: `[{"kind":"hang","chunks":[{"type":"block-end","index":0,"block":{"type":"image","data":"x"}}]}]`, want: `DIR/replay.override.json: [0].chunks[0].block.type: unknown block type "image": want text, reasoning or tool-call (line 1, column 73)`},
	{name: "tool block without id", doc: `[{"kind":"hang","chunks":[{"type":"block-end","index":0,"block":{"type":"tool-call","name":"x","arguments":"{}"}}]}]`, want: `DIR/replay.override.json: [0].chunks[0]: block-end chunk: tool-call block: missing member "id" (line 1, column 27)`},
	{name: "failure without code", doc: `[{"kind":"chunks","chunks":[{"type":"finish","reason":{"kind":"error","failure":{"message":"m"}}}]}]`, want: `DIR/replay.override.json: [0].chunks[0]: finish chunk: reason: failure: missing member "code" (line 1, column 29)`},
}

// TestOverrideReaders runs the override table through both readers of the
// format: the scenario loader (Load of a folder holding the document) and
// the replay provider (replay.Load over a derived script, as reel acp
// --replay-override does). Both must give the same answer with the same
// text, and, for an accepted document, the loader's parse applied to the
// derived script must be the provider's script.
func TestOverrideReaders(t *testing.T) {
	events := twoCallEvents(t)
	derived, err := replay.Derive(events)
	if err != nil || len(derived) != 2 {
		t.Fatalf("derived script: %d calls, %v", len(derived), err)
	}
	for _, c := range overrideCases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sc")
			writeTree(t, dir, map[string]string{InputFile: minimalInput, OverrideFile: c.doc})
			path := filepath.Join(dir, OverrideFile)
			sc, lerr := Load(dir)
			script, perr := replay.Load(events, path)
			text := func(err error) string {
				if err == nil {
					return ""
				}
				var se *Error
				if !errors.As(err, &se) || se.File != path || se.Line == 0 {
					t.Errorf("error %v (%T) is not a positioned *Error for %s", err, err, path)
				}
				return strings.ReplaceAll(err.Error(), dir, "DIR")
			}
			if got := text(lerr); got != c.want {
				t.Errorf("loader:\n got: %s\nwant: %s", got, c.want)
			}
			wantProvider := c.want
			if c.beyond != "" {
				wantProvider = c.beyond
			}
			if got := text(perr); got != wantProvider {
				t.Errorf("provider:\n got: %s\nwant: %s", got, wantProvider)
			}
			if lerr != nil || perr != nil {
				return
			}
			applied, err := sc.Override.Apply(derived)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(applied, script) {
				t.Errorf("the loader's override gives\n%+v\nthe provider's\n%+v", applied, script)
			}
		})
	}
}

// TestOverrideFiles checks every override of reel's fixtures through both
// readers: accepted, and the same script either way.
func TestOverrideFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "*", OverrideFile))
	if len(files) == 0 {
		t.Fatal("no fixture overrides")
	}
	bothReaders(t, files)
}

// TestCorpusOverrideFiles does the same for the corpus's overrides.
func TestCorpusOverrideFiles(t *testing.T) {
	bothReaders(t, corpustest.Files(t, filepath.Join("*", OverrideFile)))
}

func bothReaders(t *testing.T, files []string) {
	for _, f := range files {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			sc, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			d, err := jsonl.ReadFile(sc.Sessions[0])
			if err != nil {
				t.Fatal(err)
			}
			derived, derr := replay.Derive(d.Events)
			script, err := replay.Load(d.Events, f)
			if err != nil || derr != nil {
				t.Fatalf("provider: %v (derive: %v)", err, derr)
			}
			applied, err := sc.Override.Apply(derived)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(applied, script) {
				t.Errorf("the loader's override gives\n%+v\nthe provider's\n%+v", applied, script)
			}
			if len(script) == 0 {
				t.Error("empty script")
			}
		})
	}
}
