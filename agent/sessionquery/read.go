package sessionquery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// EventRead is the session_event_read tool.
type EventRead struct{}

var (
	_ tools.Tool      = EventRead{}
	_ tools.Describer = EventRead{}
)

// Name returns "session_event_read".
func (EventRead) Name() string { return ToolName }

// Schema returns the reference's schema of session_event_read.
func (EventRead) Schema() tools.Schema {
	return tools.Schema{
		Name:        ToolName,
		Description: "Read one full unabridged event and optional neighboring raw-event summaries from an authorized session.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"session_id":{"type":"string","description":"Target session id. Omit for the current session."},` +
			`"seq":{"type":"integer","description":"Target event sequence number."},` +
			`"before":{"type":"integer","description":"Number of preceding raw events to summarize. Omit for none."},` +
			`"after":{"type":"integer","description":"Number of following raw events to summarize. Omit for none."}},` +
			`"required":["seq"]}`),
	}
}

// Describe announces a call as the reference does: "Read event N", a read.
func (EventRead) Describe(args json.RawMessage) (string, tools.Kind, []tools.Location) {
	a, err := ParseEventReadArgs(args)
	if err != nil {
		return ToolName, tools.KindRead, nil
	}
	return "Read event " + strconv.FormatInt(a.Seq, 10), tools.KindRead, nil
}

// errOutside is the reference's refusal of a target the caller may not
// read.
const errOutside = "Error: session target is outside the caller workspace"

// Run reads the event.
func (EventRead) Run(_ context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := ParseEventReadArgs(raw)
	if err != nil {
		return tools.Result{}, err
	}
	title := "Read event " + strconv.FormatInt(a.Seq, 10)
	fail := func(text string) (tools.Result, error) {
		return tools.Result{Text: text, IsError: true, Kind: tools.KindRead, Title: title}, nil
	}
	h := env.History
	if h == nil {
		return fail("Error: session query tools require an agent-bound caller")
	}
	id := h.SessionID()
	if a.SessionID != "" && a.SessionID != id {
		return fail(errOutside)
	}
	// Seq is at most 2^53-1; the window's ends are clamped by Window.
	from, to := clampInt(a.Seq-int64(a.Before)), clampInt(a.Seq+int64(a.After))
	events, n := h.Window(from, to)
	if a.Seq >= int64(n) {
		return fail(fmt.Sprintf("Error: session %q has no event at seq %d", id, a.Seq))
	}
	out := env.NewOutput(ToolName)
	name := h.Title()
	if name == "" {
		name = "untitled"
	}
	_, _ = out.WriteString("Session " + id + " — " + name + "\nTarget event seq " + strconv.FormatInt(a.Seq, 10) + ":\n```json\n")
	var before, after []*sessionlog.Event
	for i := range events {
		e := &events[i]
		switch {
		case int64(e.Seq) < a.Seq:
			before = append(before, e)
		case int64(e.Seq) > a.Seq:
			after = append(after, e)
		default:
			writeIndented(out, e)
		}
	}
	_, _ = out.WriteString("\n```")
	for _, sec := range []struct {
		name   string
		events []*sessionlog.Event
	}{{"Before:", before}, {"After:", after}} {
		if len(sec.events) == 0 {
			continue
		}
		_, _ = out.WriteString("\n\n" + sec.name)
		for _, e := range sec.events {
			_, _ = out.WriteString("\n")
			writeNeighbor(out, e)
		}
	}
	text, _ := out.Text()
	return tools.Result{Text: text, Kind: tools.KindRead, Title: title}, nil
}

// clampInt converts a window end to int, within [0, MaxInt].
func clampInt(v int64) int {
	return int(max(v, 0))
}

// writeIndented writes the event's canonical JSON indented by two spaces,
// as JSON.stringify(event, null, 2) lays it out.
func writeIndented(out *tools.Output, e *sessionlog.Event) {
	var b bytes.Buffer
	if err := json.Indent(&b, e.AppendJSON(nil), "", "  "); err != nil {
		// A stored event is valid JSON; show it as it is should it not be.
		b.Reset()
		b.Write(e.AppendJSON(nil))
	}
	_, _ = out.Write(b.Bytes())
}

// writeNeighbor writes one neighbour's summary line and its semantic text.
func writeNeighbor(out *tools.Output, e *sessionlog.Event) {
	line := fmt.Sprintf("- seq %d | %s | %s", e.Seq, e.Type, time.UnixMilli(e.Time).UTC().Format("2006-01-02T15:04:05.000Z"))
	_, _ = out.WriteString(line)
	text := EventText(e)
	if text == "" {
		_, _ = out.WriteString(" | (no semantic text)")
		return
	}
	_, _ = out.WriteString("\n  " + strings.ReplaceAll(escapeControls(text), "\n", "\n  "))
}

// escapeControls writes the control characters of a summary other than
// line feed and tab as JSON escapes (\u001b), as the target event's JSON
// shows them: a summary carries no raw terminal control sequence.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, isEscaped) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isEscaped(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isEscaped reports the control characters escapeControls escapes.
func isEscaped(r rune) bool {
	return r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0)
}
