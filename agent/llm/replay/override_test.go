package replay_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/internal/strictjson"
)

// TestParseOverrideMalformed is ParseOverride's malformed-input table: the
// four inputs reel's two former parsers disagreed on first, then the rest.
// Each refusal is a positioned *strictjson.Error of the expected class. (The
// same documents through both readers, the scenario loader and Load, are
// harness/scenario's TestOverrideReaders.)
func TestParseOverrideMalformed(t *testing.T) {
	const file = "o.json"
	tests := []struct {
		name, doc, want string
		class           error
	}{
		{"tool-call-delta without id", `[{"kind":"hang","chunks":[{"type":"tool-call-delta","index":0,"argumentsDelta":""}]}]`,
			`o.json: [0].chunks[0]: tool-call-delta chunk: missing member "id" (line 1, column 27)`, strictjson.ErrBadValue},
		{"chunks entry without finish", `{"patches":[{"at":0,"entry":{"kind":"chunks","chunks":[{"type":"usage","usage":{"inputTokens":1,"outputTokens":1}}]}}]}`,
			`o.json: patches[0].entry.chunks: a chunks entry must end with a finish chunk (script a thrown or hung call as throw or hang) (line 1, column 55)`, strictjson.ErrBadValue},
		{"empty code", `[{"kind":"throw","message":"m","code":""}]`,
			`o.json: [0].code: must not be empty (line 1, column 39)`, strictjson.ErrBadValue},
		{"not JSON", `[{"kind":`, `o.json: invalid JSON: unexpected end of JSON input (line 1, column 9)`, strictjson.ErrSyntax},
		{"string document", `"x"`, `o.json: must be an array of entries or {"patches":[…]}, got string (line 1, column 1)`, strictjson.ErrBadValue},
		{"null document", ` null`, `o.json: must be an array of entries or {"patches":[…]}, got null (line 1, column 2)`, strictjson.ErrBadValue},
		{"patch with more", `{"patches":[{"at":0,"entry":{"kind":"hang"},"why":"x"}]}`, `o.json: patches[0]: unknown field "why" (line 1, column 45)`, strictjson.ErrUnknownField},
		{"patch without at", `{"patches":[{"entry":{"kind":"hang"}}]}`, `o.json: patches[0]: a patch requires field "at" (line 1, column 13)`, strictjson.ErrMissingField},
		{"at as string", `{"patches":[{"at":"0","entry":{"kind":"hang"}}]}`, `o.json: patches[0].at: expected integer, got string (line 1, column 19)`, strictjson.ErrBadValue},
		{"kind not a string", `[{"kind":1}]`, `o.json: [0].kind: expected string, got number (line 1, column 10)`, strictjson.ErrBadValue},
		{"empty kind", `[{"kind":""}]`, `o.json: [0].kind: must not be empty (line 1, column 10)`, strictjson.ErrBadValue},
		{"incomplete is not a kind", `[{"kind":"incomplete"}]`, `o.json: [0].kind: unknown kind "incomplete": want chunks, throw or hang (line 1, column 10)`, strictjson.ErrBadValue},
		{"code on a chunks entry", `[{"kind":"chunks","code":"X","chunks":[]}]`, `o.json: [0]: field "code" is not allowed for a chunks entry (line 1, column 19)`, strictjson.ErrUnknownField},
		{"readyFile on a throw", `[{"kind":"throw","message":"m","readyFile":"r"}]`, `o.json: [0]: field "readyFile" is not allowed for a throw entry (line 1, column 32)`, strictjson.ErrUnknownField},
		{"message not a string", `[{"kind":"throw","message":7}]`, `o.json: [0].message: expected string, got number (line 1, column 28)`, strictjson.ErrBadValue},
		{"readyFile escaping", `[{"kind":"hang","readyFile":"../r"}]`, `o.json: [0].readyFile: path "../r" escapes the session's cwd (line 1, column 29)`, strictjson.ErrUnsafePath},
		{"chunk index as string", `[{"kind":"hang","chunks":[{"type":"text-delta","index":"0","text":"a"}]}]`, `o.json: [0].chunks[0]: text-delta chunk: member "index": want an integer, got "0" (line 1, column 27)`, strictjson.ErrBadValue},
		{"usage tokens fractional", `[{"kind":"hang","chunks":[{"type":"usage","usage":{"inputTokens":1.5,"outputTokens":1}}]}]`, `o.json: [0].chunks[0]: usage chunk: usage: member "inputTokens": want an integer, got 1.5 (line 1, column 27)`, strictjson.ErrBadValue},
		{"second line", "[\n {\"kind\":\"hang\"},\n {\"kind\":\"throw\"}\n]", `o.json: [1]: a throw entry requires field "message" (line 3, column 2)`, strictjson.ErrMissingField},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := replay.ParseOverride(file, []byte(tt.doc))
			if err == nil {
				t.Fatalf("accepted: %+v", o)
			}
			if err.Error() != tt.want {
				t.Errorf("error text\n got: %s\nwant: %s", err, tt.want)
			}
			var se *strictjson.Error
			if !errors.As(err, &se) || se.File != file || se.Line == 0 {
				t.Errorf("error %#v is not a positioned *strictjson.Error for %s", err, file)
			}
			if !errors.Is(err, tt.class) {
				t.Errorf("error %v is not %v", err, tt.class)
			}
			// ApplyOverride (what Load calls) gives the same refusal.
			if _, aerr := replay.ApplyOverride(nil, []byte(tt.doc), file); aerr == nil || aerr.Error() != err.Error() {
				t.Errorf("ApplyOverride: %v", aerr)
			}
		})
	}
}

