package askuser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reel-agent/reel/agent/tools"
)

// The result texts of calls that get no answer: the reference's where it
// has one.
const (
	// NoAsker: nobody can be asked (the client offers no way to).
	NoAsker = "Error: no user-questions provider is registered: this client cannot show questions (it did not offer form elicitation), so nobody can answer. Go on without asking, or put the question in your reply."
	// DeclinedText: the user refused to answer.
	DeclinedText = "Error: the user declined to answer the questions. Go on without the answers, or ask differently."
	// AbortedText: the request was dismissed or the turn cancelled.
	AbortedText = "Error: ask_user_question was aborted before the user answered"
)

// Tool is the ask_user_question tool. It is stateless; the Asker comes
// from the call's context.
type Tool struct{}

var (
	_ tools.Tool      = Tool{}
	_ tools.Describer = Tool{}
)

// Name returns "ask_user_question".
func (Tool) Name() string { return ToolName }

// Schema returns the reference's schema and description.
func (Tool) Schema() tools.Schema {
	return tools.Schema{
		Name: ToolName,
		Description: "Ask the user a concise question when you need confirmation, a choice, or missing information before proceeding. " +
			"Send one or more questions, each with a stable id that will be echoed in the answer.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"questions":{"type":"array","description":"Questions to ask the user before continuing.","items":{"type":"object","additionalProperties":true,"properties":{"id":{"type":"string","description":"Stable id for this question; echoed in the answer."},"question":{"type":"string","description":"The specific question to ask the user."},"header":{"type":"string","description":"Optional short heading for the question, such as \"Confirm\" or \"Choose Mode\"."},"options":{"type":"array","description":"Optional choices to show the user. If you recommend one, put it first and append \"(Recommended)\" to that label.","items":{"type":"object","additionalProperties":true,"properties":{"label":{"type":"string","description":"Short user-facing option label."},"description":{"type":"string","description":"One sentence explaining the tradeoff or impact."}},"required":["label"]}},"multi_select":{"type":"boolean","description":"Whether the user may select more than one option. Defaults to false."}},"required":["id","question"]}}},"required":["questions"]}`),
	}
}

// Describe titles a call by its first question's header (or the question).
func (Tool) Describe(raw json.RawMessage) (string, tools.Kind, []tools.Location) {
	a, err := ParseArgs(raw)
	if err != nil || len(a.Questions) == 0 {
		return "Ask the user", tools.KindOther, nil
	}
	q := a.Questions[0]
	title := q.Header
	if title == "" {
		title = q.Question
	}
	if len(a.Questions) > 1 {
		title = fmt.Sprintf("%s (+%d more)", title, len(a.Questions)-1)
	}
	return "Ask the user: " + clip(title), tools.KindOther, nil
}

// Run asks the context's Asker and returns the answers as the JSON text
// {"answers":[…]}; every way of getting no answer is an error result.
func (Tool) Run(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := ParseArgs(raw)
	if err != nil {
		return tools.Result{}, err
	}
	title, kind, _ := Tool{}.Describe(raw)
	fail := func(text string) (tools.Result, error) {
		return tools.Result{Text: text, IsError: true, Title: title, Kind: kind}, nil
	}
	asker := FromContext(ctx)
	if asker == nil {
		return fail(NoAsker)
	}
	callID := ""
	if env != nil {
		callID = env.CallID
	}
	resp, err := asker.Ask(ctx, Request{CallID: callID, Questions: a.Questions})
	switch {
	case errors.Is(err, ErrDelegated):
		return fail("Error: " + ErrDelegated.Error())
	case ctx.Err() != nil:
		return fail(AbortedText)
	case err != nil:
		return fail("Error: the questions could not be answered: " + err.Error())
	case resp.Outcome == Declined:
		return fail(DeclinedText)
	case resp.Outcome != Answered:
		return fail(AbortedText)
	}
	answers, err := Check(a.Questions, resp.Answers)
	if err != nil {
		return fail("Error: the reply could not be used: " + err.Error())
	}
	return tools.Result{Text: Render(answers), Title: title, Kind: kind}, nil
}

// Render is the result text of answers: {"answers":[{"id","selected","custom"?}]}.
func Render(answers []Answer) string {
	type item struct {
		ID       string   `json:"id"`
		Selected []string `json:"selected"`
		Custom   *string  `json:"custom,omitempty"`
	}
	out := struct {
		Answers []item `json:"answers"`
	}{Answers: make([]item, 0, len(answers))}
	for _, a := range answers {
		sel := a.Selected
		if sel == nil {
			sel = []string{}
		}
		out.Answers = append(out.Answers, item{ID: a.ID, Selected: sel, Custom: a.Custom})
	}
	// As the reference's JSON.stringify writes it: no HTML escaping, no
	// trailing newline.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out)
	return strings.TrimSuffix(b.String(), "\n")
}
