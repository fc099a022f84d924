package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/internal/corpustest"
)

// corpusDir is the conformance corpus, ../shared/corpus/dsh-acp-snapshots
// beside the repository root; see corpustest for what a missing one does.
func corpusDir(t *testing.T) string {
	t.Helper()
	return corpustest.Dir(t)
}

func TestCorpusLoads(t *testing.T) {
	root := corpusDir(t)
	dirs, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatalf("no scenarios under %s", root)
	}
	orphans, err := Orphans(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(orphans) != 0 {
		t.Errorf("orphan folders in the corpus: %v", orphans)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			sc, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !sc.HasSession() {
				t.Errorf("corpus scenario without session.jsonl")
			}
			if _, err := os.Stat(filepath.Join(dir, OverrideFile)); err == nil && sc.Override == nil {
				t.Errorf("override file present but not loaded")
			}
			// Round trip: marshal the parsed input and parse it again.
			data, err := json.Marshal(sc.Input)
			if err != nil {
				t.Fatal(err)
			}
			again, err := ParseInput("roundtrip.json", data)
			if err != nil {
				t.Fatalf("re-parse of %s: %v", data, err)
			}
			if !reflect.DeepEqual(sc.Input, again) {
				t.Errorf("round trip differs:\n%+v\n%+v", sc.Input, again)
			}
			if sc.Override == nil {
				return
			}
			// Every hang's ready file is awaited by some step.
			for i, o := range sc.Override.Entries() {
				if o.Kind != replay.KindHang || o.ReadyFile == "" {
					continue
				}
				awaited := false
				for _, s := range sc.Input.Steps {
					awaited = awaited || s.Path == o.ReadyFile || (s.WaitForFile != nil && s.WaitForFile.Path == o.ReadyFile)
				}
				if !awaited {
					t.Errorf("override entry %d: readyFile %q is awaited by no step", i, o.ReadyFile)
				}
			}
		})
	}
}

