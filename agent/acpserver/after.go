package acpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	acp "github.com/coder/acp-go-sdk"
)

// Frames that follow an answer.
//
// A session's available_commands_update names the session id the
// session/new (or session/load, session/resume) answer gives the client;
// sent before that answer, it reaches a client that does not know the id
// yet (a JetBrains client hung on exactly this ordering). The handler
// therefore queues the update on the establishing request, and the writer
// writes it right after that request's answer, under the same frame turn,
// so nothing comes between them. The frame filter reads no further frame
// until a session-establishing request is answered, so at most one is in
// flight and the handler can find it without the SDK telling it its id.

// establish records request id as the session-establishing request in
// flight.
func (f *inflight) establish(id string) {
	f.mu.Lock()
	f.establishing = id
	f.mu.Unlock()
}

// trail queues frame to be written right after the answer to the
// session-establishing request in flight. It reports false when there is
// none (a server driven without the frame filter).
func (f *inflight) trail(frame []byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.establishing == "" {
		return false
	}
	if f.trailing == nil {
		f.trailing = map[string][][]byte{}
	}
	f.trailing[f.establishing] = append(f.trailing[f.establishing], frame)
	return true
}

// takeTrailing removes and returns the frames queued behind request id.
func (f *inflight) takeTrailing(id string) [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.establishing == id {
		f.establishing = ""
	}
	out := f.trailing[id]
	delete(f.trailing, id)
	return out
}

// writeTrailing writes the frames queued behind the answer to request id
// (the caller holds the frame turn and has just written that answer).
func (l *lockedWriter) writeTrailing(id string) {
	if l.inflight == nil {
		return
	}
	for _, fr := range l.inflight.takeTrailing(id) {
		if _, err := l.write(fr); err != nil {
			return
		}
	}
}

// notifyAfterAnswer sends u to session right after the answer to the
// session-establishing request being handled; without one it is sent now.
func (srv *Server) notifyAfterAnswer(ctx context.Context, session string, u acp.SessionUpdate) {
	if srv.inflight != nil {
		if fr, err := updateFrame(session, u); err == nil && srv.inflight.trail(fr) {
			return
		}
	}
	srv.notify(ctx, session, u)
}

// updateFrame encodes the session/update notification of u to session,
// newline-terminated: an available_commands_update by hand
// (commandsFrame), anything else by encoding/json.
func updateFrame(session string, u acp.SessionUpdate) ([]byte, error) {
	if fr, ok := commandsFrame(session, u); ok {
		return fr, nil
	}
	return notificationFrame(acp.ClientMethodSessionUpdate, acp.SessionNotification{SessionId: acp.SessionId(session), Update: u})
}

// commandsFrame writes the session/update frame of an
// available_commands_update by hand, the bytes notificationFrame writes
// for it (TestCommandsFrameBytes). Encoding it through the SDK's union
// (variant, map, map again) is the first use of those types in a process:
// ≈0.1 ms of CPU before session/new's answer is complete. ok is false for
// any other update, and for commands with more than a name and a
// description.
func commandsFrame(session string, u acp.SessionUpdate) (_ []byte, ok bool) {
	c := u.AvailableCommandsUpdate
	if c == nil || c.Meta != nil || len(c.AvailableCommands) == 0 {
		return nil, false
	}
	if !reflect.DeepEqual(u, acp.SessionUpdate{AvailableCommandsUpdate: c}) {
		return nil, false
	}
	var b bytes.Buffer
	b.Grow(128 + 96*len(c.AvailableCommands))
	b.WriteString(`{"jsonrpc":"2.0","method":"` + acp.ClientMethodSessionUpdate + `","params":{"sessionId":`)
	writeString(&b, session)
	b.WriteString(`,"update":{"availableCommands":[`)
	for i, cmd := range c.AvailableCommands {
		if cmd.Meta != nil || cmd.Input != nil {
			return nil, false
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"description":`)
		writeUnionString(&b, cmd.Description)
		b.WriteString(`,"name":`)
		writeUnionString(&b, cmd.Name)
		b.WriteByte('}')
	}
	b.WriteString(`],"sessionUpdate":"available_commands_update"}}}` + "\n")
	return b.Bytes(), true
}

// notificationFrame encodes a JSON-RPC notification, newline-terminated.
func notificationFrame(method string, params any) ([]byte, error) {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
