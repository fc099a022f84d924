package acpcmd_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// promptEliciting runs a prompt, answering every elicitation/create with
// the next of replies (failing when reel asks more often) and recording
// the params it was sent, until the prompt's response arrives.
func promptEliciting(t *testing.T, p *proc, sid, text string, replies ...string) (asked []json.RawMessage) {
	t.Helper()
	promptServing(t, p, sid, text, func(f frame) {
		if f.Method != "elicitation/create" {
			return
		}
		if len(asked) >= len(replies) {
			t.Fatalf("reel sent elicitation/create %d times, the test has %d replies: %s", len(asked)+1, len(replies), f.Params)
		}
		asked = append(asked, f.Params)
		p.send(`{"jsonrpc":"2.0","id":` + string(f.ID) + `,"result":` + replies[len(asked)-1] + `}`)
	})
	return asked
}

// startAsker starts a read-only reel, its model the stand-in at url.
func startAsker(t *testing.T, dir, state, url string) *proc {
	t.Helper()
	return startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "read-only",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
}

// initializeWithForms initializes p as a client that takes elicitation
// forms.
func initializeWithForms(p *proc) {
	p.t.Helper()
	p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
		"elicitation": map[string]any{"form": map[string]any{}}}})
}

// askCall is a model response calling ask_user_question with args.
func askCall(t *testing.T, id string, args map[string]any) standin.Response {
	return standin.Response{ToolCalls: []standin.ToolCall{{ID: id, Name: "ask_user_question", Arguments: jsonArgs(t, args)}}}
}