func TestParseOverrideForms(t *testing.T) {
	fin := llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}}
	text := llm.Chunk{Type: llm.ChunkTextDelta, Text: "rec"}
	derived := []replay.Entry{
		{Kind: replay.KindChunks, Chunks: []llm.Chunk{text, fin}, Where: "turn 1 step 1"},
		{Kind: replay.KindIncomplete, Chunks: []llm.Chunk{text}, Where: "turn 2 step 1"},
	}

	// Patches: a hang without chunks inherits the recorded chunks (finish
	// excluded); "chunks": [] hangs at once; at == len appends.
	o, err := replay.ParseOverride("o.json", []byte(`{"patches":[
		{"at":1,"entry":{"kind":"hang","readyFile":"dir/r"}},
		{"at":0,"entry":{"kind":"hang","chunks":[]}},
		{"at":2,"entry":{"kind":"throw","message":"m","code":"AUTH","chunks":[{"type":"text-delta","index":0,"text":"p"}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if o.Replace || len(o.Patches) != 3 || o.Patches[0].At != 1 || o.Patches[1].At != 0 || o.Patches[2].At != 2 {
		t.Fatalf("patches: %+v", o)
	}
	if got := o.Entries(); len(got) != 3 || got[0].Kind != replay.KindHang || got[2].Kind != replay.KindThrow {
		t.Errorf("Entries = %+v", got)
	}
	got, err := o.Apply(derived)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("applied: %+v", got)
	}
	if got[0].Kind != replay.KindHang || len(got[0].Chunks) != 0 {
		t.Errorf("chunks: [] hang = %+v", got[0])
	}
	if got[1].Kind != replay.KindHang || got[1].ReadyFile != "dir/r" || !reflect.DeepEqual(got[1].Chunks, []llm.Chunk{text}) {
		t.Errorf("inheriting hang = %+v", got[1])
	}
	if got[2].Message != "m" || got[2].Code != "AUTH" || len(got[2].Chunks) != 1 || got[2].Chunks[0].Text != "p" {
		t.Errorf("appended throw = %+v", got[2])
	}
	if derived[1].Kind != replay.KindIncomplete {
		t.Error("Apply changed the derived script")
	}

	// The whole-script form replaces it; [] is a script without calls.
	o, err = replay.ParseOverride("o.json", []byte(`[{"kind":"hang"},{"kind":"chunks","chunks":[{"type":"finish","reason":{"kind":"stop"}}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	got, err = o.Apply(derived)
	if err != nil || len(got) != 2 || !reflect.DeepEqual(got[0].Chunks, []llm.Chunk{text}) || got[1].Kind != replay.KindChunks {
		t.Errorf("whole script: %+v %v", got, err)
	}
	if got[0].Where != "o.json: [0]" {
		t.Errorf("Where = %q", got[0].Where)
	}
	for _, doc := range []string{`[]`, `{"patches":[]}`} {
		o, err := replay.ParseOverride("o.json", []byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		got, err := o.Apply(derived)
		want := 0
		if !o.Replace {
			want = len(derived)
		}
		if err != nil || len(got) != want {
			t.Errorf("%s: %d entries, %v; want %d", doc, len(got), err, want)
		}
	}

	// A patch beyond the derived script is refused at its "at".
	o, err = replay.ParseOverride("o.json", []byte(`{"patches":[{"at":3,"entry":{"kind":"hang"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Apply(derived)
	var se *strictjson.Error
	if !errors.As(err, &se) || se.Path != "patches[0].at" || se.Line != 1 || se.Column != 19 || !errors.Is(err, strictjson.ErrBadValue) {
		t.Errorf("beyond: %v", err)
	}

	// So is one of an Override built by hand.
	_, err = (&replay.Override{Patches: []replay.Patch{{At: 0}, {At: 9, Entry: replay.Entry{Kind: replay.KindHang}}}}).Apply(derived)
	if err == nil || err.Error() != "patches[1].at: at must be 0…2 (the derived script has 2 calls; == length appends), got 9" {
		t.Errorf("beyond, by hand: %v", err)
	}
}
