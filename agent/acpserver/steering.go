package acpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
)

// steeringMethod is the steering extension claude-agent-acp and codex-acp
// answer: a message the user sends while a turn runs joins that turn
// instead of queueing behind it.
const steeringMethod = "_session/steering"

// Steering outcomes and the reason of a refused one, as the leading
// adapters answer them.
const (
	steerInjected       = "injected"
	steerPromptRequired = "promptRequired"
	steerNoRunningTurn  = "noRunningTurn"
)

// steeringRequest is the params of _session/steering: the session, the
// message as ACP content blocks, and in _meta.steering.idleBehavior what
// to do when no turn runs ("promptRequired": answer so, and the client
// sends the message as a prompt).
type steeringRequest struct {
	SessionID string             `json:"sessionId"`
	Prompt    []acp.ContentBlock `json:"prompt"`
	Meta      *struct {
		Steering *struct {
			IdleBehavior string `json:"idleBehavior,omitempty"`
		} `json:"steering,omitempty"`
	} `json:"_meta,omitempty"`
}

// steeringResponse is the answer of _session/steering.
type steeringResponse struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
}

// parseSteering parses _session/steering's params: the session
// id, at least one block, each a text block or an embedded text resource
// (a steering message is words; images and files go with session/prompt),
// and an idleBehavior reel knows. It returns the request and its texts.
func parseSteering(raw json.RawMessage) (steeringRequest, []string, error) {
	var r steeringRequest
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, nil, fmt.Errorf("%s params: %w", steeringMethod, err)
	}
	if r.SessionID == "" {
		return r, nil, fmt.Errorf("%s: sessionId is required", steeringMethod)
	}
	if len(r.Prompt) == 0 {
		return r, nil, fmt.Errorf("%s: prompt needs at least one text block", steeringMethod)
	}
	if r.Meta != nil && r.Meta.Steering != nil {
		switch ib := r.Meta.Steering.IdleBehavior; ib {
		case "", steerPromptRequired:
		default:
			return r, nil, fmt.Errorf("%s: unknown _meta.steering.idleBehavior %q (reel knows %q)", steeringMethod, ib, steerPromptRequired)
		}
	}
	texts := make([]string, 0, len(r.Prompt))
	for i, b := range r.Prompt {
		switch {
		case b.Text != nil:
			texts = append(texts, b.Text.Text)
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			tr := b.Resource.Resource.TextResourceContents
			texts = append(texts, fmt.Sprintf("<file uri=%q>\n%s\n</file>", tr.Uri, tr.Text))
		default:
			return r, nil, fmt.Errorf("%s: prompt[%d]: a steering message takes text blocks and embedded text resources only; send other content with session/prompt", steeringMethod, i)
		}
	}
	return r, texts, nil
}

// promptRequired reports whether the request asks to be told, rather than
// refused, when no turn runs.
func (r steeringRequest) promptRequired() bool {
	return r.Meta != nil && r.Meta.Steering != nil && r.Meta.Steering.IdleBehavior == steerPromptRequired
}

// steer answers _session/steering: the message joins the session's
// running turn at its next step (agent.Session.Steer: logged there, so a
// replay reproduces where it entered) and the answer is "injected". With
// no turn running, a request with idleBehavior "promptRequired" is
// answered {"outcome":"promptRequired","reason":"noRunningTurn"} and any
// other is refused with invalid request: reel does not start a turn the
// client did not prompt. An unknown session or malformed params are
// invalid params.
func (srv *Server) steer(_ context.Context, raw json.RawMessage) (steeringResponse, error) {
	r, texts, err := parseSteering(raw)
	if err != nil {
		return steeringResponse{}, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	s, err := srv.eng.Session(r.SessionID)
	if err != nil {
		return steeringResponse{}, acpError(err)
	}
	if _, err := s.Steer(texts); err != nil {
		if errors.Is(err, agent.ErrNoTurn) {
			if r.promptRequired() {
				return steeringResponse{Outcome: steerPromptRequired, Reason: steerNoRunningTurn}, nil
			}
			return steeringResponse{}, acp.NewInvalidRequest(map[string]any{"error": err.Error() +
				`: send the message with session/prompt (or ask with _meta.steering.idleBehavior "promptRequired")`})
		}
		return steeringResponse{}, acpError(err)
	}
	return steeringResponse{Outcome: steerInjected}, nil
}

// HandleExtensionMethod implements acp.ExtensionMethodHandler: the
// steering extension, and the queued prompts the frame filter renamed
// (queue.go). Any other extension method is method not found.
func (srv *Server) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if err := srv.enter(); err != nil {
		return nil, err
	}
	defer srv.exit()
	switch method {
	case queuedMethod:
		return srv.queuedPrompt(ctx, params)
	case steeringMethod:
		return srv.steer(ctx, params)
	}
	return nil, acp.NewMethodNotFound(method)
}

// steeringMeta is what initialize's _meta advertises for the steering
// extension, the way claude-agent-acp and codex-acp advertise it.
func steeringMeta() map[string]any {
	return map[string]any{"steering": map[string]any{"supported": true}}
}
