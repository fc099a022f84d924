package acpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/askuser"
)

// formElicitation reports whether the client advertised form elicitation
// (clientCapabilities.elicitation.form, unstable in ACP).
func formElicitation(c acp.ClientCapabilities) bool {
	return c.Elicitation != nil && c.Elicitation.Form != nil
}

// withQuestions is opts and, when the client can show a form, the option
// that offers the session's model ask_user_question.
func (srv *Server) withQuestions(opts ...agent.SessionOption) []agent.SessionOption {
	srv.mu.Lock()
	form := srv.elicitForm
	srv.mu.Unlock()
	if form {
		opts = append(opts, agent.WithQuestions())
	}
	return opts
}

// questions is who answers a session's ask_user_question calls: the
// client's forms when it advertised them, else nobody (nil).
func (srv *Server) questions(session string) askuser.Asker {
	srv.mu.Lock()
	form, c := srv.elicitForm, srv.calls
	srv.mu.Unlock()
	if !form || c == nil {
		return nil
	}
	return elicitAsker{calls: c, session: session}
}

// elicitAsker asks a request's questions with one form elicitation
// (elicitation/create, mode form) tied to the session and the tool call.
type elicitAsker struct {
	calls   *calls
	session string
}

// Ask implements askuser.Asker.
func (a elicitAsker) Ask(ctx context.Context, r askuser.Request) (askuser.Response, error) {
	raw, err := a.calls.call(ctx, acp.ClientMethodElicitationCreate, elicitForm(a.session, r))
	if err != nil {
		return askuser.Response{}, fmt.Errorf("the client's form failed: %w", err)
	}
	return parseElicitReply(r.Questions, raw)
}

// elicitRequest is the params of elicitation/create in form mode, as the
// ACP schema has them (session scope included).
type elicitRequest struct {
	SessionID       string       `json:"sessionId"`
	ToolCallID      string       `json:"toolCallId,omitempty"`
	Mode            string       `json:"mode"`
	Message         string       `json:"message"`
	RequestedSchema elicitSchema `json:"requestedSchema"`
}

// elicitSchema is the form: one field per question (key q1, q2, …) and,
// for a question with options, a free-text field beside it (q1_other), in
// the order asked.
type elicitSchema struct {
	Type       string          `json:"type"`
	Properties json.RawMessage `json:"properties"`
}

