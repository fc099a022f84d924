package tools

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestParseArgs(t *testing.T) {
	type parsed = any
	parsers := map[string]func(json.RawMessage) (parsed, error){
		"bash":  func(r json.RawMessage) (parsed, error) { return ParseBashArgs(r) },
		"read":  func(r json.RawMessage) (parsed, error) { return ParseReadArgs(r) },
		"write": func(r json.RawMessage) (parsed, error) { return ParseWriteArgs(r) },
		"edit":  func(r json.RawMessage) (parsed, error) { return ParseEditArgs(r) },
		"glob":  func(r json.RawMessage) (parsed, error) { return ParseGlobArgs(r) },
		"grep":  func(r json.RawMessage) (parsed, error) { return ParseGrepArgs(r) },
	}
	tests := []struct {
		name    string
		tool    string
		raw     string
		want    parsed
		wantArg string // argument named by the *ArgError; "-" for the whole object
	}{
		{name: "bash minimal", tool: "bash", raw: `{"command":"ls"}`, want: BashArgs{Command: "ls"}},
		{name: "bash all fields", tool: "bash",
			raw:  `{"command":"ls","description":"List","workdir":"sub","timeout":5000,"run_in_background":true,"sandbox_permissions":"danger-full-access","justification":"why"}`,
			want: BashArgs{Command: "ls", Description: "List", Workdir: "sub", Timeout: 5000, RunInBackground: true, SandboxPermissions: "danger-full-access", Justification: "why"}},
		{name: "bash unknown arg refused", tool: "bash", raw: `{"command":"ls","dangerouslyDisableSandbox":true,"x":[1]}`, wantArg: "dangerouslyDisableSandbox"},
		{name: "bash names differing in case", tool: "bash", raw: `{"command":"touch /outside/x","Command":"ls -la","sandbox_permissions":"danger-full-access"}`, wantArg: "-"},
		{name: "bash name in other case alone", tool: "bash", raw: `{"Command":"ls"}`, wantArg: "Command"},
		{name: "bash duplicate name", tool: "bash", raw: `{"command":"ls -la","command":"touch /outside/x"}`, wantArg: "command"},
		{name: "bash duplicate escalation", tool: "bash", raw: `{"command":"ls","sandbox_permissions":"workspace-write","sandbox_permissions":"danger-full-access"}`, wantArg: "sandbox_permissions"},
		{name: "bash numbers and booleans as strings", tool: "bash", raw: `{"command":"ls","timeout":"200","run_in_background":"false"}`, want: BashArgs{Command: "ls", Timeout: 200}},
		{name: "bash integral float timeout", tool: "bash", raw: `{"command":"ls","timeout":1e3}`, want: BashArgs{Command: "ls", Timeout: 1000}},
		{name: "bash null is absent", tool: "bash", raw: `{"command":"ls","timeout":null,"workdir":null}`, want: BashArgs{Command: "ls"}},
		{name: "bash missing command", tool: "bash", raw: `{"description":"x"}`, wantArg: "command"},
		{name: "bash empty command", tool: "bash", raw: `{"command":""}`, wantArg: "command"},
		{name: "bash command not a string", tool: "bash", raw: `{"command":42}`, wantArg: "command"},
		{name: "bash fractional timeout", tool: "bash", raw: `{"command":"ls","timeout":1.5}`, wantArg: "timeout"},
		{name: "bash timeout word", tool: "bash", raw: `{"command":"ls","timeout":"soon"}`, wantArg: "timeout"},
		{name: "bash timeout object", tool: "bash", raw: `{"command":"ls","timeout":{}}`, wantArg: "timeout"},
		{name: "bash background not bool", tool: "bash", raw: `{"command":"ls","run_in_background":1}`, wantArg: "run_in_background"},
		{name: "bash malformed JSON", tool: "bash", raw: `{"command":"ls"`, wantArg: "-"},
		{name: "bash array", tool: "bash", raw: `["ls"]`, wantArg: "-"},
		{name: "bash empty input", tool: "bash", raw: ``, wantArg: "command"},
		{name: "bash null input", tool: "bash", raw: `null`, wantArg: "command"},
		{name: "read", tool: "read", raw: `{"file_path":"a.txt","offset":3,"limit":"10"}`, want: ReadArgs{FilePath: "a.txt", Offset: 3, Limit: 10}},
		{name: "read missing path", tool: "read", raw: `{"offset":3}`, wantArg: "file_path"},
		{name: "read offset string", tool: "read", raw: `{"file_path":"a","offset":"x"}`, wantArg: "offset"},
		{name: "write", tool: "write", raw: `{"file_path":"a","content":"","sandbox_permissions":"workspace-write","justification":"j"}`,
			want: WriteArgs{FilePath: "a", SandboxPermissions: "workspace-write", Justification: "j"}},
		{name: "write missing content", tool: "write", raw: `{"file_path":"a"}`, wantArg: "content"},
		{name: "write null content", tool: "write", raw: `{"file_path":"a","content":null}`, wantArg: "content"},
		{name: "write content number", tool: "write", raw: `{"file_path":"a","content":1}`, wantArg: "content"},
		{name: "edit", tool: "edit", raw: `{"file_path":"a","old_string":"x","new_string":"","replace_all":true}`,
			want: EditArgs{FilePath: "a", OldString: "x", ReplaceAll: true}},
		{name: "edit missing new_string", tool: "edit", raw: `{"file_path":"a","old_string":"x"}`, wantArg: "new_string"},
		{name: "edit missing old_string", tool: "edit", raw: `{"file_path":"a","new_string":"x"}`, wantArg: "old_string"},
		{name: "edit replace_all string", tool: "edit", raw: `{"file_path":"a","old_string":"x","new_string":"y","replace_all":"yes"}`, wantArg: "replace_all"},
		{name: "glob", tool: "glob", raw: `{"pattern":"**/*.go","path":"src"}`, want: GlobArgs{Pattern: "**/*.go", Path: "src"}},
		{name: "glob missing pattern", tool: "glob", raw: `{"path":"src"}`, wantArg: "pattern"},
		{name: "grep", tool: "grep", raw: `{"pattern":"x","path":"p","glob":"*.go","output_mode":"count","-i":true}`,
			want: GrepArgs{Pattern: "x", Path: "p", Glob: "*.go", OutputMode: "count", IgnoreCase: true}},
		{name: "grep unknown flag", tool: "grep", raw: `{"pattern":"x","-n":true}`, wantArg: "-n"},
		{name: "write names differing in case", tool: "write", raw: `{"file_path":"inside.txt","File_Path":"/outside/x","content":""}`, wantArg: "-"},
		{name: "write escaped duplicate name", tool: "write", raw: `{"file_path":"inside.txt","file\u005fpath":"/outside/x","content":""}`, wantArg: "file_path"},
		{name: "grep -i not bool", tool: "grep", raw: `{"pattern":"x","-i":"sure"}`, wantArg: "-i"},
		{name: "grep missing pattern", tool: "grep", raw: `{}`, wantArg: "pattern"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsers[tc.tool](json.RawMessage(tc.raw))
			if tc.wantArg == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %#v, want %#v", got, tc.want)
				}
				return
			}
			if !errors.Is(err, ErrInvalidArgs) {
				t.Fatalf("error %v does not match ErrInvalidArgs", err)
			}
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v is not an *ArgError", err)
			}
			wantArg := tc.wantArg
			if wantArg == "-" {
				wantArg = ""
			}
			if ae.Tool != tc.tool || ae.Arg != wantArg {
				t.Fatalf("ArgError names tool %q argument %q, want %q %q (%v)", ae.Tool, ae.Arg, tc.tool, wantArg, err)
			}
		})
	}
}

