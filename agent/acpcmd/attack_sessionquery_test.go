package acpcmd_test

import (
	"os"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
)

// toolResultTexts returns, by call id, the text and error flag of every
// tool result in events.
func toolResultTexts(t *testing.T, events []sessionlog.Event) map[string]struct {
	Text    string
	IsError bool
} {
	t.Helper()
	out := map[string]struct {
		Text    string
		IsError bool
	}{}
	for i := range events {
		if events[i].Type != sessionlog.TypeToolResult {
			continue
		}
		d, err := sessionlog.DecodeData[sessionlog.ToolResultData](&events[i])
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range d.Message.Content {
			var b strings.Builder
			for _, c := range p.Content {
				b.WriteString(c.Text)
			}
			out[p.ToolCallID] = struct {
				Text    string
				IsError bool
			}{b.String(), p.IsError}
		}
	}
	return out
}

// TestAttackSessionEventRead drives the real binary with
// --session-query: session A holds a secret in its prompt; a model in
// session B, in the same process and workspace, asks session_event_read
// for A's events by id, by A's log path, by a path trick, and reads its
// own log with out-of-range, negative, fractional, huge and case-folded
// arguments, and a 300 KB event full of control characters with the widest
// window. Every foreign read is refused and A's secret is in none of B's
// results; every bad argument is an error result naming the argument; the
// huge event's result is bounded (head and tail, the whole kept in a spill
// file) and carries no raw control character; the process survives and
// the session answers.
func TestAttackSessionEventRead(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-OF-SESSION-A-7f3c"
	dir, ws, state := workspace(t)
	huge := "HUGE-START\x07\x1b[2J\x00\r" + strings.Repeat("payload \x1b]0;title\x07 ", 20000) + "HUGE-END"
	type attack struct {
		id, args, want string // want: in the error result
	}
	attacks := []attack{
		{"other-session", `{"session_id":"A-ID","seq":4}`, "outside the caller workspace"},
		{"other-log-path", `{"session_id":"STATE/A-ID.jsonl","seq":4}`, "outside the caller workspace"},
		{"path-trick", `{"session_id":"B-ID/../A-ID","seq":4}`, "outside the caller workspace"},
		{"out-of-range", `{"seq":100000}`, "has no event at seq 100000"},
		{"negative", `{"seq":-1}`, `"seq": must be a non-negative safe integer`},
		{"fraction", `{"seq":4.5}`, `"seq": must be a non-negative safe integer`},
		{"huge", `{"seq":9007199254740993}`, `"seq": must be a non-negative safe integer`},
		{"exponent", `{"seq":1e300}`, `"seq": must be a non-negative safe integer`},
		{"string", `{"seq":"4"}`, `"seq": must be a non-negative safe integer`},
		{"window", `{"seq":4,"before":51}`, `"before": must be an integer between 0 and 50`},
		{"case", `{"Seq":4}`, `names are case-sensitive`},
		{"twice", `{"seq":4,"seq":5}`, `given more than once`},
		{"missing", `{}`, `"seq": missing (required)`},
	}
	// Session A, with the secret, in a first process; then a second
	// process loads it (so it is live beside B) and runs B's attacks.
	const a, b = "sess-A", "sess-B"
	urlA, _ := standinURL(t, &standin.Script{Responses: []standin.Response{{Text: "A answered"}}})
	flags := []string{"acp", "--state-dir", state, "--mode", "workspace-write", "--provider", "deepseek", "--model", "standin", "--session-query", "--no-title-model"}
	pa := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=standin"), append(flags, "--base-url", urlA, "--session-id", a)...)
	underAttack(t, pa)
	pa.initialize()
	if got := pa.newSession(ws); got != a {
		t.Fatalf("session A is %q", got)
	}
	if stop, _ := pa.prompt(a, "Remember "+secret+"."); stop != "end_turn" {
		t.Fatalf("session A: stopReason %q", stop)
	}
	if code := pa.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, pa.stderr.String())
	}

	var calls []standin.ToolCall
	for _, at := range attacks {
		args := strings.NewReplacer("A-ID", a, "B-ID", b, "STATE", state).Replace(at.args)
		calls = append(calls, standin.ToolCall{ID: at.id, Name: "session_event_read", Arguments: args})
	}
	// The huge prompt is B's seq 4 (sandbox/mode, approval/policy,
	// turn/start, step/start before it); its own read, and one with the
	// widest window, around it.
	calls = append(calls,
		standin.ToolCall{ID: "own-huge", Name: "session_event_read", Arguments: `{"seq":4}`},
		standin.ToolCall{ID: "own-window", Name: "session_event_read", Arguments: `{"seq":5,"before":50,"after":50}`},
		standin.ToolCall{ID: "own-explicit", Name: "session_event_read", Arguments: `{"session_id":"` + b + `","seq":0}`})
	url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{{ToolCalls: calls}, {Text: "B answered"}}})
	p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=standin"), append(flags, "--base-url", url, "--session-id", b)...)
	underAttack(t, p)
	p.initialize()
	if got := p.newSession(ws); got != b {
		t.Fatalf("session B is %q", got)
	}
	p.call("session/load", map[string]any{"sessionId": a, "cwd": ws, "mcpServers": []any{}})
	if stop, _ := p.prompt(b, huge); stop != "end_turn" {
		t.Fatalf("session B: stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
	}
	res := toolResultTexts(t, logEvents(t, state, b))
	for _, at := range attacks {
		r, ok := res[at.id]
		switch {
		case !ok:
			t.Errorf("%s: no result", at.id)
		case !r.IsError || !strings.Contains(r.Text, at.want):
			t.Errorf("%s: result (isError %v) %q, want an error holding %q", at.id, r.IsError, r.Text, at.want)
		}
	}
	for id, r := range res {
		if strings.Contains(r.Text, secret) {
			t.Errorf("%s: session B's result holds session A's secret: %q", id, r.Text)
		}
	}
	const inline = 50000 // the default inline cap
	for _, id := range []string{"own-huge", "own-window"} {
		r := res[id]
		if r.IsError || !strings.HasPrefix(r.Text, "Session "+b+" — Remember") && !strings.HasPrefix(r.Text, "Session "+b+" — ") {
			t.Errorf("%s: result (isError %v) starts %q", id, r.IsError, r.Text[:min(len(r.Text), 120)])
		}
		if len(r.Text) > inline || !strings.Contains(r.Text, "(Omitted ") {
			t.Errorf("%s: result is %d bytes, want at most %d with the omission notice", id, len(r.Text), inline)
		}
		if strings.ContainsAny(r.Text[:min(len(r.Text), 4000)], "\x07\x1b\x00") {
			t.Errorf("%s: the target event is shown with a raw control character", id)
		}
		_, path, ok := strings.Cut(r.Text, "Full formatted result stored at: ")
		path, _, _ = strings.Cut(path, ". Use read")
		whole, err := os.ReadFile(path)
		if !ok || err != nil || !strings.Contains(string(whole), "HUGE-END") || !strings.Contains(string(whole), "HUGE-START") {
			t.Errorf("%s: the spill file %q does not hold the whole event (%v)", id, path, err)
		}
	}
	if r := res["own-explicit"]; r.IsError || !strings.Contains(r.Text, `"type": "sandbox/mode"`) {
		t.Errorf("own-explicit: result (isError %v) %q, want session B's seq 0", r.IsError, r.Text)
	}
}
