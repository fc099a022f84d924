package acpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/sandbox"
)

// The ids of the session config options, as codex-acp names them.
const (
	modeOption   = "mode"
	modelOption  = "model"
	effortOption = "reasoning_effort"
)

// defaultEffort is the effort shown as current while the session asks for
// none: the providers' default (OpenAI's is medium).
const defaultEffort = "medium"

// configOptions are the session's config options: its sandbox mode (the
// session mode, mirrored), its model as a select of the models the engine
// offers (absent when it offers no choice) and the model's reasoning
// effort (absent when the model takes none).
func configOptions(s *agent.Session) []acp.SessionConfigOption {
	out := []acp.SessionConfigOption{modeConfig(s.Mode())}
	current, choices := s.Models()
	if len(choices) > 0 {
		opts := make(acp.SessionConfigSelectOptionsUngrouped, 0, len(choices))
		for _, m := range choices {
			opts = append(opts, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(m), Name: m})
		}
		out = append(out, acp.SessionConfigOption{Select: &acp.SessionConfigOptionSelect{
			Id: modelOption, Name: "Model", Type: "select",
			Category:     acp.Ptr(acp.SessionConfigOptionCategoryModel),
			Description:  acp.Ptr("The model of this session's next requests; the session's log records the switch."),
			CurrentValue: acp.SessionConfigValueId(current),
			Options:      acp.SessionConfigSelectOptions{Ungrouped: &opts},
		}})
	}
	if effort, efforts := s.ReasoningEffort(); len(efforts) > 0 {
		if effort == "" {
			effort = defaultEffort
			if !slices.Contains(efforts, effort) {
				effort = efforts[0]
			}
		}
		opts := make(acp.SessionConfigSelectOptionsUngrouped, 0, len(efforts))
		for _, e := range efforts {
			opts = append(opts, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(e), Name: strings.ToUpper(e[:1]) + e[1:]})
		}
		out = append(out, acp.SessionConfigOption{Select: &acp.SessionConfigOptionSelect{
			Id: effortOption, Name: "Reasoning effort", Type: "select",
			Category:     acp.Ptr(acp.SessionConfigOptionCategoryThoughtLevel),
			Description:  acp.Ptr("How much the model reasons before answering, from the next request on; the log records it with the request."),
			CurrentValue: acp.SessionConfigValueId(effort),
			Options:      acp.SessionConfigSelectOptions{Ungrouped: &opts},
		}})
	}
	return out
}

// modeConfig is the mode option: the session's sandbox mode, the same
// choice as session/set_mode.
func modeConfig(current sandbox.Mode) acp.SessionConfigOption {
	opts := make(acp.SessionConfigSelectOptionsUngrouped, 0, len(sandbox.Modes()))
	for _, m := range sandbox.Modes() {
		mi := modeInfo[m]
		opts = append(opts, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(m), Name: mi.name, Description: acp.Ptr(mi.desc)})
	}
	return acp.SessionConfigOption{Select: &acp.SessionConfigOptionSelect{
		Id: modeOption, Name: "Sandbox mode", Type: "select",
		Category:     acp.Ptr(acp.SessionConfigOptionCategoryMode),
		Description:  acp.Ptr("What the session's commands and file tools may change (the session mode)."),
		CurrentValue: acp.SessionConfigValueId(current),
		Options:      acp.SessionConfigSelectOptions{Ungrouped: &opts},
	}}
}

// legacyModels is the legacy models field of session/new and
// session/load, for clients that predate config options (agent-shell,
// acp-factory): the same choice as the model option, nil when there is
// none.
func legacyModels(s *agent.Session) *acp.SessionModelState {
	current, choices := s.Models()
	if len(choices) == 0 {
		return nil
	}
	st := &acp.SessionModelState{CurrentModelId: acp.ModelId(current), AvailableModels: []acp.ModelInfo{}}
	for _, m := range choices {
		st.AvailableModels = append(st.AvailableModels, acp.ModelInfo{ModelId: acp.ModelId(m), Name: m})
	}
	return st
}

