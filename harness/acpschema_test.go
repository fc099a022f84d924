package harness_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// acpSchema is the vendored stable ACP v1 schema of the official
// TypeScript SDK 2.4.0 (testdata/acp/README.md): newer than the one
// acp-go-sdk v0.13.0 ships, so the frames reel's adapter encodes by hand
// (notice, compaction, session/delete) are checked too.
func acpSchema(t *testing.T) string {
	t.Helper()
	p := filepath.Join("testdata", "acp", "schema.json")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the vendored ACP schema is missing: %v", err)
	}
	return p
}

// TestTranscriptFramesMatchTheACPSchema: every frame reel wrote in every
// committed transcript is valid ACP by the SDK's JSON schema — each
// notification and request to the client against its method's params
// type, each result against the response type its shape names (or any
// agent response), each error against the error object.
func TestTranscriptFramesMatchTheACPSchema(t *testing.T) {
	schemaPath := acpSchema(t)
	c := jsonschema.NewCompiler()
	f, err := os.Open(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	const url = "file:///acp/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	defs := map[string]*jsonschema.Schema{}
	def := func(name string) *jsonschema.Schema {
		if s, ok := defs[name]; ok {
			return s
		}
		s, err := c.Compile(url + "#/$defs/" + name)
		if err != nil {
			t.Fatalf("compile %s: %v", name, err)
		}
		defs[name] = s
		return s
	}
	params := map[string]string{
		"session/update":             "SessionNotification",
		"session/request_permission": "RequestPermissionRequest",
		"fs/read_text_file":          "ReadTextFileRequest",
		"fs/write_text_file":         "WriteTextFileRequest",
		"elicitation/create":         "CreateElicitationRequest",
		"$/cancel_request":           "CancelRequestNotification",
	}
	files, err := filepath.Glob(filepath.Join("..", "snapshots", "transcripts", "*.snap.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts (%v)", err)
	}
	frames := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 16<<20)
		for line := 1; sc.Scan(); line++ {
			raw := sc.Bytes()
			if len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
			var fr struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(raw, &fr); err != nil {
				t.Errorf("%s:%d: not JSON: %v", filepath.Base(file), line, err)
				continue
			}
			frames++
			var what string
			var value json.RawMessage
			var s *jsonschema.Schema
			switch {
			case fr.Method != "":
				name, ok := params[fr.Method]
				if !ok {
					t.Errorf("%s:%d: reel sent %q, a method the test does not know; add its params type", filepath.Base(file), line, fr.Method)
					continue
				}
				what, value, s = fr.Method+" params", fr.Params, def(name)
			case fr.Error != nil:
				what, value, s = "error", fr.Error, def("Error")
			default:
				name := responseType(fr.Result)
				what, value = name, fr.Result
				if name == "" {
					what, value, s = "response", raw, def("AgentResponse")
				} else {
					s = def(name)
				}
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
			if err != nil {
				t.Errorf("%s:%d: %s: %v", filepath.Base(file), line, what, err)
				continue
			}
			if err := s.Validate(v); err != nil {
				t.Errorf("%s:%d: %s is not valid ACP: %v\n%s", filepath.Base(file), line, what, err, raw)
			}
		}
	}
	t.Logf("%d frames of %d transcripts valid against %s", frames, len(files), schemaPath)
}

// responseType names the response type a result's members show ("" when
// they name none: an empty result answers several methods).
func responseType(result json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return ""
	}
	has := func(k string) bool { _, ok := m[k]; return ok }
	switch {
	case has("protocolVersion"):
		return "InitializeResponse"
	case has("stopReason"):
		return "PromptResponse"
	case has("sessions"):
		return "ListSessionsResponse"
	case has("sessionId"):
		return "NewSessionResponse"
	case has("modes"):
		return "LoadSessionResponse"
	case has("configOptions"):
		return "SetSessionConfigOptionResponse"
	}
	return ""
}