// TestAttackAskUserQuestion drives ask_user_question through the real
// binary with a client that advertises form elicitation (issue 28). The
// model is the attacker: its questions reach the user only as the one
// strict parse admits them (control characters and bidi overrides in the
// text are refused before anything is shown), and the client's reply
// reaches the model only when it fits the questions asked (a label not
// offered, a field not in the form, a second choice of a single-select
// question are refused, naming what was wrong). A reply is rendered as the
// reference renders it; decline and cancel are error results; the form is
// tied to the session and the tool call.
func TestAttackAskUserQuestion(t *testing.T) {
	t.Parallel()
	deploy := map[string]any{"questions": []any{
		map[string]any{"id": "target", "header": "Deploy", "question": "Where should it deploy?",
			"options": []any{map[string]any{"label": "staging (Recommended)", "description": "Safe first."}, map[string]any{"label": "production"}}},
		map[string]any{"id": "checks", "question": "Which checks?", "multi_select": true,
			"options": []any{map[string]any{"label": "lint"}, map[string]any{"label": "test"}}},
		map[string]any{"id": "note", "question": "Anything else?"},
	}}
	tests := []struct {
		name   string
		args   map[string]any
		reply  string // "" when no form may be shown
		result string // the tool result the model gets
	}{
		{"answered", deploy,
			`{"action":"accept","content":{"q1":"staging (Recommended)","q2":["lint","test"],"q2_other":"fuzz <all>","q3":"ship & tell"}}`,
			`{"answers":[{"id":"target","selected":["staging (Recommended)"]},{"id":"checks","selected":["lint","test"],"custom":"fuzz <all>"},{"id":"note","selected":[],"custom":"ship & tell"}]}`},
		{"a typed answer stands instead of a single choice", deploy,
			`{"action":"accept","content":{"q1":"production","q1_other":"canary only"}}`,
			`{"answers":[{"id":"target","selected":[],"custom":"canary only"},{"id":"checks","selected":[]},{"id":"note","selected":[]}]}`},
		{"declined", deploy, `{"action":"decline"}`,
			"Error: the user declined to answer the questions. Go on without the answers, or ask differently."},
		{"cancelled", deploy, `{"action":"cancel"}`,
			"Error: ask_user_question was aborted before the user answered"},
		{"a label not offered", deploy, `{"action":"accept","content":{"q1":"rm -rf /"}}`,
			`Error: the reply could not be used: the answer to question "target" chooses "rm -rf /", which is not one of its options`},
		{"a field the form lacks", deploy, `{"action":"accept","content":{"q9":"x"}}`,
			`Error: the questions could not be answered: the client's reply has the field "q9", which the form does not`},
		{"two choices of a single-select question", deploy, `{"action":"accept","content":{"q1":["staging (Recommended)","production"]}}`,
			`Error: the questions could not be answered: the client's reply to question "target" (field q1) is not text`},
		{"an action that is none", deploy, `{"action":"maybe"}`,
			`Error: the questions could not be answered: the client's reply has the action "maybe"; want accept, decline or cancel`},
		{"control characters in the question", map[string]any{"questions": []any{
			map[string]any{"id": "q", "question": "Approve?\x1b]52;c;ZXZpbA==\x07 (safe)"}}}, "",
			`argument "questions[0].question": holds the control character U+001B; send plain text`},
		{"a bidi override in a label", map[string]any{"questions": []any{
			map[string]any{"id": "q", "question": "Pick", "options": []any{map[string]any{"label": "keep\u202eeteled"}}}}}, "",
			`argument "questions[0].options[0].label": holds the bidirectional formatting character U+202E; send plain text`},
		{"a member in another case", map[string]any{"questions": []any{
			map[string]any{"id": "q", "question": "Pick", "Options": []any{}}}}, "",
			`argument "questions[0].Options": unknown member; names are case-sensitive (did you mean "options"?)`},
		{"duplicate ids", map[string]any{"questions": []any{
			map[string]any{"id": "q", "question": "A"}, map[string]any{"id": "q", "question": "B"}}}, "",
			`argument "questions[1].id": "q" is the id of an earlier question; ids must be unique`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, ws, state := workspace(t)
			url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
				askCall(t, "call_ask", tc.args),
				{Text: "done"},
			}})
			p := startAsker(t, dir, state, url)
			underAttack(t, p)
			initializeWithForms(p)
			sid := p.newSession(ws)
			var replies []string
			if tc.reply != "" {
				replies = append(replies, tc.reply)
			}
			asked := promptEliciting(t, p, sid, "Ask me.", replies...)
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			got := results(t, logEvents(t, state, sid))["call_ask"]
			if tc.reply == "" {
				if len(asked) != 0 {
					t.Errorf("a refused call still showed the user a form: %s", asked[0])
				}
				if !strings.Contains(got, tc.result) {
					t.Errorf("result %q, want it to contain %q", got, tc.result)
				}
				return
			}
			if got != tc.result {
				t.Errorf("result\n got %s\nwant %s", got, tc.result)
			}
			if len(asked) != 1 {
				t.Fatalf("%d forms shown, want 1", len(asked))
			}
			var form struct {
				SessionID  string `json:"sessionId"`
				ToolCallID string `json:"toolCallId"`
				Mode       string `json:"mode"`
			}
			if err := json.Unmarshal(asked[0], &form); err != nil || form.SessionID != sid || form.ToolCallID != "call_ask" || form.Mode != "form" {
				t.Errorf("the form is not a form tied to the session and the call: %s", asked[0])
			}
		})
	}
}

