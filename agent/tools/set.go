package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Set is an ordered collection of tools with unique names. It is immutable
// and safe for concurrent use.
type Set struct {
	tools  []Tool
	byName map[string]Tool
	list   []Schema // checked by NewSet
	// schemas is list encoded, on the first call of Schemas: a process
	// builds its sets at start, and the first model request is the first
	// to need them (reel acp answers initialize and session/new without).
	encode  sync.Once
	schemas json.RawMessage
}

// Options configure the default tool set.
type Options struct {
	// Escalation adds the sandbox_permissions and justification arguments
	// to the bash and write schemas; set it when a confining sandbox is
	// active.
	Escalation bool
}

// Default returns reel's tools in their fixed order: bash, read,
// read_image, write, edit, glob, grep, job_kill, job_list, job_output, todo_write (the job
// tools sorted as the reference sorts its list).
func Default(opts Options) *Set {
	s, err := NewSet(DefaultTools(opts)...)
	if err != nil {
		// The built-in tools have unique names and valid schemas; the
		// tests hold them to it.
		panic(err)
	}
	return s
}

// DefaultTools are the tools of Default, in its order, for a caller that
// builds a set of its own with more tools.
func DefaultTools(opts Options) []Tool {
	//lint:ignore S1016 Options is the set's configuration and will outgrow the tool structs.
	return []Tool{Bash{Escalation: opts.Escalation}, Read{}, ReadImage{}, Write{Escalation: opts.Escalation}, Edit{}, Glob{}, Grep{}, JobKill{}, JobList{}, JobOutput{}, TodoWrite{}}
}

// NewSet returns a Set of tools in the given order. It fails on a nil tool,
// an empty or duplicate name, a schema whose name differs from the tool's,
// and parameters that are not a JSON object.
func NewSet(tools ...Tool) (*Set, error) {
	s := &Set{tools: make([]Tool, 0, len(tools)), byName: make(map[string]Tool, len(tools))}
	schemas := make([]Schema, 0, len(tools))
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("tools: NewSet: tool %d is nil", i)
		}
		name := t.Name()
		if name == "" {
			return nil, fmt.Errorf("tools: NewSet: tool %d has an empty name", i)
		}
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("tools: NewSet: duplicate tool name %q", name)
		}
		sc := t.Schema()
		if sc.Name != name {
			return nil, fmt.Errorf("tools: NewSet: tool %q declares schema name %q", name, sc.Name)
		}
		if !isJSONObject(sc.Parameters) {
			return nil, fmt.Errorf("tools: NewSet: tool %q: parameters are not a JSON object", name)
		}
		s.tools = append(s.tools, t)
		s.byName[name] = t
		schemas = append(schemas, sc)
	}
	s.list = schemas
	return s, nil
}

// encoded is the schemas as one compact JSON array, encoded once. A Schema
// holds strings and parameters NewSet found to be one valid JSON object,
// which always encode.
func (s *Set) encoded() json.RawMessage {
	s.encode.Do(func() {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s.list); err != nil {
			panic(fmt.Sprintf("tools: encoding schemas NewSet checked: %v", err))
		}
		s.schemas = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	})
	return s.schemas
}

// isJSONObject reports whether b is one valid JSON value that is an object
// (what unmarshalling into a non-nil map accepts), without building the map:
// NewSet runs at every process start.
func isJSONObject(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(b)
}

// Tools returns the tools in order. The slice is a copy.
func (s *Set) Tools() []Tool {
	return append([]Tool(nil), s.tools...)
}

// Names returns the tool names in order.
func (s *Set) Names() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name()
	}
	return names
}

