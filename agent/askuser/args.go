package askuser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/tools"
)

// ToolName is the name the model calls the tool by.
const ToolName = "ask_user_question"

// Bounds on what one call may ask.
const (
	// MaxQuestions is the most questions one call may ask.
	MaxQuestions = 10
	// MaxOptions is the most options one question may offer.
	MaxOptions = 20
	// MaxIDBytes bounds a question id.
	MaxIDBytes = 64
	// MaxLabelBytes bounds an option label and a header.
	MaxLabelBytes = 200
	// MaxTextBytes bounds a question, a detail, an option description and
	// a custom answer.
	MaxTextBytes = 4 << 10
)

// Option is one choice a question offers.
type Option struct {
	// Label is what the user sees and what the answer names.
	Label string
	// Description explains the choice ("" for none).
	Description string
}

// Question is one question of a call.
type Question struct {
	// ID is the model's id for the question, echoed in its answer.
	ID string
	// Question is the question.
	Question string
	// Header is a short heading ("" for none).
	Header string
	// Detail is supporting text shown with the question ("" for none).
	Detail string
	// Options are the choices offered (none: a free-text question).
	Options []Option
	// MultiSelect lets the user choose more than one option.
	MultiSelect bool
}

// Args are the arguments of one call.
type Args struct {
	Questions []Question
}

// argError is the *tools.ArgError of the member arg.
func argError(arg, msg string) error {
	return &tools.ArgError{Tool: ToolName, Arg: arg, Msg: msg}
}

// ParseArgs decodes the tool's arguments strictly (see the package
// documentation, section Bad input). Its error is a *tools.ArgError naming
// the member at fault.
func ParseArgs(raw json.RawMessage) (Args, error) {
	top, err := object(raw, "", []string{"questions"})
	if err != nil {
		return Args{}, err
	}
	qs, ok := top["questions"]
	if !ok {
		return Args{}, argError("questions", "missing (required)")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(qs, &items); err != nil || items == nil {
		return Args{}, argError("questions", "want a list of questions")
	}
	switch {
	case len(items) == 0:
		return Args{}, argError("questions", "ask_user_question requires at least one question")
	case len(items) > MaxQuestions:
		return Args{}, argError("questions", fmt.Sprintf("%d questions; ask at most %d at a time", len(items), MaxQuestions))
	}
	var a Args
	ids := map[string]bool{}
	for i, item := range items {
		at := fmt.Sprintf("questions[%d]", i)
		q, err := question(item, at)
		if err != nil {
			return Args{}, err
		}
		if ids[q.ID] {
			return Args{}, argError(at+".id", fmt.Sprintf("%q is the id of an earlier question; ids must be unique", q.ID))
		}
		ids[q.ID] = true
		a.Questions = append(a.Questions, q)
	}
	return a, nil
}

// question decodes one question at the member path at.
func question(raw json.RawMessage, at string) (Question, error) {
	m, err := object(raw, at, []string{"id", "question", "header", "detail", "options", "multi_select"})
	if err != nil {
		return Question{}, err
	}
	var q Question
	for _, f := range []struct {
		name     string
		dst      *string
		required bool
		max      int
		line     bool // a single line
	}{
		{"id", &q.ID, true, MaxIDBytes, true},
		{"question", &q.Question, true, MaxTextBytes, false},
		{"header", &q.Header, false, MaxLabelBytes, true},
		{"detail", &q.Detail, false, MaxTextBytes, false},
	} {
		if *f.dst, err = text(m, at, f.name, f.required, f.max, f.line); err != nil {
			return Question{}, err
		}
	}
	if v, ok := m["multi_select"]; ok {
		if err := json.Unmarshal(v, &q.MultiSelect); err != nil {
			return Question{}, argError(at+".multi_select", "want true or false")
		}
	}
	if v, ok := m["options"]; ok {
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return Question{}, argError(at+".options", "want a list of {label, description}")
		}
		if len(items) > MaxOptions {
			return Question{}, argError(at+".options", fmt.Sprintf("%d options; offer at most %d", len(items), MaxOptions))
		}
		labels := map[string]bool{}
		for j, item := range items {
			oat := fmt.Sprintf("%s.options[%d]", at, j)
			om, err := object(item, oat, []string{"label", "description"})
			if err != nil {
				return Question{}, err
			}
			var o Option
			if o.Label, err = text(om, oat, "label", true, MaxLabelBytes, true); err != nil {
				return Question{}, err
			}
			if o.Description, err = text(om, oat, "description", false, MaxTextBytes, false); err != nil {
				return Question{}, err
			}
			if labels[o.Label] {
				return Question{}, argError(oat+".label", fmt.Sprintf("%q is the label of an earlier option; labels must be unique", o.Label))
			}
			labels[o.Label] = true
			q.Options = append(q.Options, o)
		}
	}
	if q.MultiSelect && len(q.Options) == 0 {
		return Question{}, argError(at+".multi_select", "is set, but the question offers no options to select")
	}
	return q, nil
}

// object decodes raw as a JSON object of the members known: a member
// given twice, spelled in another case, or unknown is refused. null and
// absent members are left out of the result.
func object(raw json.RawMessage, at string, known []string) (map[string]json.RawMessage, error) {
	name := func(m string) string {
		if at == "" {
			return m
		}
		return at + "." + m
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || !json.Valid(trimmed) {
		return nil, argError(at, "malformed JSON")
	}
	if trimmed[0] != '{' {
		return nil, argError(at, "want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	_, _ = dec.Token() // {
	out := map[string]json.RawMessage{}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, argError(at, "malformed JSON")
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, argError(at, "malformed JSON")
		}
		exact, folded := "", ""
		for _, k := range known {
			if k == key {
				exact = k
			} else if strings.EqualFold(k, key) {
				folded = k
			}
		}
		switch {
		case exact == "" && folded != "":
			return nil, argError(name(key), fmt.Sprintf("unknown member; names are case-sensitive (did you mean %q?)", folded))
		case exact == "":
			return nil, argError(name(key), fmt.Sprintf("unknown member (want %s)", strings.Join(known, ", ")))
		case seen[key]:
			return nil, argError(name(key), "given more than once")
		}
		seen[key] = true
		if string(v) != "null" {
			out[key] = v
		}
	}
	return out, nil
}

// text decodes the string member m.name: required ones must be there and
// not blank; every one is bounded by max bytes and must be clean text (a
// single line when line is set).
func text(m map[string]json.RawMessage, at, name string, required bool, max int, line bool) (string, error) {
	full := at + "." + name
	v, ok := m[name]
	if !ok {
		if required {
			return "", argError(full, "missing (required)")
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", argError(full, "want a string")
	}
	switch {
	case required && strings.TrimSpace(s) == "":
		return "", argError(full, "is empty")
	case len(s) > max:
		return "", argError(full, fmt.Sprintf("is %d bytes; at most %d", len(s), max))
	}
	if err := CleanText(s, line); err != nil {
		return "", argError(full, err.Error())
	}
	return s, nil
}

// CleanText reports text a human should not be shown as it is: invalid
// UTF-8, a control character other than newline and tab (none at all when
// line is set), or a bidirectional-override or -isolate character, which
// could make the text read differently from what it says.
func CleanText(s string, line bool) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("is not valid UTF-8")
	}
	for _, r := range s {
		switch {
		case (r == '\n' || r == '\t') && !line:
		case unicode.IsControl(r):
			return fmt.Errorf("holds the control character %U; send plain text", r)
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
			return fmt.Errorf("holds the bidirectional formatting character %U; send plain text", r)
		}
	}
	return nil
}