func TestParseInputErrors(t *testing.T) {
	const file = "fixtures/x/input.json"
	tests := []struct {
		name, in, want string
		kind           error
	}{
		{"syntax", "{\n  \"steps\": [\n    {\"op\": \"initialize\"},\n  ]\n}", `fixtures/x/input.json: invalid JSON: invalid character ']' looking for beginning of value (line 4, column 3)`, ErrSyntax},
		{"not an object", `[]`, `fixtures/x/input.json: expected object, got array (line 1, column 1)`, ErrBadValue},
		{"trailing data", `{"steps":[{"op":"initialize"}]} {}`, `fixtures/x/input.json: invalid JSON: invalid character '{' after top-level value (line 1, column 33)`, ErrSyntax},
		{"unknown top-level field", `{"steps":[{"op":"initialize"}],"cwd":"/tmp"}`, `fixtures/x/input.json: unknown field "cwd" (line 1, column 32)`, ErrUnknownField},
		{"missing steps", `{"permissionAnswers":[]}`, `fixtures/x/input.json: input requires field "steps" (line 1, column 1)`, ErrMissingField},
		{"empty steps", `{"steps":[]}`, `fixtures/x/input.json: steps: must not be empty (line 1, column 10)`, ErrBadValue},
		{"steps not array", `{"steps":{}}`, `fixtures/x/input.json: steps: expected array, got object (line 1, column 10)`, ErrBadValue},
		{"unknown step field", `{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","txt":"hi"}]}`, `fixtures/x/input.json: steps[2]: unknown field "txt" (line 1, column 66)`, ErrUnknownField},
		{"field not allowed for op", `{"steps":[{"op":"prompt","text":"hi","mode":"read-only"}]}`, `fixtures/x/input.json: steps[0]: field "mode" is not allowed for op "prompt" (line 1, column 38)`, ErrUnknownField},
		{"missing required field", `{"steps":[{"op":"prompt"}]}`, `fixtures/x/input.json: steps[0]: op "prompt" requires field "text" (line 1, column 11)`, ErrMissingField},
		{"missing op", `{"steps":[{"text":"hi"}]}`, `fixtures/x/input.json: steps[0]: missing field "op" (line 1, column 11)`, ErrMissingField},
		{"unknown op", `{"steps":[{"op":"promt","text":"hi"}]}`, `fixtures/x/input.json: steps[0].op: unknown op "promt" (line 1, column 17)`, ErrUnknownOp},
		{"op not string", `{"steps":[{"op":7}]}`, `fixtures/x/input.json: steps[0].op: expected string, got number (line 1, column 17)`, ErrBadValue},
		{"text not string", `{"steps":[{"op":"prompt","text":null}]}`, `fixtures/x/input.json: steps[0].text: expected string, got null (line 1, column 33)`, ErrBadValue},
		{"duplicate key", `{"steps":[{"op":"prompt","text":"a","text":"b"}]}`, `fixtures/x/input.json: steps[0]: duplicate field "text" (line 1, column 37)`, ErrDuplicateField},
		{"absolute waitForFile", `{"steps":[{"op":"promptAndCancel","text":"x","waitForFile":{"path":"/etc/passwd"}}]}`, `fixtures/x/input.json: steps[0].waitForFile.path: path "/etc/passwd" is absolute; it must be relative to the run's cwd (line 1, column 68)`, ErrUnsafePath},
		{"escaping waitForFile", `{"steps":[{"op":"waitForFile","path":"a/../../x"}]}`, `fixtures/x/input.json: steps[0].path: path "a/../../x" escapes the run's cwd (line 1, column 38)`, ErrUnsafePath},
		{"waitForFile extra field", `{"steps":[{"op":"promptAndCancel","text":"x","waitForFile":{"path":"r","timeout":3}}]}`, `fixtures/x/input.json: steps[0].waitForFile: unknown field "timeout" (line 1, column 72)`, ErrUnknownField},
		{"negative session", `{"steps":[{"op":"cancel","session":-1}]}`, `fixtures/x/input.json: steps[0].session: expected integer >= 0, got -1 (line 1, column 36)`, ErrBadValue},
		{"fractional turn", `{"steps":[{"op":"waitForTurnStart","minimumTurn":1.5}]}`, `fixtures/x/input.json: steps[0].minimumTurn: expected integer, got 1.5 (line 1, column 50)`, ErrBadValue},
		{"fork at answer and seq", `{"steps":[{"op":"forkSession","atAnswer":1,"atSeq":4}]}`, `fixtures/x/input.json: steps[0]: op "forkSession" takes "atAnswer" or "atSeq", not both (line 1, column 11)`, ErrBadValue},
		{"fork at answer 0", `{"steps":[{"op":"forkSession","atAnswer":0}]}`, `fixtures/x/input.json: steps[0].atAnswer: expected integer >= 1, got 0 (line 1, column 42)`, ErrBadValue},
		{"zero turn", `{"steps":[{"op":"waitForTurnStart","minimumTurn":0}]}`, `fixtures/x/input.json: steps[0].minimumTurn: expected integer >= 1, got 0 (line 1, column 50)`, ErrBadValue},
		{"zero timeout", `{"steps":[{"op":"waitForTurnEnd","timeoutMs":0}]}`, `fixtures/x/input.json: steps[0].timeoutMs: expected integer >= 1, got 0 (line 1, column 46)`, ErrBadValue},
		{"timeout on a prompt", `{"steps":[{"op":"prompt","text":"x","timeoutMs":5}]}`, `fixtures/x/input.json: steps[0]: field "timeoutMs" is not allowed for op "prompt" (line 1, column 37)`, ErrUnknownField},
		{"session on a child wait", `{"steps":[{"op":"waitForSubagentTurnEnd","session":1}]}`, `fixtures/x/input.json: steps[0]: field "session" is not allowed for op "waitForSubagentTurnEnd" (line 1, column 42)`, ErrUnknownField},
		{"empty mode", `{"steps":[{"op":"setMode","mode":""}]}`, `fixtures/x/input.json: steps[0].mode: must not be empty (line 1, column 34)`, ErrBadValue},
		{"unknown content type", `{"steps":[{"op":"promptContent","content":[{"type":"video","data":"AA=="}]}]}`, `fixtures/x/input.json: steps[0].content[0].type: unknown content type "video" (line 1, column 52)`, ErrBadValue},
		{"image without mimeType", `{"steps":[{"op":"promptContent","content":[{"type":"image","data":"AA=="}]}]}`, `fixtures/x/input.json: steps[0].content[0]: content type "image" requires field "mimeType" (line 1, column 44)`, ErrMissingField},
		{"bad base64", `{"steps":[{"op":"promptContent","content":[{"type":"image","data":"!!","mimeType":"image/png"}]}]}`, `fixtures/x/input.json: steps[0].content[0].data: invalid base64: illegal base64 data at input byte 0 (line 1, column 67)`, ErrBadValue},
		{"text block with data", `{"steps":[{"op":"promptContent","content":[{"type":"text","text":"a","data":"AA=="}]}]}`, `fixtures/x/input.json: steps[0].content[0]: field "data" is not allowed for content type "text" (line 1, column 70)`, ErrUnknownField},
		{"unknown permission kind", `{"steps":[{"op":"initialize"}],"permissionAnswers":[{"kind":"allow"}]}`, `fixtures/x/input.json: permissionAnswers[0].kind: unknown permission option kind "allow" (want allow_once, allow_always, reject_once or reject_always) (line 1, column 61)`, ErrBadValue},
		{"permission answer as string", `{"steps":[{"op":"initialize"}],"permissionAnswers":["allow_once"]}`, `fixtures/x/input.json: permissionAnswers[0]: expected object, got string (line 1, column 53)`, ErrBadValue},
		{"permission answer extra field", `{"steps":[{"op":"initialize"}],"permissionAnswers":[{"kind":"allow_once","optionId":"x"}]}`, `fixtures/x/input.json: permissionAnswers[0]: unknown field "optionId" (line 1, column 74)`, ErrUnknownField},
		{"standin escapes", `{"steps":[{"op":"initialize"}],"recordedWith":"standin:../s.json"}`, `fixtures/x/input.json: recordedWith: path "../s.json" escapes the scenario directory (line 1, column 47)`, ErrUnsafePath},
		{"standin without script", `{"steps":[{"op":"initialize"}],"recordedWith":"standin:"}`, `fixtures/x/input.json: recordedWith: "standin:" names no stand-in script (line 1, column 47)`, ErrBadValue},
		{"expectError not a boolean", `{"steps":[{"op":"prompt","text":"x","expectError":"yes"}]}`, `fixtures/x/input.json: steps[0].expectError: expected boolean, got string (line 1, column 51)`, ErrBadValue},
		{"expectError on an op without it", `{"steps":[{"op":"cancel","expectError":true}]}`, `fixtures/x/input.json: steps[0]: field "expectError" is not allowed for op "cancel" (line 1, column 26)`, ErrUnknownField},
		{"expectError on the twin", `{"steps":[{"op":"promptExpectError","text":"x","expectError":false}]}`, `fixtures/x/input.json: steps[0]: field "expectError" is not allowed for op "promptExpectError" (line 1, column 48)`, ErrUnknownField},
		{"twin without its base's required field", `{"steps":[{"op":"promptExpectError"}]}`, `fixtures/x/input.json: steps[0]: op "promptExpectError" requires field "text" (line 1, column 11)`, ErrMissingField},
		{"a twin reel does not define", `{"steps":[{"op":"initialize"},{"op":"loadSessionExpectError"}]}`, `fixtures/x/input.json: steps[1].op: unknown op "loadSessionExpectError" (line 1, column 37)`, ErrUnknownOp},
		{"additionalDirectories not an array", `{"steps":[{"op":"newSessionExpectError","additionalDirectories":"/x"}]}`, `fixtures/x/input.json: steps[0].additionalDirectories: expected array, got string (line 1, column 65)`, ErrBadValue},
		{"additionalDirectories empty entry", `{"steps":[{"op":"newSessionExpectError","additionalDirectories":["/x",""]}]}`, `fixtures/x/input.json: steps[0].additionalDirectories[1]: must not be empty (line 1, column 71)`, ErrBadValue},
		{"additionalDirectories number", `{"steps":[{"op":"newSessionExpectError","additionalDirectories":[7]}]}`, `fixtures/x/input.json: steps[0].additionalDirectories[0]: expected string, got number (line 1, column 66)`, ErrBadValue},
		{"additionalDirectories too many", `{"steps":[{"op":"newSessionExpectError","additionalDirectories":[` + strings.Repeat(`"d",`, 64) + `"d"]}]}`, `fixtures/x/input.json: steps[0].additionalDirectories: has 65 entries, more than 64 (line 1, column 65)`, ErrBadValue},
		{"expectError on the newSession twin", `{"steps":[{"op":"newSessionExpectError","expectError":true}]}`, `fixtures/x/input.json: steps[0]: field "expectError" is not allowed for op "newSessionExpectError" (line 1, column 41)`, ErrUnknownField},
		{"unknown op is a bad value", `{"steps":[{"op":"dance"}]}`, `fixtures/x/input.json: steps[0].op: unknown op "dance" (line 1, column 17)`, ErrBadValue},
		{"multi-line position", "{\n  \"steps\": [\n    {\"op\": \"initialize\"},\n    {\"op\": \"waitForFile\", \"path\": \"/abs\"}\n  ]\n}", `fixtures/x/input.json: steps[1].path: path "/abs" is absolute; it must be relative to the run's cwd (line 4, column 35)`, ErrUnsafePath},
		{"empty recordedWith", `{"steps":[{"op":"initialize"}],"recordedWith":""}`, `fixtures/x/input.json: recordedWith: must not be empty (line 1, column 47)`, ErrBadValue},
		{"debug flag not a debug flag", `{"steps":[{"op":"initialize"}],"debugFlags":["--mode=danger-full-access"]}`, `fixtures/x/input.json: debugFlags[0]: debug flag "--mode=danger-full-access": want --debug-NAME or --debug-NAME=VALUE (line 1, column 46)`, ErrBadValue},
		{"debug flag without a name", `{"steps":[{"op":"initialize"}],"debugFlags":["--debug-=x"]}`, `fixtures/x/input.json: debugFlags[0]: debug flag "--debug-=x": want --debug-NAME or --debug-NAME=VALUE (line 1, column 46)`, ErrBadValue},
		{"debug flag name not lower-case", `{"steps":[{"op":"initialize"}],"debugFlags":["--debug-Hold"]}`, `fixtures/x/input.json: debugFlags[0]: debug flag "--debug-Hold": want --debug-NAME or --debug-NAME=VALUE (line 1, column 46)`, ErrBadValue},
		{"debug flag without dashes", `{"steps":[{"op":"initialize"}],"debugFlags":["debug-invariant"]}`, `fixtures/x/input.json: debugFlags[0]: debug flag "debug-invariant": want --debug-NAME or --debug-NAME=VALUE (line 1, column 46)`, ErrBadValue},
		{"debugFlags empty", `{"steps":[{"op":"initialize"}],"debugFlags":[]}`, `fixtures/x/input.json: debugFlags: must not be empty (line 1, column 45)`, ErrBadValue},
		{"debugFlags entry not a string", `{"steps":[{"op":"initialize"}],"debugFlags":[true]}`, `fixtures/x/input.json: debugFlags[0]: expected string, got boolean (line 1, column 46)`, ErrBadValue},
		{"debugFlags not an array", `{"steps":[{"op":"initialize"}],"debugFlags":"--debug-invariant"}`, `fixtures/x/input.json: debugFlags: expected array, got string (line 1, column 45)`, ErrBadValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseInput(file, []byte(tt.in))
			if err == nil {
				t.Fatalf("no error for %s", tt.in)
			}
			if err.Error() != tt.want {
				t.Errorf("error text\n got: %s\nwant: %s", err, tt.want)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Errorf("error %T is not *Error", err)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %v is not %v", err, tt.kind)
			}
		})
	}
}

