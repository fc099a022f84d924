package hooks

import (
	"strconv"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/internal/jsrules"
	"github.com/reel-agent/reel/sessionlog"
)

// The stdin payloads, one JSON object per event, written as the
// reference bridges' JSON.stringify writes them: snake_case members in a
// fixed order.

// payload is an object being written; its members are appended in order.
type payload struct{ b []byte }

func (w *payload) key(k string) {
	if len(w.b) == 0 {
		w.b = append(w.b, '{')
	} else {
		w.b = append(w.b, ',')
	}
	w.b = sessionlog.AppendString(w.b, k)
	w.b = append(w.b, ':')
}

func (w *payload) str(k, v string) *payload {
	w.key(k)
	w.b = sessionlog.AppendString(w.b, v)
	return w
}

func (w *payload) raw(k, v string) *payload {
	w.key(k)
	w.b = append(w.b, v...)
	return w
}

func (w *payload) bool(k string, v bool) *payload {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
	return w
}

func (w *payload) done() []byte { return append(w.b, '}') }

// base starts a payload of dialect d for event at p. Claude Code:
// session_id, transcript_path ("" when none), cwd, hook_event_name. Codex
// adds model and permission_mode, writes a missing transcript_path as
// null, and adds turn_id on the turn-scoped events (all but SessionStart).
func base(d Dialect, p *agent.HookPoint, event string) *payload {
	w := &payload{}
	w.str("session_id", p.Session)
	if d == Codex && p.TranscriptPath == "" {
		w.raw("transcript_path", "null")
	} else {
		w.str("transcript_path", p.TranscriptPath)
	}
	w.str("cwd", p.Cwd).str("hook_event_name", event)
	if d == Codex {
		w.str("model", p.Model).str("permission_mode", "default")
		if event != EventSessionStart {
			w.str("turn_id", strconv.Itoa(p.Turn))
		}
	}
	return w
}

// toolInput is a call's tool_input: for Claude Code its arguments object
// as JSON.stringify(JSON.parse(args)) writes it; for Codex the reduced
// {"command": …} of its string "command" argument ("" without one).
func toolInput(d Dialect, call agent.ToolCall) string {
	v, _ := jsrules.Parse(call.ToolInput())
	o, _ := v.(*jsrules.Object)
	if d == Codex {
		cmd, _ := o.Get("command").(string)
		return string(sessionlog.AppendString([]byte(`{"command":`), cmd)) + "}"
	}
	if o == nil {
		return "{}"
	}
	return string(jsrules.Append(nil, o))
}

func sessionStartPayload(d Dialect, p *agent.HookPoint, source string) []byte {
	return base(d, p, EventSessionStart).str("source", source).done()
}

func promptPayload(d Dialect, p *agent.HookPoint, prompt string) []byte {
	return base(d, p, EventUserPromptSubmit).str("prompt", prompt).done()
}

func preToolPayload(d Dialect, p *agent.HookPoint, call agent.ToolCall) []byte {
	return base(d, p, EventPreToolUse).str("tool_name", call.Name).
		raw("tool_input", toolInput(d, call)).str("tool_use_id", call.ID).done()
}

func postToolPayload(d Dialect, p *agent.HookPoint, call agent.ToolCall, response string) []byte {
	return base(d, p, EventPostToolUse).str("tool_name", call.Name).
		raw("tool_input", toolInput(d, call)).str("tool_use_id", call.ID).
		str("tool_response", response).done()
}

func stopPayload(d Dialect, p *agent.HookPoint) []byte {
	w := base(d, p, EventStop).bool("stop_hook_active", p.StopHookActive)
	if d == Codex {
		w.raw("last_assistant_message", "null")
	}
	return w.done()
}
