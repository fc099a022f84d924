package acpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	acp "github.com/coder/acp-go-sdk"
)

// The typed frame layer for what acp-go-sdk v0.13.0 lacks.
//
// The SDK keeps the connection; the requests it has no method for
// (session/delete) are answered here, from the frame filter, with types
// written from the ACP SDK 2.4.0 schema (harness/testdata/acp/schema.json,
// which the transcript schema test validates every frame against).

// extraMethod answers one request the SDK does not know: its result (to
// be encoded as JSON) or an error (an *acp.RequestError is sent as is;
// any other error is an internal error carrying its message).
type extraMethod func(ctx context.Context, params json.RawMessage) (any, error)

// extraMethods is the requests answered outside the SDK, each only when
// it works.
func (srv *Server) extraMethods(ctx context.Context) map[string]extraMethod {
	m := map[string]extraMethod{
		"initialize": func(_ context.Context, params json.RawMessage) (any, error) { return srv.initialize(ctx, params) },
	}
	if srv.eng.CanDelete() {
		m["session/delete"] = func(_ context.Context, params json.RawMessage) (any, error) {
			return srv.deleteSession(ctx, params)
		}
	}
	return m
}

// deleteSessionRequest is ACP's DeleteSessionRequest.
type deleteSessionRequest struct {
	SessionID string         `json:"sessionId"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// deleteSessionResponse is ACP's DeleteSessionResponse (empty).
type deleteSessionResponse struct {
	Meta map[string]any `json:"_meta,omitempty"`
}

// deleteSession answers session/delete: the stored session (its log, its
// subagents' logs, the attachments nothing else refers to) is removed.
// The id is the client's and is treated as hostile: only an id that
// names one of reel's stored top-level sessions, not open in this
// process, is deleted; anything else is invalid params saying why.
func (srv *Server) deleteSession(ctx context.Context, params json.RawMessage) (any, error) {
	if err := srv.enter(); err != nil {
		return nil, err
	}
	defer srv.exit()
	var p deleteSessionRequest
	if err := decodeParams(params, &p); err != nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": "session/delete: " + err.Error()})
	}
	if p.SessionID == "" {
		return nil, acp.NewInvalidParams(map[string]any{"error": "session/delete: sessionId is required"})
	}
	if err := srv.eng.DeleteSession(ctx, p.SessionID); err != nil {
		srv.logFailure("session/delete", err)
		return nil, acpError(err)
	}
	srv.log.Info("session deleted", "session", p.SessionID)
	return deleteSessionResponse{}, nil
}

// decodeParams decodes params into v: one JSON object whose known members
// have the right types (unknown members are ignored, as ACP requires of a
// receiver).
func decodeParams(params json.RawMessage, v any) error {
	if t := bytes.TrimSpace(params); len(t) == 0 || t[0] != '{' {
		return errors.New("params must be an object")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	return nil
}

// answer runs h on the request line and writes its answer.
func (f *frameFilter) answer(line []byte, h extraMethod) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(line, &req)
	res, err := h(context.Background(), req.Params)
	var frame []byte
	if err != nil {
		var re *acp.RequestError
		if !errors.As(err, &re) {
			re = acp.NewInternalError(map[string]any{"error": err.Error()})
		}
		frame, err = json.Marshal(struct {
			JSONRPC string            `json:"jsonrpc"`
			ID      json.RawMessage   `json:"id"`
			Error   *acp.RequestError `json:"error"`
		}{"2.0", req.ID, re})
	} else {
		frame, err = json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  any             `json:"result"`
		}{"2.0", req.ID, res})
	}
	if err != nil {
		f.log.Error("encode an answer", "err", err)
		frame, _ = json.Marshal(struct {
			JSONRPC string            `json:"jsonrpc"`
			ID      json.RawMessage   `json:"id"`
			Error   *acp.RequestError `json:"error"`
		}{"2.0", req.ID, acp.NewInternalError(nil)})
	}
	_, _ = f.out.Write(append(frame, '\n'))
}

// clientSessionCapabilities is ACP's ClientSessionCapabilities
// (clientCapabilities.session), which acp-go-sdk v0.13.0 does not decode:
// a member present (even {}) advertises the capability.
type clientSessionCapabilities struct {
	Notices    json.RawMessage `json:"notices"`
	Compaction json.RawMessage `json:"compaction"`
}

// advertised reports whether a capability member is present and not null.
func advertised(m json.RawMessage) bool {
	t := bytes.TrimSpace(m)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// initialize answers initialize: the SDK's request and response types,
// with the members they lack read from and added to the frame (the
// client's session capabilities; sessionCapabilities.delete).
func (srv *Server) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	if err := decodeParams(params, &struct{}{}); err != nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": "initialize: " + err.Error()})
	}
	var req acp.InitializeRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := req.Validate(); err != nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	var extra struct {
		ClientCapabilities struct {
			Session *clientSessionCapabilities `json:"session"`
		} `json:"clientCapabilities"`
	}
	if json.Unmarshal(params, &extra) == nil && extra.ClientCapabilities.Session != nil {
		cs := extra.ClientCapabilities.Session
		srv.mu.Lock()
		srv.clientNotices, srv.clientCompaction = advertised(cs.Notices), advertised(cs.Compaction)
		srv.mu.Unlock()
	}
	resp, err := srv.Initialize(ctx, req)
	if err != nil {
		return nil, err
	}
	if b, ok := initializeAnswer(resp, srv.eng.CanDelete()); ok {
		return b, nil
	}
	return reflectInitializeAnswer(resp, srv.eng.CanDelete())
}

// addMember sets member name to value in the object at path inside the
// JSON object doc (creating the objects on the path).
func addMember(doc []byte, path []string, name string, value json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if len(bytes.TrimSpace(doc)) > 0 {
		if err := json.Unmarshal(doc, &m); err != nil {
			return nil, err
		}
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	if len(path) == 0 {
		m[name] = value
	} else {
		inner, err := addMember(m[path[0]], path[1:], name, value)
		if err != nil {
			return nil, err
		}
		m[path[0]] = inner
	}
	b, err := json.Marshal(m)
	return json.RawMessage(b), err
}