// elicitField is one field of the form.
type elicitField struct {
	Type        string       `json:"type"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	OneOf       []enumOption `json:"oneOf,omitempty"`
	Items       *enumItems   `json:"items,omitempty"`
	MaxLength   int          `json:"maxLength,omitempty"`
}

type enumOption struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

type enumItems struct {
	AnyOf []enumOption `json:"anyOf"`
}

// fieldKey is the form field of question i (0-based); other is its
// free-text companion.
func fieldKey(i int, other bool) string {
	k := "q" + strconv.Itoa(i+1)
	if other {
		k += "_other"
	}
	return k
}

// elicitForm builds the form of r's questions.
func elicitForm(session string, r askuser.Request) elicitRequest {
	var props bytes.Buffer
	props.WriteByte('{')
	add := func(key string, f elicitField) {
		if props.Len() > 1 {
			props.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		v, _ := json.Marshal(f)
		props.Write(k)
		props.WriteByte(':')
		props.Write(v)
	}
	var msg strings.Builder
	if len(r.Questions) == 1 {
		msg.WriteString(r.Questions[0].Question)
	} else {
		fmt.Fprintf(&msg, "The agent asks %d questions:", len(r.Questions))
		for i, q := range r.Questions {
			fmt.Fprintf(&msg, "\n%d. %s", i+1, q.Question)
		}
	}
	for i, q := range r.Questions {
		title := q.Header
		if title == "" {
			title = fmt.Sprintf("Question %d", i+1)
		}
		desc := q.Question
		if q.Detail != "" {
			desc += "\n\n" + q.Detail
		}
		f := elicitField{Type: "string", Title: title, Description: desc, MaxLength: askuser.MaxTextBytes}
		if len(q.Options) > 0 {
			opts := make([]enumOption, 0, len(q.Options))
			for _, o := range q.Options {
				opts = append(opts, enumOption{Const: o.Label, Title: o.Label})
				if o.Description != "" {
					f.Description += "\n- " + o.Label + ": " + o.Description
				}
			}
			f.MaxLength = 0
			if q.MultiSelect {
				f.Type, f.Items = "array", &enumItems{AnyOf: opts}
			} else {
				f.OneOf = opts
			}
		}
		add(fieldKey(i, false), f)
		if len(q.Options) > 0 {
			add(fieldKey(i, true), elicitField{Type: "string", Title: title + ": other answer", Description: "Optional: your own answer instead of (or, where several may be chosen, besides) the options.", MaxLength: askuser.MaxTextBytes})
		}
	}
	props.WriteByte('}')
	return elicitRequest{SessionID: session, ToolCallID: r.CallID, Mode: "form", Message: msg.String(),
		RequestedSchema: elicitSchema{Type: "object", Properties: props.Bytes()}}
}

// maxReplyBytes bounds the client's reply to a form.
const maxReplyBytes = 1 << 20

// parseElicitReply reads the client's reply to the form of questions:
// accept with its content, decline, or cancel. Each field must be one the
// form has, of its type (a choice or a typed answer: a string; several
// choices: a list of strings); an empty or blank field is a skipped
// answer. What the answers choose is checked against the questions by
// askuser.Check (in the tool), not here.
func parseElicitReply(questions []askuser.Question, raw json.RawMessage) (askuser.Response, error) {
	if len(raw) > maxReplyBytes {
		return askuser.Response{}, fmt.Errorf("the client's reply is %d bytes; at most %d", len(raw), maxReplyBytes)
	}
	var reply struct {
		Action  string                     `json:"action"`
		Content map[string]json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		return askuser.Response{}, fmt.Errorf("the client's reply is not an elicitation result: %v", err)
	}
	switch reply.Action {
	case "decline":
		return askuser.Response{Outcome: askuser.Declined}, nil
	case "cancel":
		return askuser.Response{Outcome: askuser.Cancelled}, nil
	case "accept":
	default:
		return askuser.Response{}, fmt.Errorf("the client's reply has the action %q; want accept, decline or cancel", clipText(reply.Action))
	}
	type field struct {
		q     int
		other bool
	}
	fields := map[string]field{}
	for i, q := range questions {
		fields[fieldKey(i, false)] = field{i, false}
		if len(q.Options) > 0 {
			fields[fieldKey(i, true)] = field{i, true}
		}
	}
	answers := make([]askuser.Answer, len(questions))
	answered := make([]bool, len(questions))
	for i, q := range questions {
		answers[i].ID = q.ID
	}
	for key, v := range reply.Content {
		f, ok := fields[key]
		if !ok {
			return askuser.Response{}, fmt.Errorf("the client's reply has the field %q, which the form does not", clipText(key))
		}
		q := questions[f.q]
		if string(v) == "null" {
			continue
		}
		if !f.other && q.MultiSelect {
			var labels []string
			if err := json.Unmarshal(v, &labels); err != nil {
				return askuser.Response{}, fmt.Errorf("the client's reply to question %q (field %s) is not a list of choices", q.ID, key)
			}
			answers[f.q].Selected = append(answers[f.q].Selected, labels...)
			answered[f.q] = answered[f.q] || len(labels) > 0
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return askuser.Response{}, fmt.Errorf("the client's reply to question %q (field %s) is not text", q.ID, key)
		}
		switch {
		case strings.TrimSpace(s) == "":
		case f.other || len(q.Options) == 0:
			answers[f.q].Custom = &s
			answered[f.q] = true
		default:
			answers[f.q].Selected = append(answers[f.q].Selected, s)
			answered[f.q] = true
		}
	}
	var out []askuser.Answer
	for i := range answers {
		if !questions[i].MultiSelect && answers[i].Custom != nil {
			// A typed answer to a single-select question stands instead
			// of a choice (as the reference has it).
			answers[i].Selected = nil
		}
		if answered[i] {
			out = append(out, answers[i])
		}
	}
	return askuser.Response{Outcome: askuser.Answered, Answers: out}, nil
}

// clipText quotes at most 80 bytes of text the client sent.
func clipText(s string) string {
	if len(s) > 80 {
		s = strings.ToValidUTF8(s[:80], "") + "…"
	}
	return s
}