func TestParseInputVocabulary(t *testing.T) {
	in := `{"steps":[
		{"op":"initialize"},
		{"op":"newSession"},
		{"op":"newSession"},
		{"op":"prompt","text":"hi","session":1},
		{"op":"promptContent","content":[{"type":"text","text":""},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"resource_link","uri":"file:///a","name":"a"}]},
		{"op":"promptAndCancel","text":"go","waitForFile":{"path":"dir/.ready"}},
		{"op":"prompt","text":"boom","expectError":true},
		{"op":"promptExpectError","text":"twin"},
		{"op":"promptAndWaitForAgentMessage","text":"x","waitForText":"STARTED"},
		{"op":"waitForTurnEnd"},
		{"op":"waitForTurnStart","minimumTurn":2},
		{"op":"waitForTurnStart","timeoutMs":2500},
		{"op":"waitForFile","path":".settled"},
		{"op":"waitForTitleAfterTurnEnd"},
		{"op":"waitForSubagentTurnEnd","child":1,"minimumTurn":3},
		{"op":"waitForSubagentTurnEnd"},
		{"op":"waitForTurnEnd","session":1,"timeoutMs":10000},
		{"op":"setMode","mode":"read-only","session":1},
		{"op":"cancel"},
		{"op":"loadSession","session":1},
		{"op":"loadSession","expectError":true},
		{"op":"listSessions"},
		{"op":"promptQueued","text":"next","path":"go1"},
		{"op":"steer","text":"also","waitForFile":{"path":"gate-open"},"path":"go"},
		{"op":"setConfigOption","configId":"mode","value":"read-only","expectError":true},
		{"op":"resumeSession","session":0},
		{"op":"listSessions","followCursor":true},
		{"op":"deleteSession","session":1},
		{"op":"forkSession","atAnswer":1},
		{"op":"forkSession","session":1,"atSeq":7},
		{"op":"forkSession"}
	],"permissionAnswers":[{"kind":"allow_once"},{"kind":"reject_once"}],"recordedWith":"standin:standin.json","mode":"read-only","approval":"never","models":"a,b","listPageSize":2,
	"debugFlags":["--debug-job-wait-signal=.job-waiting","--debug-hold-for-children"]}`
	got, err := ParseInput("input.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var ops []Op
	for _, s := range got.Steps {
		ops = append(ops, s.Op)
	}
	for _, op := range Ops() {
		if !slices.Contains(ops, op) {
			t.Errorf("vocabulary test does not exercise op %q", op)
		}
	}
	want := &Input{
		Steps: []Step{
			{Op: OpInitialize},
			{Op: OpNewSession},
			{Op: OpNewSession},
			{Op: OpPrompt, Text: "hi", Session: 1},
			{Op: OpPromptContent, Content: []ContentBlock{
				{Type: ContentText},
				{Type: ContentImage, Data: "AA==", MimeType: "image/png"},
				{Type: ContentResourceLink, URI: "file:///a", Name: "a"},
			}},
			{Op: OpPromptAndCancel, Text: "go", WaitForFile: &FileWait{Path: "dir/.ready"}},
			{Op: OpPrompt, Text: "boom", ExpectError: true},
			{Op: OpPrompt, Text: "twin", ExpectError: true},
			{Op: OpPromptAndWaitForAgentMessage, Text: "x", WaitForText: "STARTED"},
			{Op: OpWaitForTurnEnd},
			{Op: OpWaitForTurnStart, MinimumTurn: 2},
			{Op: OpWaitForTurnStart, TimeoutMs: 2500},
			{Op: OpWaitForFile, Path: ".settled"},
			{Op: OpWaitForTitleAfterTurnEnd},
			{Op: OpWaitForSubagentTurnEnd, Child: 1, MinimumTurn: 3},
			{Op: OpWaitForSubagentTurnEnd},
			{Op: OpWaitForTurnEnd, Session: 1, TimeoutMs: 10000},
			{Op: OpSetMode, Mode: "read-only", Session: 1},
			{Op: OpCancel},
			{Op: OpLoadSession, Session: 1},
			{Op: OpLoadSession, ExpectError: true},
			{Op: OpListSessions},
			{Op: OpPromptQueued, Text: "next", Path: "go1"},
			{Op: OpSteer, Text: "also", WaitForFile: &FileWait{Path: "gate-open"}, Path: "go"},
			{Op: OpSetConfigOption, ConfigID: "mode", Value: "read-only", ExpectError: true},
			{Op: OpResumeSession},
			{Op: OpListSessions, FollowCursor: true},
			{Op: OpDeleteSession, Session: 1},
			{Op: OpForkSession, AtAnswer: 1},
			{Op: OpForkSession, Session: 1, AtSeq: 7},
			{Op: OpForkSession},
		},
		PermissionAnswers: []PermissionAnswer{{Kind: AllowOnce}, {Kind: RejectOnce}},
		RecordedWith:      "standin:standin.json",
		Mode:              "read-only",
		Approval:          "never",
		DebugFlags:        []string{"--debug-job-wait-signal=.job-waiting", "--debug-hold-for-children"},
		Models:            "a,b",
		ListPageSize:      2,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsed\n%+v\nwant\n%+v", got, want)
	}
	if s, ok := got.StandinScript(); !ok || s != "standin.json" {
		t.Errorf("StandinScript = %q, %v", s, ok)
	}

	// The marshalled form parses back to the same value.
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseInput("again.json", data)
	if err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if !reflect.DeepEqual(again, want) {
		t.Errorf("round trip\n%+v\nwant\n%+v", again, want)
	}

	prompt := got.Steps[4].Prompt()
	wire, err := json.Marshal(prompt)
	if err != nil {
		t.Fatal(err)
	}
	const wantWire = `[{"type":"text","text":""},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"resource_link","uri":"file:///a","name":"a"}]`
	if string(wire) != wantWire {
		t.Errorf("prompt wire form\n got %s\nwant %s", wire, wantWire)
	}
	if p := got.Steps[3].Prompt(); !reflect.DeepEqual(p, []ContentBlock{{Type: ContentText, Text: "hi"}}) {
		t.Errorf("text prompt = %+v", p)
	}
	if p := got.Steps[0].Prompt(); p != nil {
		t.Errorf("initialize has a prompt: %+v", p)
	}
}

// writeTree creates files (content) and directories (name ending in "/")
// under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if name[len(name)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const minimalInput = `{"steps":[{"op":"initialize"},{"op":"newSession"}]}`

func TestLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "multi")
	writeTree(t, dir, map[string]string{
		"input.json":            `{"steps":[{"op":"initialize"}],"recordedWith":"standin:model/script.json"}`,
		"session.jsonl":         "{}\n",
		"session.2.jsonl":       "{}\n",
		"session.1.jsonl":       "{}\n",
		"replay.override.json":  `[{"kind":"hang"}]`,
		"workspace/a/b.txt":     "b",
		"model/script.json":     "{}",
		"stdout.expected.jsonl": "",
	})
	if err := os.Symlink("a/b.txt", filepath.Join(dir, "workspace", "link")); err != nil {
		t.Fatal(err)
	}
	sc, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantSessions := []string{
		filepath.Join(dir, "session.jsonl"),
		filepath.Join(dir, "session.1.jsonl"),
		filepath.Join(dir, "session.2.jsonl"),
	}
	if !slices.Equal(sc.Sessions, wantSessions) {
		t.Errorf("Sessions = %v, want %v", sc.Sessions, wantSessions)
	}
	if sc.Name != "multi" || sc.Workspace != filepath.Join(dir, "workspace") ||
		sc.OverridePath != filepath.Join(dir, OverrideFile) || sc.Override == nil || len(sc.Override.Script) != 1 ||
		sc.Standin != filepath.Join(dir, "model", "script.json") {
		t.Errorf("scenario = %+v", sc)
	}
	if !slices.Equal(sc.Other, []string{"model", "stdout.expected.jsonl"}) {
		t.Errorf("Other = %v", sc.Other)
	}

	// A bare scenario: no session, no override, standin.json by convention.
	bare := filepath.Join(t.TempDir(), "bare")
	writeTree(t, bare, map[string]string{"input.json": minimalInput, "standin.json": "{}"})
	sc, err = Load(bare)
	if err != nil {
		t.Fatal(err)
	}
	if sc.HasSession() || sc.Override != nil || sc.OverridePath != "" || sc.Workspace != "" || sc.Standin != filepath.Join(bare, StandinFile) {
		t.Errorf("bare scenario = %+v", sc)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		link  [2]string // optional symlink: target, name (relative to the folder)
		want  string    // with DIR standing for the scenario folder
		kind  error
	}{
		{"no input", map[string]string{"session.jsonl": "{}"}, [2]string{}, "DIR/input.json: required file is missing", ErrLayout},
		{"input is a dir", map[string]string{"input.json/": ""}, [2]string{}, "DIR/input.json: must be a regular file, found a directory", ErrLayout},
		{"bad input field", map[string]string{"input.json": `{"steps":[{"op":"prompt","txt":"x"}]}`}, [2]string{}, `DIR/input.json: steps[0]: unknown field "txt" (line 1, column 26)`, ErrUnknownField},
		{"session gap", map[string]string{"input.json": minimalInput, "session.jsonl": "", "session.2.jsonl": ""}, [2]string{}, "DIR/session.2.jsonl: DIR/session.1.jsonl is missing (session files must be numbered without gaps)", ErrLayout},
		{"child without first", map[string]string{"input.json": minimalInput, "session.1.jsonl": ""}, [2]string{}, "DIR/session.1.jsonl: DIR/session.jsonl is missing (session files must be numbered without gaps)", ErrLayout},
		{"malformed session name", map[string]string{"input.json": minimalInput, "session.01.jsonl": ""}, [2]string{}, "DIR/session.01.jsonl: malformed session file name; want session.jsonl or session.N.jsonl with N = 1, 2, …", ErrLayout},
		{"bad override", map[string]string{"input.json": minimalInput, "replay.override.json": `[{"kind":"hang","readyFile":"/tmp/r"}]`}, [2]string{}, `DIR/replay.override.json: [0].readyFile: path "/tmp/r" is absolute; it must be relative to the session's cwd (line 1, column 29)`, ErrUnsafePath},
		{"workspace is a file", map[string]string{"input.json": minimalInput, "workspace": "x"}, [2]string{}, "DIR/workspace: must be a directory, found a regular file", ErrLayout},
		{"workspace absolute symlink", map[string]string{"input.json": minimalInput, "workspace/": ""}, [2]string{"/etc/passwd", "workspace/pw"}, `DIR/workspace/pw: symlink target "/etc/passwd" is absolute; it must stay inside the workspace`, ErrUnsafePath},
		{"workspace escaping symlink", map[string]string{"input.json": minimalInput, "workspace/d/": ""}, [2]string{"../../input.json", "workspace/d/up"}, `DIR/workspace/d/up: symlink target "../../input.json" escapes the workspace`, ErrUnsafePath},
		{"workspace itself a symlink", map[string]string{"input.json": minimalInput, "elsewhere/": ""}, [2]string{"elsewhere", "workspace"}, "DIR/workspace: must be a directory, found a symlink", ErrLayout},
		{"missing standin", map[string]string{"input.json": `{"steps":[{"op":"initialize"}],"recordedWith":"standin:s.json"}`}, [2]string{}, `DIR/input.json: recordedWith: stand-in script "s.json": stat DIR/s.json: no such file or directory`, ErrLayout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sc")
			writeTree(t, dir, tt.files)
			if tt.link[1] != "" {
				if err := os.Symlink(tt.link[0], filepath.Join(dir, tt.link[1])); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(dir)
			if err == nil {
				t.Fatal("no error")
			}
			want := strings.ReplaceAll(tt.want, "DIR", dir)
			if err.Error() != want {
				t.Errorf("error text\n got: %s\nwant: %s", err, want)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %v is not %v", err, tt.kind)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"b/input.json":         minimalInput,
		"a/input.json":         minimalInput,
		"a/workspace/x/":       "",
		"orphan/session.jsonl": "",
		"empty/":               "",
		"README.md":            "not a scenario",
	})
	dirs, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}; !slices.Equal(dirs, want) {
		t.Errorf("Discover = %v, want %v", dirs, want)
	}
	orphans, err := Orphans(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(root, "empty"), filepath.Join(root, "orphan")}; !slices.Equal(orphans, want) {
		t.Errorf("Orphans = %v, want %v", orphans, want)
	}
	if _, err := Discover(filepath.Join(root, "nope")); err == nil {
		t.Error("Discover of a missing root succeeded")
	}
}
