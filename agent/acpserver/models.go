package acpserver

import (
	"context"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
)

// modelOption is the id of the session config option that picks the model.
const modelOption = "model"

// configOptions are the session's config options: its model, as a select
// of the models the engine offers (none when it offers no choice, so an
// editor shows no picker).
func configOptions(s *agent.Session) []acp.SessionConfigOption {
	current, choices := s.Models()
	if len(choices) == 0 {
		return nil
	}
	opts := make(acp.SessionConfigSelectOptionsUngrouped, 0, len(choices))
	for _, m := range choices {
		opts = append(opts, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(m), Name: m})
	}
	return []acp.SessionConfigOption{{Select: &acp.SessionConfigOptionSelect{
		Id: modelOption, Name: "Model", Type: "select",
		Category:     acp.Ptr(acp.SessionConfigOptionCategoryModel),
		Description:  acp.Ptr("The model of this session's next requests; the session's log records the switch."),
		CurrentValue: acp.SessionConfigValueId(current),
		Options:      acp.SessionConfigSelectOptions{Ungrouped: &opts},
	}}}
}

// SetSessionConfigOption implements acp.Agent: the model option switches
// the session's model from its next step on; any other option, or a model
// reel does not offer, is invalid params.
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
	if v.ConfigId != modelOption {
		return acp.SetSessionConfigOptionResponse{}, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown config option %q (reel offers %q)", v.ConfigId, modelOption)})
	}
	if err := s.SetModel(ctx, string(v.Value)); err != nil {
		return acp.SetSessionConfigOptionResponse{}, acpError(err)
	}
	opts := configOptions(s)
	if opts == nil {
		opts = []acp.SessionConfigOption{}
	}
	return acp.SetSessionConfigOptionResponse{ConfigOptions: opts}, nil
}
