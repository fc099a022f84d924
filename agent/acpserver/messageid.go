package acpserver

import (
	"context"

	"github.com/reel-agent/reel/agent"
)

// Message ids (ACP ContentChunk.messageId): the engine names each message
// from the log before its chunks (agent.MessageMarker), so a message has
// the same id live, after session/load and after a restart. The chunks of
// the model's answer carry the id of their step; the user's chunks on
// load that of their user/message event. The model's thoughts carry their
// step's id too; a notice shown as a thought (a client without
// session.notices) carries none: it belongs to no message.

var _ agent.MessageMarker = updates{}

// messageIDs is one session's current message ids by role.
type messageIDs struct{ assistant, user string }

// Message implements agent.MessageMarker.
func (u updates) Message(_ context.Context, role, id string) {
	u.srv.mu.Lock()
	defer u.srv.mu.Unlock()
	if u.srv.messages == nil {
		u.srv.messages = map[string]*messageIDs{}
	}
	m := u.srv.messages[u.session]
	if m == nil {
		m = &messageIDs{}
		u.srv.messages[u.session] = m
	}
	switch role {
	case "assistant":
		m.assistant = id
	case "user":
		m.user = id
	}
}

// messageID is the id of session's current message of role (nil when
// none was named).
func (srv *Server) messageID(session, role string) *string {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	m := srv.messages[session]
	if m == nil {
		return nil
	}
	id := m.assistant
	if role == "user" {
		id = m.user
	}
	if id == "" {
		return nil
	}
	return &id
}

// currentMessageID is messageID without the copy: the id, and false when
// none was named.
func (srv *Server) currentMessageID(session, role string) (string, bool) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	m := srv.messages[session]
	if m == nil {
		return "", false
	}
	id := m.assistant
	if role == "user" {
		id = m.user
	}
	return id, id != ""
}

// forgetMessages drops session's message ids (the session was closed).
func (srv *Server) forgetMessages(session string) {
	srv.mu.Lock()
	delete(srv.messages, session)
	srv.mu.Unlock()
}
