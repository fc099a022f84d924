package askuser

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Request is what a call asks: the questions, and the id of the tool call
// asking them (for a client that ties the question to the call).
type Request struct {
	CallID    string
	Questions []Question
}

// Answer is the answer to one question: the labels of the options the
// user chose and, when the user typed one, a free-text answer (nil for
// none). An answer with neither is a skipped question.
type Answer struct {
	ID       string
	Selected []string
	Custom   *string
}

// Outcome says how the user dealt with the questions.
type Outcome int

// The outcomes of a request.
const (
	// Answered: the user answered (some questions may be skipped).
	Answered Outcome = iota
	// Declined: the user refused to answer.
	Declined
	// Cancelled: the request was dismissed without an answer.
	Cancelled
)

// Response is the user's reply to a request. Answers are set only when
// the Outcome is Answered.
type Response struct {
	Outcome Outcome
	Answers []Answer
}

// Asker asks the user. An error means the questions could not be asked or
// the reply could not be read (its message says why); a reply that does
// not fit the questions is such an error too (see [Check]).
type Asker interface {
	Ask(ctx context.Context, r Request) (Response, error)
}

// ErrDelegated is the error of asking from a subagent: no human answers a
// child; it must put the question in its final result.
var ErrDelegated = errors.New("human interaction is unavailable while the calling agent is owned by another live agent; include the unresolved question or decision in the child agent's final result")

// Delegated is the Asker of a subagent's calls: it refuses every request
// with ErrDelegated.
var Delegated Asker = delegated{}

type delegated struct{}

func (delegated) Ask(context.Context, Request) (Response, error) { return Response{}, ErrDelegated }

type contextKey struct{}

// NewContext returns ctx carrying a, the Asker of the tool calls run in it.
func NewContext(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, contextKey{}, a)
}

// FromContext returns the Asker ctx carries, nil for none.
func FromContext(ctx context.Context) Asker {
	a, _ := ctx.Value(contextKey{}).(Asker)
	return a
}

// Check checks answers against the questions they answer and returns them
// as the tool reports them: one per question, in the order asked (a
// question with no answer is skipped: nothing selected, no custom text).
// It refuses an answer to a question not asked or answered twice, a label
// the question does not offer or chosen twice, more than one choice for a
// single-select question, a custom answer next to a choice of a
// single-select question, and a custom answer that is blank, too long or
// not clean text (see [CleanText]).
func Check(questions []Question, answers []Answer) ([]Answer, error) {
	byID := make(map[string]int, len(questions))
	for i, q := range questions {
		byID[q.ID] = i
	}
	out := make([]Answer, len(questions))
	given := make([]bool, len(questions))
	for i, q := range questions {
		out[i] = Answer{ID: q.ID, Selected: []string{}}
	}
	for _, a := range answers {
		i, ok := byID[a.ID]
		if !ok {
			return nil, fmt.Errorf("the answer names %q, which is not the id of a question asked", clip(a.ID))
		}
		if given[i] {
			return nil, fmt.Errorf("question %q is answered twice", a.ID)
		}
		given[i] = true
		q := questions[i]
		offered := make(map[string]bool, len(q.Options))
		for _, o := range q.Options {
			offered[o.Label] = true
		}
		chosen := map[string]bool{}
		for _, l := range a.Selected {
			switch {
			case !offered[l]:
				return nil, fmt.Errorf("the answer to question %q chooses %q, which is not one of its options", q.ID, clip(l))
			case chosen[l]:
				return nil, fmt.Errorf("the answer to question %q chooses %q twice", q.ID, l)
			}
			chosen[l] = true
		}
		if !q.MultiSelect && len(a.Selected) > 1 {
			return nil, fmt.Errorf("the answer to question %q chooses %d options of a single-select question", q.ID, len(a.Selected))
		}
		if c := a.Custom; c != nil {
			switch {
			case strings.TrimSpace(*c) == "":
				return nil, fmt.Errorf("the answer to question %q has a blank custom answer", q.ID)
			case len(*c) > MaxTextBytes:
				return nil, fmt.Errorf("the custom answer to question %q is %d bytes; at most %d", q.ID, len(*c), MaxTextBytes)
			case !q.MultiSelect && len(a.Selected) > 0:
				return nil, fmt.Errorf("the answer to question %q both chooses an option and types a custom answer to a single-select question", q.ID)
			}
			if err := CleanText(*c, false); err != nil {
				return nil, fmt.Errorf("the custom answer to question %q %v", q.ID, err)
			}
		}
		out[i].Selected = append(out[i].Selected, a.Selected...)
		out[i].Custom = a.Custom
	}
	return out, nil
}

// clip shortens text quoted in an error to 80 bytes (of whole runes).
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	cut := 80
	for cut > 0 && !utfStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utfStart(b byte) bool { return b&0xC0 != 0x80 }