// configUpdate notifies the session's config options after one changed
// (config_option_update, as codex-acp sends it).
func (srv *Server) configUpdate(ctx context.Context, s *agent.Session) {
	srv.notify(ctx, s.ID(), acp.SessionUpdate{ConfigOptionUpdate: &acp.SessionConfigOptionUpdate{ConfigOptions: configOptions(s)}})
}

// optionIDs lists the ids of the session's options, for an error.
func optionIDs(opts []acp.SessionConfigOption) string {
	var ids []string
	for _, o := range opts {
		if o.Select != nil {
			ids = append(ids, fmt.Sprintf("%q", o.Select.Id))
		}
	}
	return strings.Join(ids, ", ")
}

// SetSessionConfigOption implements acp.Agent: mode switches the sandbox
// mode (as session/set_mode, with current_mode_update), model the model
// and reasoning_effort the effort, each from the session's next step on.
// Any other option, a non-select value, or a value the option does not
// offer is invalid params naming what is offered. A change is followed by
// config_option_update.
func (srv *Server) SetSessionConfigOption(ctx context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.SetSessionConfigOptionResponse{}, err
	}
	defer srv.exit()
	v := p.ValueId
	if v == nil {
		return acp.SetSessionConfigOptionResponse{}, acp.NewInvalidParams(map[string]any{"error": "reel's session config options are selects: send a value id"})
	}
	s, err := srv.eng.Session(string(v.SessionId))
	if err != nil {
		return acp.SetSessionConfigOptionResponse{}, acpError(err)
	}
	before := configOptions(s)
	switch v.ConfigId {
	case modeOption:
		err = s.SetMode(ctx, string(v.Value))
	case modelOption:
		err = s.SetModel(ctx, string(v.Value))
	case effortOption:
		if _, efforts := s.ReasoningEffort(); len(efforts) == 0 {
			err = acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown config option %q: session %s's model takes no reasoning effort (options: %s)", v.ConfigId, s.ID(), optionIDs(before))})
		} else {
			err = s.SetReasoningEffort(ctx, string(v.Value))
		}
	default:
		err = acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown config option %q (session %s offers %s)", v.ConfigId, s.ID(), optionIDs(before))})
	}
	if err != nil {
		return acp.SetSessionConfigOptionResponse{}, acpError(err)
	}
	opts := configOptions(s)
	if v.ConfigId == modeOption && before[0].Select.CurrentValue != opts[0].Select.CurrentValue {
		srv.notify(ctx, s.ID(), acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: acp.SessionModeId(v.Value)}})
	}
	if !sameOptions(before, opts) {
		srv.configUpdate(ctx, s)
	}
	return acp.SetSessionConfigOptionResponse{ConfigOptions: opts}, nil
}

// sameOptions reports whether two option lists have the same current
// values.
func sameOptions(a, b []acp.SessionConfigOption) bool {
	return slices.EqualFunc(a, b, func(x, y acp.SessionConfigOption) bool {
		return x.Select != nil && y.Select != nil && x.Select.Id == y.Select.Id && x.Select.CurrentValue == y.Select.CurrentValue
	})
}

// UnstableSetSessionModel implements the legacy session/set_model: the
// model option, for clients that predate config options. A change is
// followed by config_option_update.
func (srv *Server) UnstableSetSessionModel(ctx context.Context, p acp.UnstableSetSessionModelRequest) (acp.UnstableSetSessionModelResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.UnstableSetSessionModelResponse{}, err
	}
	defer srv.exit()
	s, err := srv.eng.Session(string(p.SessionId))
	if err != nil {
		return acp.UnstableSetSessionModelResponse{}, acpError(err)
	}
	before := configOptions(s)
	if err := s.SetModel(ctx, string(p.ModelId)); err != nil {
		return acp.UnstableSetSessionModelResponse{}, acpError(err)
	}
	if !sameOptions(before, configOptions(s)) {
		srv.configUpdate(ctx, s)
	}
	return acp.UnstableSetSessionModelResponse{}, nil
}
