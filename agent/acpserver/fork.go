package acpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// forkAnchor is session/fork's _meta.reel: where to fork, as a message id
// ("m12", see messageid.go) or the seq it names. Without one the whole
// history is forked.
type forkAnchor struct {
	AtMessageID *string `json:"atMessageId"`
	AtSeq       *int    `json:"atSeq"`
}

// anchorSeq reads the anchor of meta: -1 for none, else the seq it
// names (checked against the session by the engine). A malformed anchor
// is invalid params.
func anchorSeq(meta map[string]any) (int, error) {
	raw, ok := meta["reel"]
	if !ok {
		return -1, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return 0, err
	}
	var a forkAnchor
	if err := json.Unmarshal(b, &a); err != nil {
		return 0, fmt.Errorf("_meta.reel: %w", err)
	}
	switch {
	case a.AtMessageID != nil && a.AtSeq != nil:
		return 0, fmt.Errorf("_meta.reel: give atMessageId or atSeq, not both")
	case a.AtMessageID != nil:
		digits, ok := strings.CutPrefix(*a.AtMessageID, "m")
		n, err := strconv.Atoi(digits)
		if !ok || err != nil || n < 0 || strconv.Itoa(n) != digits {
			return 0, fmt.Errorf("_meta.reel.atMessageId %q is not a message id (m<seq>)", *a.AtMessageID)
		}
		return n, nil
	case a.AtSeq != nil:
		if *a.AtSeq < 0 {
			return 0, fmt.Errorf("_meta.reel.atSeq %d is negative", *a.AtSeq)
		}
		return *a.AtSeq, nil
	}
	return -1, nil
}

// UnstableForkSession answers session/fork (unstable): a new session
// whose log is the forked session's history up to the turn end of the
// anchored message (agent.Engine.ForkSession), opened live and answered
// like session/new; the available commands follow the answer.
func (srv *Server) UnstableForkSession(ctx context.Context, p acp.UnstableForkSessionRequest) (acp.UnstableForkSessionResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.UnstableForkSessionResponse{}, err
	}
	defer srv.exit()
	if srv.cfg.MissingKey != "" {
		return acp.UnstableForkSessionResponse{}, srv.errAuthRequired()
	}
	if err := unsupportedDirs(p.AdditionalDirectories); err != nil {
		return acp.UnstableForkSessionResponse{}, err
	}
	at, err := anchorSeq(p.Meta)
	if err != nil {
		return acp.UnstableForkSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": "session/fork: " + err.Error()})
	}
	var servers []acp.McpServer
	if b, err := json.Marshal(p.McpServers); err != nil || json.Unmarshal(b, &servers) != nil {
		return acp.UnstableForkSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": "session/fork: mcpServers cannot be read"})
	}
	withMCP, err := mcpOption(servers)
	if err != nil {
		return acp.UnstableForkSessionResponse{}, err
	}
	s, err := srv.eng.ForkSession(ctx, string(p.SessionId), p.Cwd, at, srv.withQuestions(withMCP)...)
	if err != nil {
		srv.logFailure("session/fork", err)
		return acp.UnstableForkSessionResponse{}, acpError(err)
	}
	s.SetClient(srv.client(s.ID()))
	srv.notifyAfterAnswer(ctx, s.ID(), availableCommands(srv.eng.SessionCommands(ctx, s)))
	return acp.UnstableForkSessionResponse{SessionId: acp.SessionId(s.ID()), Modes: modes(s.Mode()), ConfigOptions: unstableConfigOptions(configOptions(s))}, nil
}

// unstableConfigOptions is opts as the unstable types session/fork's
// answer holds (the same JSON).
func unstableConfigOptions(opts []acp.SessionConfigOption) []acp.UnstableSessionConfigOption {
	var out []acp.UnstableSessionConfigOption
	if b, err := json.Marshal(opts); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}
