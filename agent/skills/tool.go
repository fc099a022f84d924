package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reel-agent/reel/agent/tools"
)

// ToolName is the name the model calls the skill tool by.
const ToolName = "skill"

// Tool is the skill tool: it loads the instructions of a skill in the
// catalog. It discovers the catalog afresh from env.Cwd at each call, so
// what it loads is the skills as they are on disk now (as the reference
// does), whatever catalog the model was shown. Run may be called
// concurrently.
type Tool struct {
	// Options are the discovery options; the engine gives the tool the
	// ones it discovers the session's catalog with.
	Options Options
}

var _ tools.Tool = Tool{}

// Name returns "skill".
func (Tool) Name() string { return ToolName }

// Schema returns the skill tool's schema: one required string, name.
func (Tool) Schema() tools.Schema {
	return tools.Schema{
		Name: ToolName,
		Description: "Load the complete instructions of a skill listed in this session's skill catalog. " +
			"When the user names a skill, or the task clearly matches a skill's description, call this with the skill's exact name before acting on the task.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The skill's exact name, as the catalog lists it."}},"required":["name"]}`),
	}
}

// Args are the arguments of the skill tool.
type Args struct {
	// Name is the skill to load.
	Name string `json:"name"`
}

// ParseArgs decodes the skill tool's arguments strictly: a JSON object
// whose only member is the string "name" (spelled exactly, given once).
// Its error is a *tools.ArgError.
func ParseArgs(raw json.RawMessage) (Args, error) {
	argErr := func(arg, msg string, err error) error {
		return &tools.ArgError{Tool: ToolName, Arg: arg, Msg: msg, Err: err}
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return Args{}, argErr("name", "missing (required)", nil)
	}
	if !json.Valid(trimmed) {
		return Args{}, argErr("", "malformed JSON", nil)
	}
	if trimmed[0] != '{' {
		return Args{}, argErr("", "want a JSON object", nil)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	_, _ = dec.Token() // {
	var a Args
	found := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return Args{}, argErr("", "malformed JSON", err)
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return Args{}, argErr("", "malformed JSON", err)
		}
		switch {
		case key == "name" && found:
			return Args{}, argErr("name", "given more than once", nil)
		case key == "name":
			found = true
			if string(v) == "null" {
				found = false
				continue
			}
			if err := json.Unmarshal(v, &a.Name); err != nil {
				return Args{}, argErr("name", "want a string", nil)
			}
		case strings.EqualFold(key, "name"):
			return Args{}, argErr(key, `unknown argument; names are case-sensitive (did you mean "name"?)`, nil)
		default:
			return Args{}, argErr(key, `unknown argument (want "name")`, nil)
		}
	}
	if !found {
		return Args{}, argErr("name", "missing (required)", nil)
	}
	return a, nil
}

// Describe returns the title and kind of a skill call for the client:
// "Load skill NAME", a read.
func (Tool) Describe(args json.RawMessage) (title string, kind tools.Kind, locations []tools.Location) {
	a, err := ParseArgs(args)
	if err != nil {
		return ToolName, tools.KindRead, nil
	}
	return "Load skill " + a.Name, tools.KindRead, nil
}

// Run loads the skill. An unknown, invalid or model-disabled name is an
// IsError result: `Error: skill "NAME" is unknown or no longer available`,
// `Error: invalid skill name "NAME"`, `Error: skill "NAME" is not
// available for model invocation`.
func (t Tool) Run(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := ParseArgs(raw)
	if err != nil {
		return tools.Result{}, err
	}
	if env == nil || env.Cwd == "" {
		return tools.Result{}, fmt.Errorf("%w: no cwd", tools.ErrEnv)
	}
	title := "Load skill " + a.Name
	c, _ := Discover(ctx, env.Cwd, t.Options)
	if err := ctx.Err(); err != nil {
		return tools.Result{}, fmt.Errorf("skills: load %q: %w", a.Name, err)
	}
	s, body, err := c.load(a.Name, func(s Skill) error {
		if !s.ModelInvocable {
			return fmt.Errorf("%w: skill \"%s\" is not available for model invocation", ErrNotModelInvocable, a.Name)
		}
		return nil
	})
	if err != nil {
		return tools.Result{Text: "Error: " + messageOf(err), IsError: true, Kind: tools.KindRead, Title: title}, nil
	}
	return tools.Result{
		Text:      Content(s, body),
		Kind:      tools.KindRead,
		Title:     title,
		Locations: []tools.Location{{Path: s.Path}},
	}, nil
}
