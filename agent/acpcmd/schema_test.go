package acpcmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// acpSchema validates frames against the vendored ACP SDK 2.4.0 schema
// (harness/testdata/acp), the one the transcript schema test uses.
type acpSchema struct {
	c    *jsonschema.Compiler
	defs map[string]*jsonschema.Schema
}

func loadACPSchema(t *testing.T) *acpSchema {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "harness", "testdata", "acp", "schema.json"))
	if err != nil {
		t.Fatalf("the vendored ACP schema: %v", err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file:///acp/schema.json", doc); err != nil {
		t.Fatal(err)
	}
	return &acpSchema{c: c, defs: map[string]*jsonschema.Schema{}}
}

// check validates value against definition def.
func (s *acpSchema) check(t *testing.T, def string, value json.RawMessage, raw string) {
	t.Helper()
	sc, ok := s.defs[def]
	if !ok {
		var err error
		if sc, err = s.c.Compile("file:///acp/schema.json#/$defs/" + def); err != nil {
			t.Fatalf("compile %s: %v", def, err)
		}
		s.defs[def] = sc
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if err := sc.Validate(v); err != nil {
		t.Errorf("frame is not a valid ACP %s: %v\n%s", def, err, raw)
	}
}

// checkFrames validates every frame reel wrote on p's stdout: each
// session/update's params, each error, and each result of the methods
// named in results (request id → response type).
func checkFrames(t *testing.T, p *proc, results map[string]string) int {
	t.Helper()
	s := loadACPSchema(t)
	n := 0
	for _, line := range p.stdoutLines() {
		var f frame
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		switch {
		case f.Method == "session/update":
			s.check(t, "SessionNotification", f.Params, line)
		case f.Error != nil:
			var e struct {
				Error json.RawMessage `json:"error"`
			}
			_ = json.Unmarshal([]byte(line), &e)
			s.check(t, "Error", e.Error, line)
		case f.isResponse():
			def, ok := results[string(f.ID)]
			if !ok {
				continue
			}
			s.check(t, def, f.Result, line)
		default:
			continue
		}
		n++
	}
	return n
}
