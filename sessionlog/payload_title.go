package sessionlog

import "strconv"

// The session title records, byte-compatible with dsh's: the accepted
// title of a session (latest wins) and the exact request of a title-model
// call, written before the call is made. Both are log-only (no surface op):
// they never enter a model request, and they may lie inside a turn (the
// fallback title, in the first step) or between turns (a model's title).
const (
	TypeSessionTitle    = "session/title"
	TypeTitleLLMRequest = "session/title-llm-request"
)

// The kinds of a title's source.
const (
	// TitleFallback: the first words of the first prompt.
	TitleFallback = "fallback"
	// TitleProvider: a title model's answer.
	TitleProvider = "provider"
	// TitleUser: a title the user gave (dsh's rename; reel writes none).
	TitleUser = "user"
)

// TitleRoute names the model a title request went to.
type TitleRoute struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// AppendJSON appends {"provider","model"}.
func (r TitleRoute) AppendJSON(b []byte) []byte {
	b = append(b, `{"provider":`...)
	b = AppendString(b, r.Provider)
	b = append(b, `,"model":`...)
	b = AppendString(b, r.Model)
	return append(b, '}')
}

// TitleSource says who made a title: Kind is one of the Title constants;
// for TitleProvider, Provider is the title provider's id and Model the
// route it asked (nil when it asked no model).
type TitleSource struct {
	Kind     string      `json:"kind"`
	Provider string      `json:"provider,omitempty"`
	Model    *TitleRoute `json:"model,omitempty"`
}

// AppendJSON appends {"kind","provider"?,"model"?}.
func (s TitleSource) AppendJSON(b []byte) []byte {
	b = append(b, `{"kind":`...)
	b = AppendString(b, s.Kind)
	if s.Provider != "" {
		b = append(b, `,"provider":`...)
		b = AppendString(b, s.Provider)
	}
	if s.Model != nil {
		b = append(b, `,"model":`...)
		b = s.Model.AppendJSON(b)
	}
	return append(b, '}')
}

// SessionTitleData is the data of session/title: the title (one line,
// cleaned, non-empty), the seqs of the user messages it was made from,
// and its source.
type SessionTitleData struct {
	Title       string      `json:"title"`
	MessageSeqs []int       `json:"messageSeqs"`
	Source      TitleSource `json:"source"`
}

// AppendJSON appends {"title","messageSeqs","source"}.
func (d SessionTitleData) AppendJSON(b []byte) []byte {
	b = append(b, `{"title":`...)
	b = AppendString(b, d.Title)
	b = append(b, `,"messageSeqs":`...)
	b = appendInts(b, d.MessageSeqs)
	b = append(b, `,"source":`...)
	b = d.Source.AppendJSON(b)
	return append(b, '}')
}

// TitleLLMRequestData is the data of session/title-llm-request: which
// title provider asked (TitleProvider), the seqs of the user messages the
// request holds, the route, and the request itself: the system prompt,
// the messages and the output-token cap.
type TitleLLMRequestData struct {
	TitleProvider string        `json:"titleProvider"`
	MessageSeqs   []int         `json:"messageSeqs"`
	Route         TitleRoute    `json:"route"`
	System        string        `json:"system"`
	Messages      []UserMessage `json:"messages"`
	MaxTokens     int           `json:"maxTokens"`
}

// AppendJSON appends {"titleProvider","messageSeqs","route","system",
// "messages","maxTokens"}.
func (d TitleLLMRequestData) AppendJSON(b []byte) []byte {
	b = append(b, `{"titleProvider":`...)
	b = AppendString(b, d.TitleProvider)
	b = append(b, `,"messageSeqs":`...)
	b = appendInts(b, d.MessageSeqs)
	b = append(b, `,"route":`...)
	b = d.Route.AppendJSON(b)
	b = append(b, `,"system":`...)
	b = AppendString(b, d.System)
	b = append(b, `,"messages":[`...)
	for i, m := range d.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = m.AppendJSON(b)
	}
	b = append(b, `],"maxTokens":`...)
	b = strconv.AppendInt(b, int64(d.MaxTokens), 10)
	return append(b, '}')
}

// appendInts appends a JSON array of integers.
func appendInts(b []byte, ns []int) []byte {
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}