func TestArgErrorMessage(t *testing.T) {
	tests := []struct {
		err  *ArgError
		want string
	}{
		{&ArgError{Tool: "bash", Arg: "command", Msg: "missing (required)"}, `tools: bash: argument "command": missing (required)`},
		{&ArgError{Tool: "read", Msg: "malformed JSON", Err: errors.New("unexpected end")}, `tools: read: arguments: malformed JSON: unexpected end`},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	inner := errors.New("inner")
	if err := (&ArgError{Tool: "x", Err: inner}); !errors.Is(err, inner) || !errors.Is(err, ErrInvalidArgs) {
		t.Errorf("ArgError does not unwrap to both ErrInvalidArgs and its cause")
	}
}

func TestBashTimeoutMS(t *testing.T) {
	tests := []struct{ in, want int }{
		{0, DefaultBashTimeout}, {-5, DefaultBashTimeout}, {200, 200}, {MaxBashTimeout, MaxBashTimeout}, {MaxBashTimeout + 1, MaxBashTimeout},
	}
	for _, tc := range tests {
		if got := (BashArgs{Timeout: tc.in}).TimeoutMS(); got != tc.want {
			t.Errorf("TimeoutMS(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestArgNamesMatchSchemas holds the strict decoder's list of argument
// names to the schemas the model is given: a schema property the decoder
// refused, or a name it accepted that no schema declares, fails.
func TestArgNamesMatchSchemas(t *testing.T) {
	for _, tool := range Default(Options{Escalation: true}).Tools() {
		var params struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(tool.Schema().Parameters, &params); err != nil {
			t.Fatalf("%s: %v", tool.Name(), err)
		}
		var fromSchema []string
		for k := range params.Properties {
			fromSchema = append(fromSchema, k)
		}
		slices.Sort(fromSchema)
		known := slices.Clone(argNames(tool.Name()))
		slices.Sort(known)
		if !slices.Equal(fromSchema, known) {
			t.Errorf("%s: schema properties %q, decoder accepts %q", tool.Name(), fromSchema, known)
		}
	}
}
