package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// ReasoningEffort returns the reasoning effort the session's calls ask
// for ("" for the provider's default) and the efforts its current model
// takes (Config.ReasoningEfforts; none when it takes no choice).
func (s *Session) ReasoningEffort() (current string, choices []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.curEffort, slices.Clone(s.eng.cfg.ReasoningEfforts[s.modelLocked()])
}

// SetReasoningEffort makes effort the reasoning effort of the session's
// calls from its next step on and logs the choice as a model/selected of
// the current model with that effort, so a loaded session keeps it. The
// effort is a call option of the request header, so the next step writes
// a "change" header and a replay of the log sends the same request. An
// effort the current model does not take is ErrInvalid.
func (s *Session) SetReasoningEffort(ctx context.Context, effort string) error {
	current, choices := s.ReasoningEffort()
	if !slices.Contains(choices, effort) {
		offered := "none: model " + s.model() + " takes no reasoning effort"
		if len(choices) > 0 {
			offered = strings.Join(choices, ", ")
		}
		return invalid(fmt.Sprintf("reasoning effort %q is not offered for session %s (offered: %s)", effort, s.id, offered))
	}
	if effort == current {
		return nil
	}
	d := sessionlog.ModelSelectedData{Model: s.model(), Source: "client", ReasoningEffort: effort}
	if _, err := s.emit(ctx, s.eng.now(), sessionlog.TypeModelSelected, d, nil, nil); err != nil {
		return err
	}
	if err := s.checkpoint(ctx); err != nil {
		return err
	}
	s.eng.log.Info("reasoning effort selected", "session", s.id, "effort", effort)
	return nil
}
