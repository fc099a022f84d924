package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Todo is one entry of the model's todo list.
type Todo struct {
	// Content says what to do.
	Content string `json:"content"`
	// Status is pending, in_progress or completed.
	Status string `json:"status"`
	// Priority is high, medium (default) or low.
	Priority string `json:"priority,omitempty"`
}

// TodoArgs are the arguments of the todo_write tool.
type TodoArgs struct {
	// Todos is the whole, current list (it replaces the previous one).
	Todos []Todo `json:"todos"`
}

// ParseTodoArgs decodes and checks the todo_write tool's arguments.
func ParseTodoArgs(raw json.RawMessage) (TodoArgs, error) {
	var a TodoArgs
	if _, err := decodeArgs("todo_write", raw); err != nil {
		return a, err
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, &ArgError{Tool: "todo_write", Arg: "todos", Msg: "must be a list of {content, status, priority}", Err: err}
	}
	if a.Todos == nil {
		return a, &ArgError{Tool: "todo_write", Arg: "todos", Msg: "is required"}
	}
	for i, t := range a.Todos {
		if strings.TrimSpace(t.Content) == "" {
			return a, &ArgError{Tool: "todo_write", Arg: "todos", Msg: fmt.Sprintf("entry %d has no content", i+1)}
		}
		switch t.Status {
		case "pending", "in_progress", "completed":
		default:
			return a, &ArgError{Tool: "todo_write", Arg: "todos", Msg: fmt.Sprintf("entry %d: status %q must be pending, in_progress or completed", i+1, t.Status)}
		}
		switch t.Priority {
		case "", "high", "medium", "low":
		default:
			return a, &ArgError{Tool: "todo_write", Arg: "todos", Msg: fmt.Sprintf("entry %d: priority %q must be high, medium or low", i+1, t.Priority)}
		}
	}
	return a, nil
}

// TodoWrite is the todo_write tool: the model keeps its plan as a list the
// editor shows (the agent turns a successful call into an ACP plan update).
type TodoWrite struct{}

var _ Tool = TodoWrite{}

// Name returns "todo_write".
func (TodoWrite) Name() string { return "todo_write" }

// Schema returns the todo_write tool's schema.
func (TodoWrite) Schema() Schema {
	params := `{
		"type": "object",
		"properties": {
			"todos": {
				"type": "array",
				"description": "The whole current todo list; it replaces the previous one.",
				"items": {
					"type": "object",
					"properties": {
						"content": {"type": "string", "description": "What to do."},
						"status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
						"priority": {"type": "string", "enum": ["high", "medium", "low"]}
					},
					"required": ["content", "status"]
				}
			}
		},
		"required": ["todos"]
	}`
	return Schema{
		Name:        "todo_write",
		Description: "Record your plan for a multi-step task as a todo list the user can follow. Send the whole list each time; keep one item in_progress while you work on it.",
		Parameters:  compactJSON(params),
	}
}

// Run implements Tool: it validates the list and summarizes it.
func (TodoWrite) Run(_ context.Context, _ *Env, raw json.RawMessage) (Result, error) {
	a, err := ParseTodoArgs(raw)
	if err != nil {
		return Result{}, err
	}
	n := map[string]int{}
	for _, t := range a.Todos {
		n[t.Status]++
	}
	return Result{
		Text:  fmt.Sprintf("Updated todo list: %d pending, %d in progress, %d completed.", n["pending"], n["in_progress"], n["completed"]),
		Kind:  KindOther,
		Title: fmt.Sprintf("Update plan (%d items)", len(a.Todos)),
	}, nil
}
