package tools

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDefaultSet(t *testing.T) {
	for _, esc := range []bool{false, true} {
		set := Default(Options{Escalation: esc})
		if got := strings.Join(set.Names(), ","); got != "bash,read,read_image,write,edit,glob,grep,job_kill,job_list,job_output,todo_write" {
			t.Fatalf("names %s", got)
		}
		raw := set.Schemas()
		if !json.Valid(raw) {
			t.Fatalf("schemas are not valid JSON: %s", raw)
		}
		if again := Default(Options{Escalation: esc}).Schemas(); string(again) != string(raw) {
			t.Fatal("schemas are not deterministic")
		}
		var schemas []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Parameters  struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"parameters"`
		}
		if err := json.Unmarshal(raw, &schemas); err != nil {
			t.Fatal(err)
		}
		wantProps := map[string][]string{
			"bash":       {"command", "description", "workdir", "timeout", "run_in_background"},
			"read":       {"file_path", "offset", "limit"},
			"read_image": {"file_path"},
			"write":      {"file_path", "content"},
			"edit":       {"file_path", "old_string", "new_string", "replace_all"},
			"glob":       {"pattern", "path"},
			"grep":       {"pattern", "path", "glob", "output_mode", "-i"},
			"todo_write": {"todos"},
			"job_kill":   {"job_id", "reason"},
			"job_list":   {},
			"job_output": {"job_id", "wait", "timeout_ms"},
		}
		wantRequired := map[string]string{
			"bash": "command", "read": "file_path", "read_image": "file_path", "write": "file_path,content",
			"edit": "file_path,old_string,new_string", "glob": "pattern", "grep": "pattern",
			"todo_write": "todos", "job_kill": "job_id", "job_output": "job_id",
		}
		for i, s := range schemas {
			if s.Name != set.Names()[i] || s.Description == "" || s.Parameters.Type != "object" {
				t.Errorf("schema %d: %+v", i, s)
			}
			want := wantProps[s.Name]
			if esc && (s.Name == "bash" || s.Name == "write") {
				want = append(want, "sandbox_permissions", "justification")
			}
			var got []string
			for k := range s.Parameters.Properties {
				got = append(got, k)
			}
			if len(got) != len(want) {
				t.Errorf("%s (escalation %v): properties %v, want %v", s.Name, esc, got, want)
			}
			for _, k := range want {
				if _, ok := s.Parameters.Properties[k]; !ok {
					t.Errorf("%s: missing property %q", s.Name, k)
				}
			}
			if got := strings.Join(s.Parameters.Required, ","); got != wantRequired[s.Name] {
				t.Errorf("%s: required %s, want %s", s.Name, got, wantRequired[s.Name])
			}
		}
	}
	if strings.Contains(string(Default(Options{}).Schemas()), `\u003c`) {
		t.Error("schemas escape HTML characters")
	}
}

func TestSetLookupAndRun(t *testing.T) {
	set := Default(Options{})
	tool, err := set.Lookup("edit")
	if err != nil || tool.Name() != "edit" {
		t.Fatalf("Lookup(edit) = %v, %v", tool, err)
	}
	_, err = set.Lookup("browse")
	if !errors.Is(err, ErrUnknownTool) || !strings.Contains(err.Error(), `"browse"`) || !strings.Contains(err.Error(), "bash, read, read_image, write, edit, glob, grep, job_kill, job_list, job_output, todo_write") {
		t.Fatalf("Lookup(browse) error %v", err)
	}
	env := newEnv(t)
	if _, err := set.Run(context.Background(), env, "browse", nil); !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("Run(browse) error %v", err)
	}
	res, err := set.Run(context.Background(), env, "bash", json.RawMessage(`{"command":"echo via set"}`))
	if err != nil || res.Text != "via set\n" {
		t.Fatalf("Run(bash) = %+v, %v", res, err)
	}
	tools := set.Tools()
	tools[0] = nil
	if set.Tools()[0] == nil {
		t.Fatal("Tools exposes the set's slice")
	}
	schemas := set.Schemas()
	schemas[0] = 'X'
	if set.Schemas()[0] != '[' {
		t.Fatal("Schemas exposes the set's bytes")
	}
}

// fakeTool is a Tool with a configurable name and schema.
type fakeTool struct {
	name   string
	schema Schema
}

func (f fakeTool) Name() string   { return f.name }
func (f fakeTool) Schema() Schema { return f.schema }
func (f fakeTool) Run(context.Context, *Env, json.RawMessage) (Result, error) {
	return Result{Text: f.name}, nil
}

func TestNewSetErrors(t *testing.T) {
	ok := func(name string) Tool {
		return fakeTool{name: name, schema: Schema{Name: name, Parameters: json.RawMessage(`{"type":"object"}`)}}
	}
	tests := []struct {
		name  string
		tools []Tool
		want  string
	}{
		{"nil tool", []Tool{ok("a"), nil}, "tool 1 is nil"},
		{"empty name", []Tool{ok("")}, "empty name"},
		{"duplicate", []Tool{ok("a"), ok("b"), ok("a")}, `duplicate tool name "a"`},
		{"schema name", []Tool{fakeTool{name: "a", schema: Schema{Name: "b", Parameters: json.RawMessage(`{}`)}}}, `declares schema name "b"`},
		{"bad parameters", []Tool{fakeTool{name: "a", schema: Schema{Name: "a", Parameters: json.RawMessage(`{"type":`)}}}, "not a JSON object"},
		{"array parameters", []Tool{fakeTool{name: "a", schema: Schema{Name: "a", Parameters: json.RawMessage(`[]`)}}}, "not a JSON object"},
		{"null parameters", []Tool{fakeTool{name: "a", schema: Schema{Name: "a", Parameters: json.RawMessage(` null`)}}}, "not a JSON object"},
		{"object then more", []Tool{fakeTool{name: "a", schema: Schema{Name: "a", Parameters: json.RawMessage(`{} {}`)}}}, "not a JSON object"},
		{"empty parameters", []Tool{fakeTool{name: "a", schema: Schema{Name: "a", Parameters: json.RawMessage(` `)}}}, "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewSet(tc.tools...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	spaced := fakeTool{name: "s", schema: Schema{Name: "s", Parameters: json.RawMessage(" \n{\"type\":\"object\"}\n")}}
	if _, err := NewSet(spaced); err != nil {
		t.Fatalf("object parameters with surrounding space: %v", err)
	}
	set, err := NewSet(ok("x"), ok("y"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(set.Schemas()); got != `[{"name":"x","description":"","parameters":{"type":"object"}},{"name":"y","description":"","parameters":{"type":"object"}}]` {
		t.Fatalf("schemas %s", got)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name  string
		tool  string
		args  string
		title string
		kind  Kind
		locs  []Location
	}{
		{"bash description", "bash", `{"command":"echo HELLO","description":"Echo HELLO"}`, "Echo HELLO", KindExecute, nil},
		{"bash command", "bash", `{"command":"go test ./..."}`, "go test ./...", KindExecute, nil},
		{"bash bad args", "bash", `{"command":`, "bash", KindExecute, nil},
		{"read", "read", `{"file_path":"data.txt","offset":4}`, "Read data.txt", KindRead, []Location{{Path: "data.txt", Line: 4}}},
		{"read bad args", "read", `{}`, "read", KindRead, nil},
		{"write", "write", `{"file_path":"/abs/notes.txt","content":""}`, "Write /abs/notes.txt", KindEdit, []Location{{Path: "/abs/notes.txt"}}},
		{"edit", "edit", `{"file_path":"a.go","old_string":"a","new_string":"b"}`, "Edit a.go", KindEdit, []Location{{Path: "a.go"}}},
		{"edit bad args", "edit", `[]`, "edit", KindEdit, nil},
		{"glob", "glob", `{"pattern":"**/*.go"}`, "Glob **/*.go", KindSearch, nil},
		{"glob path", "glob", `{"pattern":"*","path":"tree"}`, "Glob * in tree", KindSearch, []Location{{Path: "tree"}}},
		{"grep", "grep", `{"pattern":"TODO","path":"src"}`, "Grep TODO in src", KindSearch, []Location{{Path: "src"}}},
		{"unknown", "browse", `{"url":"x"}`, "browse", KindOther, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			title, kind, locs := Describe(tc.tool, json.RawMessage(tc.args))
			if title != tc.title || kind != tc.kind || !reflect.DeepEqual(locs, tc.locs) {
				t.Fatalf("Describe = %q %q %v, want %q %q %v", title, kind, locs, tc.title, tc.kind, tc.locs)
			}
		})
	}
	env := &Env{Cwd: "/work/session"}
	_, _, locs := env.Describe("read", json.RawMessage(`{"file_path":"sub/../data.txt"}`))
	if want := []Location{{Path: filepath.FromSlash("/work/session/data.txt")}}; !reflect.DeepEqual(locs, want) {
		t.Fatalf("Env.Describe locations %v, want %v", locs, want)
	}
}

// TestDescribeMatchesRun checks that the announcement before a call agrees
// with the result after it.
func TestDescribeMatchesRun(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "f.txt", "one\ntwo\n")
	set := Default(Options{})
	calls := []struct{ tool, args string }{
		{"bash", `{"command":"echo x","description":"Echo"}`},
		{"read", `{"file_path":"f.txt","offset":2}`},
		{"write", `{"file_path":"g.txt","content":"g"}`},
		{"edit", `{"file_path":"f.txt","old_string":"one","new_string":"1"}`},
		{"glob", `{"pattern":"*.txt","path":"."}`},
		{"grep", `{"pattern":"two"}`},
	}
	for _, c := range calls {
		title, kind, locs := env.Describe(c.tool, json.RawMessage(c.args))
		res, err := set.Run(context.Background(), env, c.tool, json.RawMessage(c.args))
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v %v", c.tool, res, err)
		}
		if res.Title != title || res.Kind != kind || len(res.Locations) != len(locs) {
			t.Errorf("%s: Describe %q %q %v, Run %q %q %v", c.tool, title, kind, locs, res.Title, res.Kind, res.Locations)
		}
		for i := range locs {
			if res.Locations[i].Path != locs[i].Path {
				t.Errorf("%s: location %v, Run %v", c.tool, locs[i], res.Locations[i])
			}
		}
	}
}

func TestTodoWrite(t *testing.T) {
	cases := []struct {
		name, args string
		want       string
		err        string
	}{
		{"three items", `{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"pending","priority":"high"},{"content":"c","status":"completed"}]}`, "Updated todo list: 1 pending, 1 in progress, 1 completed.", ""},
		{"empty list", `{"todos":[]}`, "Updated todo list: 0 pending, 0 in progress, 0 completed.", ""},
		{"missing todos", `{}`, "", `"todos": is required`},
		{"bad status", `{"todos":[{"content":"a","status":"doing"}]}`, "", `status "doing" must be pending, in_progress or completed`},
		{"bad priority", `{"todos":[{"content":"a","status":"pending","priority":"urgent"}]}`, "", `priority "urgent"`},
		{"no content", `{"todos":[{"content":" ","status":"pending"}]}`, "", "entry 1 has no content"},
		{"not a list", `{"todos":"a"}`, "", "must be a list"},
	}
	for _, c := range cases {
		res, err := TodoWrite{}.Run(context.Background(), nil, json.RawMessage(c.args))
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrInvalidArgs) {
				t.Errorf("%s: got %v, want error containing %q", c.name, err, c.err)
			}
		case err != nil || res.Text != c.want:
			t.Errorf("%s: got %q, %v; want %q", c.name, res.Text, err, c.want)
		}
	}
}
