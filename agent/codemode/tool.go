package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/internal/strictjson"
)

// ToolName is the model-facing name of the code-mode tool.
const ToolName = "run_code"

// Limits bound one run_code run. A zero field takes its default.
type Limits struct {
	// Compute is the time the program may spend running JavaScript, not
	// counting the time its tool calls take (default DefaultCompute).
	Compute time.Duration
	// Wall is the whole run's time, tool calls included (default
	// DefaultWall).
	Wall time.Duration
	// MaxCalls is how many tool calls one run may make (default
	// DefaultMaxCalls).
	MaxCalls int
	// MaxOutput is how many bytes the printed lines and the rendered
	// return value may take together (default DefaultMaxOutput).
	MaxOutput int
	// MaxArgBytes caps the JSON arguments of one tool call (default
	// DefaultMaxArgBytes).
	MaxArgBytes int
	// MaxHeap is how far the process's heap may grow while the program
	// runs, in bytes (default DefaultMaxHeap).
	MaxHeap uint64
}

// The default limits.
const (
	DefaultCompute     = 60 * time.Second
	DefaultWall        = 10 * time.Minute
	DefaultMaxCalls    = 1000
	DefaultMaxOutput   = 256 << 10
	DefaultMaxArgBytes = 1 << 20
	DefaultMaxHeap     = 512 << 20
)

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	if l.Compute <= 0 {
		l.Compute = DefaultCompute
	}
	if l.Wall <= 0 {
		l.Wall = DefaultWall
	}
	if l.MaxCalls <= 0 {
		l.MaxCalls = DefaultMaxCalls
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = DefaultMaxOutput
	}
	if l.MaxArgBytes <= 0 {
		l.MaxArgBytes = DefaultMaxArgBytes
	}
	if l.MaxHeap == 0 {
		l.MaxHeap = DefaultMaxHeap
	}
	return l
}

// Tool is the run_code tool. Its programs' tool calls go through
// Env.Dispatcher.
type Tool struct {
	// Limits bound each run.
	Limits Limits
}

var _ tools.Tool = Tool{}

// Name implements tools.Tool.
func (Tool) Name() string { return ToolName }

// Schema implements tools.Tool: the reference's two required string
// arguments, code and description.
func (Tool) Schema() tools.Schema {
	return tools.Schema{
		Name: ToolName,
		// The reference's TypeScript wording, less its sentence on attached
		// images (reel attaches none).
		Description: "Execute a TypeScript program against the available tools. Takes two required " +
			"arguments: `code`, the BODY of an async function (erasable syntax only; top-level " +
			"`await` and `return` work), and `description`, a short summary of what the program " +
			"does. Call tools as `await tools.name(args)` per the declarations in the system " +
			"prompt. Only what you print or return is program output — curate it.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"code":{"type":"string","description":"The program: the body of an async TypeScript function."},` +
			`"description":{"type":"string","description":"Clear, concise description of what this program does in active voice, 5-10 words (shown in the UI). Examples: \"Count TODO markers across packages\"; \"Read failing test and its fixture\"; \"Rename config key in every cordis.yml\"."}},` +
			`"required":["code","description"],"additionalProperties":false}`),
	}
}

// Args are run_code's arguments.
type Args struct {
	// Code is the program, the body of an async function.
	Code string
	// Description says what the program does.
	Description string
}

// ParseArgs decodes run_code's arguments strictly: a JSON object with
// exactly the string members code and description (spelled exactly, each
// once, description not blank). Its error is a *tools.ArgError.
func ParseArgs(raw json.RawMessage) (Args, error) {
	argErr := func(arg string, err error) error {
		return &tools.ArgError{Tool: ToolName, Arg: arg, Msg: "invalid", Err: err}
	}
	v, err := strictjson.Parse("", raw)
	if err != nil {
		return Args{}, argErr("", err)
	}
	obj, err := v.Object()
	if err != nil {
		return Args{}, argErr("", err)
	}
	names := []string{"code", "description"}
	if err := obj.Check(names, strictjson.Fields{Allowed: names, Required: names}, ToolName); err != nil {
		return Args{}, argErr("", err)
	}
	var a Args
	c, _ := obj.Get("code")
	if a.Code, err = c.Str(); err != nil {
		return Args{}, argErr("code", err)
	}
	d, _ := obj.Get("description")
	if a.Description, err = d.Str(); err != nil {
		return Args{}, argErr("description", err)
	}
	if isBlank(a.Description) {
		return Args{}, &tools.ArgError{Tool: ToolName, Arg: "description", Msg: "must not be empty"}
	}
	return a, nil
}

// isBlank reports whether s holds only white space.
func isBlank(s string) bool {
	for _, r := range s {
		if r != ' ' && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
	}
	return true
}

// Describe implements tools.Describer: a call is shown by its description.
func (Tool) Describe(raw json.RawMessage) (string, tools.Kind, []tools.Location) {
	a, err := ParseArgs(raw)
	if err != nil {
		return ToolName, tools.KindExecute, nil
	}
	return a.Description, tools.KindExecute, nil
}

// Run implements tools.Tool: it runs the program and returns its output,
// or the failure of the run as an error result.
func (t Tool) Run(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := ParseArgs(raw)
	if err != nil {
		return tools.Result{}, err
	}
	res := tools.Result{Kind: tools.KindExecute, Title: a.Description}
	if env == nil || env.Dispatcher == nil {
		res.Text, res.IsError = "run_code cannot call tools in this session (no dispatcher); nothing was run.", true
		return res, nil
	}
	out := execute(ctx, env.Dispatcher, env.CallID, a.Code, t.Limits.withDefaults())
	res.Text, res.IsError = out.text(), out.failure != nil
	if out.failure != nil && errors.Is(ctx.Err(), context.Canceled) {
		return res, fmt.Errorf("codemode: run_code cancelled: %w", ctx.Err())
	}
	return res, nil
}

// Admit says whether a call of tool name may run when code mode is on:
// from the model directly (inner false), only run_code; from inside a
// program (inner true), anything but run_code. The error is the model's
// message.
func Admit(name string, inner bool) error {
	switch {
	case inner && name == ToolName:
		return errors.New("run_code cannot be called from inside a run_code program")
	case !inner && name != ToolName:
		return fmt.Errorf("only `run_code` is callable directly — call `%s` from inside a `run_code` program instead", name)
	}
	return nil
}

// WireSchemas is the tool list the model is offered in code mode: run_code's
// schema alone, encoded as tools.Set.Schemas encodes a list.
func (t Tool) WireSchemas() json.RawMessage {
	s, err := tools.NewSet(t)
	if err != nil {
		panic(err) // one tool with a valid schema
	}
	return s.Schemas()
}
