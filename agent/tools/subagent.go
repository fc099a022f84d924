package tools

import (
	"context"
	"encoding/json"
)

// Delegation is one call of the subagent tools: a child agent to run on
// Prompt (Description labels it), seeded with the caller's completed turns
// when Fork is set, for the call CallID.
type Delegation struct {
	Fork bool
	// Background starts a continuable child: the call returns its id at
	// once, the child works on its own and can be sent further turns
	// (Coordinator).
	Background          bool
	Description, Prompt string
	CallID              string
}

// Delegator runs child agents for the subagent tools: it creates the
// child (its own session and log), runs its turn (or, Background, starts
// it) and returns what the caller's model reads. The engine implements it
// (Env.Delegator).
type Delegator interface {
	Delegate(ctx context.Context, d Delegation) (Result, error)
}

// SubagentArgs are the arguments of subagent and subagent_fork.
type SubagentArgs struct {
	Description, Prompt string
	// RunInBackground is subagent's run_in_background (always false for
	// subagent_fork, which has no such argument).
	RunInBackground bool
}

// ParseSubagentArgs parses the arguments of the tool named tool
// ("subagent" or "subagent_fork").
func ParseSubagentArgs(tool string, raw json.RawMessage) (SubagentArgs, error) {
	var a SubagentArgs
	o, err := decodeArgs(tool, raw)
	if err != nil {
		return a, err
	}
	if a.Description, err = o.str("description", true); err != nil {
		return a, err
	}
	if a.Prompt, err = o.str("prompt", true); err != nil {
		return a, err
	}
	if o.has("run_in_background") {
		if a.RunInBackground, err = o.boolean("run_in_background"); err != nil {
			return a, err
		}
	}
	return a, nil
}

// Subagent is the subagent tool (a fresh child) or, with Fork, the
// subagent_fork tool (a child that starts from the caller's completed
// turns). The call waits for the child's one turn and returns its final
// text, or, for subagent with run_in_background true, starts a background
// child and returns its id; the child runs under the caller's sandbox
// mode, never asks for approval, and may not delegate further than the
// depth limit.
type Subagent struct {
	// Fork makes it subagent_fork.
	Fork bool
}

var (
	_ Tool      = Subagent{}
	_ Describer = Subagent{}
)

// Name returns "subagent" or "subagent_fork".
func (s Subagent) Name() string {
	if s.Fork {
		return "subagent_fork"
	}
	return "subagent"
}

// Schema returns the tool's schema.
func (s Subagent) Schema() Schema {
	if s.Fork {
		return Schema{
			Name: "subagent_fork",
			Description: "Delegate a task to a child agent that starts from this conversation's completed turns (not the current one) " +
				"and works on its own. This call waits for the child and returns its final answer. " +
				"The child runs under this session's sandbox mode and cannot ask for approval.",
			Parameters: compactJSON(`{
				"type": "object",
				"properties": {
					"description": {"type": "string", "description": "A short (3-5 word) label of the task."},
					"prompt": {"type": "string", "description": "The task for the child agent, with everything it needs to know beyond the conversation so far."}
				},
				"required": ["description", "prompt"]
			}`),
		}
	}
	return Schema{
		Name: "subagent",
		Description: "Delegate a self-contained task to a fresh child agent that does not see this conversation. " +
			"By default this call waits for the subagent and returns its result. " +
			"With run_in_background true it returns the subagent's id at once: the subagent works on its own, " +
			"you can send it further messages with send_message and list it with list_agents, " +
			"it hands you its result with its report tool, and you receive a message when it has finished. " +
			"The child runs under this session's sandbox mode and cannot ask for approval.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"description": {"type": "string", "description": "A short (3-5 word) label of the task."},
				"prompt": {"type": "string", "description": "The whole task for the child agent: it sees nothing else."},
				"run_in_background": {"type": "boolean", "description": "true: start the subagent in the background and return its id at once; false or absent: wait for its result."}
			},
			"required": ["description", "prompt"]
		}`),
	}
}

// Describe implements Describer: the call is shown with its description.
func (s Subagent) Describe(args json.RawMessage) (string, Kind, []Location) {
	a, err := ParseSubagentArgs(s.Name(), args)
	if err != nil || a.Description == "" {
		return s.Name(), KindThink, nil
	}
	return s.Name() + ": " + a.Description, KindThink, nil
}

// Run delegates the task (Env.Delegator) and returns the child's result.
func (s Subagent) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	a, err := ParseSubagentArgs(s.Name(), raw)
	if err != nil {
		return Result{}, err
	}
	title, kind, _ := s.Describe(raw)
	if a.RunInBackground && s.Fork {
		// The reference's refusal, word for word.
		return errorResult(title, kind, nil, "Error: run_in_background is disabled for this tool instance (enableRunInBackground: false)"), nil
	}
	if env == nil || env.Delegator == nil {
		return errorResult(title, kind, nil, "Error: subagents are not available in this session"), nil
	}
	res, err := env.Delegator.Delegate(ctx, Delegation{Fork: s.Fork, Background: a.RunInBackground, Description: a.Description, Prompt: a.Prompt, CallID: env.CallID})
	res.Kind, res.Title = kind, title
	return res, err
}
