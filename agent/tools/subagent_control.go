package tools

import (
	"context"
	"encoding/json"
)

// Coordinator controls the background (continuable) children of a
// session for the tools that talk to them: send_message, list_agents,
// interrupt_agent and, in a child, report. The engine implements it
// (Env.Coordinator); each method returns what the caller's model reads.
type Coordinator interface {
	// Send queues message as the next turn of the caller's child id.
	Send(ctx context.Context, id, message string) (Result, error)
	// List lists the caller's background children (scope "children") or
	// its whole tree of them ("descendants").
	List(ctx context.Context, scope string) (Result, error)
	// Interrupt cancels the current turn of the background descendant id.
	Interrupt(ctx context.Context, id string) (Result, error)
	// Report hands output to the session that started the caller.
	Report(ctx context.Context, output string) (Result, error)
}

// The subagent control tools. Their names and arguments are the
// reference system's, so its recordings drive reel.
type (
	// SendMessage is send_message: a further turn for a background child.
	SendMessage struct{}
	// ListAgents is list_agents: the caller's background children.
	ListAgents struct{}
	// InterruptAgent is interrupt_agent: stop a background child's turn.
	InterruptAgent struct{}
	// Report is report, offered to background children only: their
	// result, handed to the agent that started them.
	Report struct{}
)

var (
	_ Tool = SendMessage{}
	_ Tool = ListAgents{}
	_ Tool = InterruptAgent{}
	_ Tool = Report{}
)

// Name returns "send_message".
func (SendMessage) Name() string { return "send_message" }

// Schema returns the tool's schema.
func (SendMessage) Schema() Schema {
	return Schema{
		Name: "send_message",
		Description: "Send a follow-up message to a background subagent you started (its id is in the subagent call's result). " +
			"The message becomes the subagent's next turn, after the work it has queued; this call returns at once. " +
			"When the subagent has no more work you receive one message saying how it finished.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"subagent_id": {"type": "string", "description": "The id of the background subagent."},
				"message": {"type": "string", "description": "The message: what the subagent should do next."}
			},
			"required": ["subagent_id", "message"]
		}`),
	}
}

// Run queues the message (Env.Coordinator).
func (t SendMessage) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	o, err := decodeArgs(t.Name(), raw)
	if err != nil {
		return Result{}, err
	}
	id, err := o.str("subagent_id", true)
	if err != nil {
		return Result{}, err
	}
	msg, err := o.str("message", true)
	if err != nil {
		return Result{}, err
	}
	if env == nil || env.Coordinator == nil {
		return unavailable(t.Name()), nil
	}
	return env.Coordinator.Send(ctx, id, msg)
}

// Name returns "list_agents".
func (ListAgents) Name() string { return "list_agents" }

// Schema returns the tool's schema.
func (ListAgents) Schema() Schema {
	return Schema{
		Name: "list_agents",
		Description: "List the background subagents you started, one per line: id, status in brackets " +
			"(running: working on a turn; idle: waiting for a message; ready: finished, continue it with send_message) and label.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"scope": {"type": "string", "enum": ["children", "descendants"], "description": "children (default): the subagents you started; descendants: also theirs, with their parent and depth."}
			}
		}`),
	}
}

// Run lists the caller's children (Env.Coordinator).
func (t ListAgents) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	o, err := decodeArgs(t.Name(), raw)
	if err != nil {
		return Result{}, err
	}
	scope, err := o.str("scope", false)
	if err != nil {
		return Result{}, err
	}
	switch scope {
	case "":
		scope = "children"
	case "children", "descendants":
	default:
		return Result{}, &ArgError{Tool: t.Name(), Arg: "scope", Msg: `want "children" or "descendants"`}
	}
	if env == nil || env.Coordinator == nil {
		return unavailable(t.Name()), nil
	}
	return env.Coordinator.List(ctx, scope)
}

// Name returns "interrupt_agent".
func (InterruptAgent) Name() string { return "interrupt_agent" }

// Schema returns the tool's schema.
func (InterruptAgent) Schema() Schema {
	return Schema{
		Name: "interrupt_agent",
		Description: "Stop the current turn of a background subagent you (or your subagents) started. " +
			"It returns once the stop is requested; stopping a subagent that has finished does nothing.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"agent_id": {"type": "string", "description": "The id of the background subagent."}
			},
			"required": ["agent_id"]
		}`),
	}
}

// Run requests the interruption (Env.Coordinator).
func (t InterruptAgent) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	o, err := decodeArgs(t.Name(), raw)
	if err != nil {
		return Result{}, err
	}
	id, err := o.str("agent_id", true)
	if err != nil {
		return Result{}, err
	}
	if env == nil || env.Coordinator == nil {
		return unavailable(t.Name()), nil
	}
	return env.Coordinator.Interrupt(ctx, id)
}

// Name returns "report".
func (Report) Name() string { return "report" }

// Schema returns the tool's schema.
func (Report) Schema() Schema {
	return Schema{
		Name: "report",
		Description: "Hand your result to the agent that started you. It receives the output as a message at its next step. " +
			"Report before you finish; you may report more than once.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"output": {"type": "string", "description": "The result, complete: the agent that started you sees only this."}
			},
			"required": ["output"]
		}`),
	}
}

// Run relays the output (Env.Coordinator).
func (t Report) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	o, err := decodeArgs(t.Name(), raw)
	if err != nil {
		return Result{}, err
	}
	out, err := o.str("output", true)
	if err != nil {
		return Result{}, err
	}
	if env == nil || env.Coordinator == nil {
		return unavailable(t.Name()), nil
	}
	return env.Coordinator.Report(ctx, out)
}

// unavailable is the result of a control tool run without a Coordinator.
func unavailable(tool string) Result {
	return Result{Text: "Error: " + tool + " is not available in this session", IsError: true}
}

// ReportSection is the system prompt's paragraph for a background child,
// which has the report tool.
const ReportSection = "You are a background subagent: the agent that started you does not see your answers. " +
	"Deliver your result with the report tool before you finish: it is handed to that agent as a message. " +
	"Keep working until the task is done, then report once with everything it needs."