// TestAskUserQuestionRefused: without form elicitation the tool is not
// offered, and a call of it anyway is refused without asking; a subagent's
// call is refused with the reference's words, and no form is shown for it.
func TestAskUserQuestionRefused(t *testing.T) {
	t.Parallel()
	ask := map[string]any{"questions": []any{map[string]any{"id": "q", "question": "Proceed?"}}}
	t.Run("client without elicitation", func(t *testing.T) {
		dir, ws, state := workspace(t)
		url, model := standinURL(t, &standin.Script{Responses: []standin.Response{askCall(t, "call_ask", ask), {Text: "done"}}})
		p := startAsker(t, dir, state, url)
		p.initialize()
		sid := p.newSession(ws)
		if asked := promptEliciting(t, p, sid, "Ask me."); len(asked) != 0 {
			t.Errorf("a form was shown to a client that offered none")
		}
		if code := p.finish(); code != 0 {
			t.Fatalf("exit %d", code)
		}
		if req := model.Requests(); strings.Contains(string(req[0]), `"ask_user_question"`) {
			t.Errorf("ask_user_question was offered to a session whose client cannot answer")
		}
		if got := results(t, logEvents(t, state, sid))["call_ask"]; !strings.Contains(got, "ask_user_question") {
			t.Errorf("result %q does not say the tool is unavailable", got)
		}
	})
	t.Run("subagent", func(t *testing.T) {
		dir, ws, state := workspace(t)
		url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
			{ToolCalls: []standin.ToolCall{{ID: "call_child", Name: "subagent", Arguments: jsonArgs(t, map[string]any{"description": "Ask", "prompt": "Ask the user."})}}},
			askCall(t, "call_child_question", ask),
			{Text: "child gave up"},
			{Text: "parent done"},
		}})
		p := startAsker(t, dir, state, url)
		initializeWithForms(p)
		sid := p.newSession(ws)
		if asked := promptEliciting(t, p, sid, "Delegate."); len(asked) != 0 {
			t.Errorf("a subagent's question was shown to the user: %s", asked[0])
		}
		if code := p.finish(); code != 0 {
			t.Fatalf("exit %d", code)
		}
		children := childLogs(t, state)
		if len(children) != 1 {
			t.Fatalf("%d child logs, want 1", len(children))
		}
		want := "Error: human interaction is unavailable while the calling agent is owned by another live agent; include the unresolved question or decision in the child agent's final result"
		if got := results(t, children[0].Events)["call_child_question"]; got != want {
			t.Errorf("the child's result\n got %q\nwant %q", got, want)
		}
	})
}

// TestAskUserQuestionCancelled: a session/cancel while the form is open
// ends the turn cancelled and withdraws the form ($/cancel_request naming
// the elicitation's id); the client's late answer is ignored and the
// session goes on.
func TestAskUserQuestionCancelled(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	ask := map[string]any{"questions": []any{map[string]any{"id": "q", "question": "Proceed?"}}}
	url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{askCall(t, "call_ask", ask), {Text: "after"}}})
	p := startAsker(t, dir, state, url)
	underAttack(t, p)
	initializeWithForms(p)
	sid := p.newSession(ws)
	id := p.request("session/prompt", promptParams(sid, "Ask me."))
	var formID json.RawMessage
	withdrawn, stop := false, ""
	for stop == "" || !withdrawn {
		f := p.next()
		switch {
		case f.Method == "elicitation/create":
			formID = f.ID
			p.notify("session/cancel", map[string]any{"sessionId": sid})
		case f.Method == "$/cancel_request":
			var c struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(f.Params, &c)
			if !sameID(c.RequestID, formID) {
				t.Fatalf("$/cancel_request names %s, the form was %s", c.RequestID, formID)
			}
			withdrawn = true
			// The late answer must be dropped, not crash or confuse reel.
			p.send(`{"jsonrpc":"2.0","id":` + string(formID) + `,"result":{"action":"accept","content":{"q1":"yes"}}}`)
		case f.isResponse() && sameID(f.ID, id):
			var r struct {
				StopReason string `json:"stopReason"`
			}
			_ = json.Unmarshal(f.Result, &r)
			stop = r.StopReason
			if !withdrawn {
				t.Fatalf("the turn ended (%s) without withdrawing the open form", stop)
			}
		}
	}
	if stop != "cancelled" {
		t.Errorf("stopReason %q, want cancelled", stop)
	}
	if s, _ := p.prompt(sid, "Still there?"); s != "end_turn" {
		t.Errorf("the next prompt ended %q", s)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
