package acpserver

import (
	"context"

	acp "github.com/coder/acp-go-sdk"
)

// sessionCapabilities is what initialize advertises of the session
// methods beyond new/prompt/cancel/load: each only where it works.
func (srv *Server) sessionCapabilities() acp.SessionCapabilities {
	return acp.SessionCapabilities{
		List:   &acp.SessionListCapabilities{},
		Close:  &acp.SessionCloseCapabilities{},
		Resume: &acp.SessionResumeCapabilities{},
		Fork:   &acp.SessionForkCapabilities{},
	}
}

// ResumeSession implements acp.Agent (session/resume, stable): the session
// is opened from its log as session/load opens it (crash repair
// committed, MCP servers connected), but no history is streamed back;
// the answer carries the modes and config options, and the available
// commands follow it. A session already open in this process is resumed
// as it is (a client that reconnects its view of it), with its cwd
// unchanged.
func (srv *Server) ResumeSession(ctx context.Context, p acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	if err := srv.enter(); err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	defer srv.exit()
	if err := unsupportedDirs(p.AdditionalDirectories); err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	withMCP, err := mcpOption(p.McpServers)
	if err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	s, err := srv.eng.Session(string(p.SessionId))
	if err != nil {
		s, err = srv.eng.LoadSession(ctx, string(p.SessionId), p.Cwd, withMCP)
		if err != nil {
			srv.logFailure("session/resume", err)
			return acp.ResumeSessionResponse{}, acpError(err)
		}
		s.SetClient(srv.client(s.ID()))
	}
	srv.notifyAfterAnswer(ctx, s.ID(), availableCommands(srv.eng.SessionCommands(ctx, s)))
	return acp.ResumeSessionResponse{Modes: modes(s.Mode()), ConfigOptions: configOptions(s)}, nil
}
