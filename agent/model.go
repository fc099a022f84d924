package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// model is the session's model: the last model/selected of its log, else
// the engine's configured one.
func (s *Session) model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modelLocked()
}

// modelLocked is model with s.mu held.
func (s *Session) modelLocked() string {
	if s.curModel != "" {
		return s.curModel
	}
	return s.eng.cfg.Model
}

// Models returns the session's model and the models a client may pick for
// it (Config.ModelChoices; none when the engine offers no choice).
func (s *Session) Models() (current string, choices []string) {
	return s.model(), slices.Clone(s.eng.cfg.ModelChoices)
}

// SetModel makes model the session's model from its next step on (the
// step's request header is then a "change" one) and logs the choice
// (model/selected), so a loaded session keeps it. A model the engine does
// not offer is ErrInvalid.
func (s *Session) SetModel(ctx context.Context, model string) error {
	if !slices.Contains(s.eng.cfg.ModelChoices, model) {
		offered := "none: start reel acp with --models to offer some"
		if len(s.eng.cfg.ModelChoices) > 0 {
			offered = strings.Join(s.eng.cfg.ModelChoices, ", ")
		}
		return invalid(fmt.Sprintf("model %q is not offered for session %s (offered: %s)", model, s.id, offered))
	}
	if model == s.model() {
		return nil
	}
	// The effort carries over to a model that takes it.
	effort, _ := s.ReasoningEffort()
	if !slices.Contains(s.eng.cfg.ReasoningEfforts[model], effort) {
		effort = ""
	}
	if _, err := s.emit(ctx, s.eng.now(), sessionlog.TypeModelSelected, sessionlog.ModelSelectedData{Model: model, Source: "client", ReasoningEffort: effort}, nil, nil); err != nil {
		return err
	}
	if err := s.checkpoint(ctx); err != nil {
		return err
	}
	s.eng.log.Info("model selected", "session", s.id, "model", model)
	return nil
}

// requestContext is the data of request/context (and the call config of
// request headers): the provider and the session's model.
func (s *Session) requestContext() sessionlog.RequestContextData {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sessionlog.RequestContextData{Provider: s.eng.cfg.Provider, Model: s.modelLocked(), ReasoningEffort: s.curEffort}
}

// contextWindow is the configured window, else a default for the
// session's model.
func (s *Session) contextWindow() int {
	return s.eng.windowOf(s.model())
}

// windowOf is the configured window, else a per-model default.
func (e *Engine) windowOf(model string) int {
	if e.cfg.ContextWindow > 0 {
		return e.cfg.ContextWindow
	}
	switch {
	case strings.HasPrefix(model, "deepseek"):
		return 64000
	case strings.HasPrefix(model, "gpt-4.1"):
		return 1000000
	}
	return defaultContextWindow
}
