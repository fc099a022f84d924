package replay

import (
	"fmt"
	"os"

	"github.com/reel-agent/reel/sessionlog"
)

// Title calls (requests with Purpose llm.PurposeTitle) are served from a
// script of their own, so they never consume the conversation's calls and
// a replay needs no model for them either. DeriveTitles builds it from the
// recorded title events: each session/title-llm-request is answered by
// the session/title of source "provider" that follows it (before the next
// request), as one text block; a request the recording never answered
// (the call failed) is served as a failure. A title override file (the
// format of replay.override.json) replaces or patches that script: the
// reference's recordings of a title call keep the title model's stream
// there.

// DeriveTitles builds the title script from a log's events.
func DeriveTitles(events []sessionlog.Event) []Entry {
	var out []Entry
	open := -1 // index in out of the request not yet answered
	for i := range events {
		e := &events[i]
		switch e.Type {
		case sessionlog.TypeTitleLLMRequest:
			out = append(out, Entry{Kind: KindThrow, Code: "TITLE_NOT_RECORDED",
				Message: fmt.Sprintf("the recorded title call at seq %d got no title", e.Seq),
				Where:   fmt.Sprintf("title call at seq %d", e.Seq)})
			open = len(out) - 1
		case sessionlog.TypeSessionTitle:
			if open < 0 {
				continue
			}
			d, err := sessionlog.DecodeData[sessionlog.SessionTitleData](e)
			if err != nil || d.Source.Kind != sessionlog.TitleProvider {
				continue
			}
			t := TextEntry(d.Title)
			t.Where = out[open].Where
			out[open] = t
			open = -1
		}
	}
	return out
}

// LoadTitles derives the title script of a log and applies the title
// override file overridePath when it is non-empty. The i-th entry carries
// the i-th recorded title request (TitleWants), override entries too.
func LoadTitles(events []sessionlog.Event, overridePath string) ([]Entry, error) {
	wants, err := TitleWants(events)
	if err != nil {
		return nil, err
	}
	derived := DeriveTitles(events)
	if overridePath != "" {
		raw, err := os.ReadFile(overridePath)
		if err != nil {
			return nil, fmt.Errorf("replay: title override: %w", err)
		}
		if derived, err = ApplyOverride(derived, raw, overridePath); err != nil {
			return nil, err
		}
	}
	attachTitleWants(derived, wants)
	return derived, nil
}

// WithTitles makes p serve title calls from titles (positionally, one in
// flight at a time, independently of the conversation's calls) and returns
// p. Without it a title call fails as an exhausted title script.
func (p *Provider) WithTitles(titles []Entry) *Provider {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.titles = titles
	return p
}

// titleStream opens the next title call. p.mu is held.
func (p *Provider) titleStream() (*stream, error) {
	if p.titleInFlight {
		return nil, fmt.Errorf("%w (a title call)", ErrBusy)
	}
	if p.nextTitle >= len(p.titles) {
		return nil, fmt.Errorf("%w: title call %d requested, but the recording has only %d", ErrExhausted, p.nextTitle+1, len(p.titles))
	}
	e := p.titles[p.nextTitle]
	p.nextTitle++
	p.titleInFlight = true
	return &stream{p: p, e: e, title: true, closed: make(chan struct{})}, nil
}
