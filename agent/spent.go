package agent

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// TokenCount is the token accounting of model calls, summed: Input
// excludes the tokens served from the provider's prompt cache (CacheRead);
// Output includes the reasoning tokens (Reasoning, as the providers count
// them).
type TokenCount struct {
	Input, CacheRead, Output, Reasoning int64
	// Calls is the number of model calls that reported usage.
	Calls int
}

// Add returns c plus d.
func (c TokenCount) Add(d TokenCount) TokenCount {
	return TokenCount{Input: c.Input + d.Input, CacheRead: c.CacheRead + d.CacheRead, Output: c.Output + d.Output,
		Reasoning: c.Reasoning + d.Reasoning, Calls: c.Calls + d.Calls}
}

// Sub returns c minus d.
func (c TokenCount) Sub(d TokenCount) TokenCount {
	return TokenCount{Input: c.Input - d.Input, CacheRead: c.CacheRead - d.CacheRead, Output: c.Output - d.Output,
		Reasoning: c.Reasoning - d.Reasoning, Calls: c.Calls - d.Calls}
}

// ModelTokens is what one model's calls used.
type ModelTokens struct {
	Model string
	TokenCount
}

// Spent returns what the session's model calls used, per model in the
// order the models were first used, over its whole log (a loaded
// session's history included). It is kept as events are appended, so it
// costs nothing to ask.
func (s *Session) Spent() []ModelTokens {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.spent)
}

// SpentTotal sums per-model token counts.
func SpentTotal(ms []ModelTokens) TokenCount {
	var t TokenCount
	for _, m := range ms {
		t = t.Add(m.TokenCount)
	}
	return t
}

// usageKey is the member of an assistant/message that holds its usage.
var usageKey = []byte(`"usage":`)

// trackSpent adds an assistant/message's usage to the session's spent
// tokens, for the model of the call's request/context (with s.mu held,
// from track). The usage member follows the message (AppendJSON's
// layout), and inside the message's strings a quote is always escaped, so
// the last "usage" key is the message's own: only that tail is decoded,
// not the message's content (a load of a long session reads each
// assistant message once more otherwise).
func (s *Session) trackSpent(e *sessionlog.Event) {
	// Most events hold no usage: bytes.Contains (vector search) says so far
	// faster than bytes.LastIndex (a rolling hash from the end) does.
	if !bytes.Contains(e.Data, usageKey) {
		return
	}
	i := bytes.LastIndex(e.Data, usageKey)
	var u llm.Usage
	if json.NewDecoder(bytes.NewReader(e.Data[i+len(usageKey):])).Decode(&u) != nil {
		return
	}
	c := TokenCount{Input: u.InputTokens, Output: u.OutputTokens, Calls: 1}
	if u.CacheReadTokens != nil {
		c.CacheRead = *u.CacheReadTokens
	}
	if u.ReasoningTokens != nil {
		c.Reasoning = *u.ReasoningTokens
	}
	model := s.callModel
	for i := range s.spent {
		if s.spent[i].Model == model {
			s.spent[i].TokenCount = s.spent[i].Add(c)
			return
		}
	}
	s.spent = append(s.spent, ModelTokens{Model: model, TokenCount: c})
}
