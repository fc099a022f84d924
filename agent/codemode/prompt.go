package codemode

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// outputType is the TypeScript type of the value a call of tool name
// resolves to (tools.Result.Value, agent/tools/value.go): its result text
// for a tool that has no value.
func outputType(name string) string {
	switch name {
	case "bash":
		return `{
    kind: "background";
    jobId: string;
  } | {
    kind: "foreground";
    exitCode: number | null;
    signal: string | null;
    timedOut: boolean;
    aborted: boolean;
    timeoutMs: number;
    /** The command's stdout and stderr together, interleaved as written. */
    stdout: { text: string; truncated: boolean; spillPath?: string };
    /** Always empty: stderr is collected with stdout. */
    stderr: { text: string; truncated: boolean; spillPath?: string };
    /** Present when the sandbox denied an effect of the command. */
    sandbox?: { mode: string; denied: boolean };
  }`
	case "read":
		return `{
    path: string;
    offset: number;
    lines: { number: number; text: string }[];
    totalLines: number;
  }`
	}
	return "string"
}

// PromptHeading opens PromptSection: a system prompt holds it exactly when
// it was written in code mode.
const PromptHeading = "## Code mode"

// PromptSection is the system prompt's part for code mode: how to write a
// run_code program, and the tools a program may call (schemas, a tool list
// as tools.Set.Schemas encodes it, run_code left out) declared as
// TypeScript, and the limits l of a run (zero fields: the defaults).
func PromptSection(schemas json.RawMessage, l Limits) string {
	l = l.withDefaults()
	var list []decl
	_ = json.Unmarshal(schemas, &list)
	list = slices.DeleteFunc(list, func(s decl) bool {
		return s.Name == ToolName
	})
	slices.SortFunc(list, func(a, b decl) int {
		return strings.Compare(a.Name, b.Name)
	})
	var b strings.Builder
	b.WriteString(PromptHeading + "\n\n")
	b.WriteString("`run_code` is the only tool you can call directly; calling any other tool by name fails. " +
		"Every tool declared below is called from inside a `run_code` program.\n\n")
	b.WriteString("A program is the body of an async TypeScript function (erasable syntax only — no `enum` or namespaces; type annotations are advisory, the code runs type-stripped). Inside it:\n\n")
	b.WriteString("- `await tools.NAME(args)` calls a tool (`tools[\"NAME\"](args)` for any name). Arguments must be JSON: no undefined, functions, NaN or class instances. " +
		"Each call runs exactly as a direct call would, under the same sandbox mode and approvals, one at a time in the order made.\n")
	b.WriteString("- A call resolves to the tool's value as declared in `ToolOutputMap`. A call that fails rejects with a `ToolCallError` (`toolName` names the tool, `message` says what failed); catch it with `try`/`catch` to go on.\n")
	b.WriteString("- `console.log(...)` prints a line; `return` gives the program's value (a string as it is, anything else as indented JSON). " +
		"The result of the `run_code` call is the printed lines followed by the returned value and nothing else, so keep only what you need.\n")
	b.WriteString(fmt.Sprintf("- A run is bounded: %d tool calls, %d s of computation, %d bytes of output. There are no timers, modules, network or file APIs apart from the tools.\n\n",
		l.MaxCalls, int(l.Compute.Seconds()), l.MaxOutput))
	b.WriteString("```ts\ntype JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }\n\ninterface ToolArgsMap {\n")
	for _, s := range list {
		fmt.Fprintf(&b, "  /** %s */\n", comment(s.Description))
		var sch schema
		_ = json.Unmarshal(s.Parameters, &sch)
		fmt.Fprintf(&b, "  %s: %s;\n", key(s.Name), sch.ts(1))
	}
	b.WriteString("}\n\ninterface ToolOutputMap {\n")
	for _, s := range list {
		fmt.Fprintf(&b, "  %s: %s;\n", key(s.Name), outputType(s.Name))
	}
	b.WriteString("}\n\ntype ToolName = keyof ToolOutputMap\n\n")
	b.WriteString("declare class ToolCallError extends Error {\n  readonly name: \"ToolCallError\";\n  readonly toolName: ToolName;\n}\n\n")
	b.WriteString("declare const tools: {\n  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;\n}\n```\n")
	return b.String()
}

// decl is one tool's schema as a tool list encodes it.
type decl struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// schema is the part of a JSON Schema the declarations render.
type schema struct {
	Type        any               `json:"type"`
	Description string            `json:"description"`
	Enum        []any             `json:"enum"`
	Properties  map[string]schema `json:"properties"`
	Order       []string          `json:"-"`
	Required    []string          `json:"required"`
	Items       *schema           `json:"items"`
}

// UnmarshalJSON keeps the properties' order.
func (s *schema) UnmarshalJSON(b []byte) error {
	type plain schema
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*s = schema(p)
	var raw struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(b, &raw) == nil && len(raw.Properties) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(raw.Properties)))
		if _, err := dec.Token(); err == nil {
			for dec.More() {
				t, err := dec.Token()
				if err != nil {
					break
				}
				k, _ := t.(string)
				s.Order = append(s.Order, k)
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break
				}
			}
		}
	}
	return nil
}

// ts renders s as a TypeScript type at indentation level depth.
func (s schema) ts(depth int) string {
	if len(s.Enum) > 0 {
		var alts []string
		for _, e := range s.Enum {
			b, _ := json.Marshal(e)
			alts = append(alts, string(b))
		}
		return strings.Join(alts, " | ")
	}
	t, _ := s.Type.(string)
	switch t {
	case "string", "boolean":
		return t
	case "number", "integer":
		return "number"
	case "array":
		if s.Items == nil {
			return "JsonValue[]"
		}
		inner := s.Items.ts(depth)
		if strings.Contains(inner, "|") {
			inner = "(" + inner + ")"
		}
		return inner + "[]"
	case "object":
		if len(s.Order) == 0 {
			return "Record<string, JsonValue>"
		}
		pad := strings.Repeat("  ", depth+1)
		var b strings.Builder
		b.WriteString("{\n")
		for _, name := range s.Order {
			p := s.Properties[name]
			if p.Description != "" {
				fmt.Fprintf(&b, "%s/** %s */\n", pad, comment(p.Description))
			}
			opt := "?"
			if slices.Contains(s.Required, name) {
				opt = ""
			}
			fmt.Fprintf(&b, "%s%s%s: %s;\n", pad, key(name), opt, p.ts(depth+1))
		}
		b.WriteString(strings.Repeat("  ", depth) + "}")
		return b.String()
	}
	return "JsonValue"
}

// comment makes text safe inside a /** */ comment.
func comment(text string) string {
	return strings.ReplaceAll(strings.ReplaceAll(text, "*/", "*\\/"), "\n", " ")
}

// key is name as an object type's key: bare when it is an identifier,
// quoted otherwise.
func key(name string) string {
	for i, r := range name {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			b, _ := json.Marshal(name)
			return string(b)
		}
	}
	if name == "" {
		return `""`
	}
	return name
}