// Lookup returns the tool called name, or an error matching ErrUnknownTool
// that lists the known names.
func (s *Set) Lookup(name string) (Tool, error) {
	if t, ok := s.byName[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%w %q (known tools: %s)", ErrUnknownTool, name, strings.Join(s.Names(), ", "))
}

// Schemas returns the schemas of all tools, in order, as one compact JSON
// array of {"name","description","parameters"} objects. The bytes are
// deterministic; HTML characters are not escaped. The result is a copy.
func (s *Set) Schemas() json.RawMessage {
	return append(json.RawMessage(nil), s.encoded()...)
}

// Run looks up the tool called name and runs it.
func (s *Set) Run(ctx context.Context, env *Env, name string, args json.RawMessage) (Result, error) {
	t, err := s.Lookup(name)
	if err != nil {
		return Result{}, err
	}
	return t.Run(ctx, env, args)
}

// Describe announces a call of one of reel's tools before it runs: its
// title, kind and locations, as Run will report them (Run may add a line
// number to a location, edit the line of the first match). Paths are
// reported as the model gave them; use Env.Describe to resolve them against
// the session cwd. Unparseable arguments give the tool's name as title and
// no locations; an unknown tool gives (name, KindOther, nil).
func Describe(name string, args json.RawMessage) (title string, kind Kind, locations []Location) {
	return describe(name, args, func(p string) string { return p })
}

// Describe is like the package-level Describe but reports absolute paths,
// resolved against e.Cwd.
func (e *Env) Describe(name string, args json.RawMessage) (title string, kind Kind, locations []Location) {
	return describe(name, args, e.abs)
}

// Describer is a tool that describes its own calls (a tool outside this
// package: Describe knows only this package's tools).
type Describer interface {
	Describe(args json.RawMessage) (title string, kind Kind, locations []Location)
}

// DescribeCall describes a call of the set's tool name: by the tool when
// it is a Describer (a relative location it names resolved against env's
// cwd when env is non-nil), else as env.Describe does (Describe when env
// is nil).
func (s *Set) DescribeCall(env *Env, name string, args json.RawMessage) (title string, kind Kind, locations []Location) {
	if d, ok := s.byName[name].(Describer); ok {
		title, kind, locations = d.Describe(args)
		if env != nil && env.Cwd != "" {
			for i := range locations {
				locations[i].Path = env.abs(locations[i].Path)
			}
		}
		return title, kind, locations
	}
	if env != nil {
		return env.Describe(name, args)
	}
	return Describe(name, args)
}

// describe implements Describe with a path resolver.
func describe(name string, args json.RawMessage, resolve func(string) string) (string, Kind, []Location) {
	switch name {
	case "todo_write":
		a, err := ParseTodoArgs(args)
		if err != nil {
			return name, KindOther, nil
		}
		return fmt.Sprintf("Update plan (%d items)", len(a.Todos)), KindOther, nil
	case "bash":
		a, err := ParseBashArgs(args)
		if err != nil {
			return name, KindExecute, nil
		}
		return describeBash(a), KindExecute, nil
	case "read":
		a, err := ParseReadArgs(args)
		if err != nil {
			return name, KindRead, nil
		}
		t, l := describeRead(a, resolve)
		return t, KindRead, l
	case "read_image":
		a, err := ParseReadImageArgs(args)
		if err != nil {
			return name, KindRead, nil
		}
		t, l := describeReadImage(a, resolve)
		return t, KindRead, l
	case "write":
		a, err := ParseWriteArgs(args)
		if err != nil {
			return name, KindEdit, nil
		}
		t, l := describeWrite(a, resolve)
		return t, KindEdit, l
	case "edit":
		a, err := ParseEditArgs(args)
		if err != nil {
			return name, KindEdit, nil
		}
		t, l := describeEdit(a, resolve)
		return t, KindEdit, l
	case "glob":
		a, err := ParseGlobArgs(args)
		if err != nil {
			return name, KindSearch, nil
		}
		t, l := describeSearch("Glob", a.Pattern, a.Path, resolve)
		return t, KindSearch, l
	case "grep":
		a, err := ParseGrepArgs(args)
		if err != nil {
			return name, KindSearch, nil
		}
		t, l := describeSearch("Grep", a.Pattern, a.Path, resolve)
		return t, KindSearch, l
	}
	return name, KindOther, nil
}

// compactJSON compacts a JSON literal written readably in the source. An
// invalid literal is returned as is, and NewSet then rejects it.
func compactJSON(s string) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return json.RawMessage(s)
	}
	return buf.Bytes()
}

// Escalation is a call's request to run under a wider sandbox mode than the
// session's. It comes from the same strict parse the tool's Run uses, so
// what a permission request shows is exactly what runs.
type Escalation struct {
	// Mode is the requested mode; "" when the call asks for none.
	Mode string
	// Justification is the model's reason, shown to the user.
	Justification string
	// Command is the whole bash script (bash only).
	Command string
	// Workdir is the absolute directory the command runs in (bash only).
	Workdir string
	// Path is the absolute path the call writes (write only).
	Path string
}

// Escalation parses the escalation request of a call to the tool name.
// Tools that cannot escalate give the zero Escalation and no error; for
// bash and write an argument error is returned exactly as Run would
// report it.
func (e *Env) Escalation(name string, args json.RawMessage) (Escalation, error) {
	switch name {
	case "bash":
		a, err := ParseBashArgs(args)
		if err != nil {
			return Escalation{}, err
		}
		wd := e.Cwd
		if a.Workdir != "" {
			wd = e.abs(a.Workdir)
		}
		return Escalation{Mode: a.SandboxPermissions, Justification: a.Justification, Command: a.Command, Workdir: wd}, nil
	case "write":
		a, err := ParseWriteArgs(args)
		if err != nil {
			return Escalation{}, err
		}
		return Escalation{Mode: a.SandboxPermissions, Justification: a.Justification, Path: e.abs(a.FilePath)}, nil
	}
	return Escalation{}, nil
}
