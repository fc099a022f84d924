package equiv

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Wire is what the checks read of an agent's stdout: the answers to the
// client's requests in order, each with the agent text streamed before
// it, the permission requests the agent sent, and lines that were no
// JSON-RPC frame.
type Wire struct {
	// Answers are the responses to client requests, in arrival order.
	Answers []Answer
	// Permissions are the session/request_permission requests, in order.
	Permissions []Permission
	// Bad are the 1-based numbers of non-empty lines that are not a
	// JSON-RPC 2.0 frame.
	Bad []int
	// Trailing is agent text streamed after the last answer.
	Trailing string
	// Updates are every session/update notification, in order (the
	// agent_message_chunk text is also gathered into Answers and
	// Trailing).
	Updates []Update
	// Opened are the session ids the answers to session/new (or load,
	// fork, resume) name, in order: answers whose result has a
	// sessionId.
	Opened []string
}

// Update is one session/update notification.
type Update struct {
	// Line is the 1-based line of the frame.
	Line int
	// Session is params.sessionId.
	Session string
	// Kind is update.sessionUpdate.
	Kind string
	// Raw is the update object.
	Raw json.RawMessage
}

// Answer is one response frame.
type Answer struct {
	// Line is the 1-based line of the frame.
	Line int
	// Outcome is "stopReason X", "error CODE" or "result".
	Outcome string
	// Text is the agent_message_chunk text streamed since the previous
	// answer.
	Text string
}

// Permission is one session/request_permission request.
type Permission struct {
	// Line is the 1-based line of the frame.
	Line int
	// ToolCallID is params.toolCall.toolCallId.
	ToolCallID string
	// Kinds are the offered option kinds, in order.
	Kinds []string
}

// frame is the part of a JSON-RPC frame the parser reads.
type frame struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id"`
	Method  string           `json:"method"`
	Params  struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
		ToolCall  json.RawMessage `json:"toolCall"`
		Options   json.RawMessage `json:"options"`
	} `json:"params"`
	Result *json.RawMessage `json:"result"`
	Error  *struct {
		Code *int `json:"code"`
	} `json:"error"`
}

// ParseWire reads an agent's stdout. It never fails: a line that is not a
// JSON-RPC 2.0 frame is listed in Bad.
func ParseWire(b []byte) *Wire {
	w := &Wire{}
	var text strings.Builder
	for i, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var f frame
		if err := json.Unmarshal(line, &f); err != nil || f.JSONRPC != "2.0" {
			w.Bad = append(w.Bad, i+1)
			continue
		}
		switch {
		case f.Method == "session/update":
			var u struct {
				SessionUpdate string `json:"sessionUpdate"`
			}
			_ = json.Unmarshal(f.Params.Update, &u)
			w.Updates = append(w.Updates, Update{Line: i + 1, Session: f.Params.SessionID, Kind: u.SessionUpdate, Raw: f.Params.Update})
			if u.SessionUpdate == "agent_message_chunk" {
				text.WriteString(chunkText(f.Params.Update))
			}
		case f.Method == "session/request_permission" && f.ID != nil:
			var tc struct {
				ToolCallID string `json:"toolCallId"`
			}
			var opts []struct {
				Kind string `json:"kind"`
			}
			_ = json.Unmarshal(f.Params.ToolCall, &tc)
			_ = json.Unmarshal(f.Params.Options, &opts)
			p := Permission{Line: i + 1, ToolCallID: tc.ToolCallID}
			for _, o := range opts {
				p.Kinds = append(p.Kinds, o.Kind)
			}
			w.Permissions = append(w.Permissions, p)
		case f.Method == "" && (f.Result != nil || f.Error != nil):
			w.Answers = append(w.Answers, Answer{Line: i + 1, Outcome: outcome(&f), Text: text.String()})
			if id := openedSession(&f); id != "" {
				w.Opened = append(w.Opened, id)
			}
			text.Reset()
		case f.Method == "":
			w.Bad = append(w.Bad, i+1)
		}
	}
	w.Trailing = text.String()
	return w
}

// outcome names what a response says.
func outcome(f *frame) string {
	if f.Error != nil {
		if f.Error.Code == nil {
			return "error (no code)"
		}
		return "error " + strconv.Itoa(*f.Error.Code)
	}
	var r struct {
		StopReason *string `json:"stopReason"`
	}
	if json.Unmarshal(*f.Result, &r) == nil && r.StopReason != nil {
		return "stopReason " + *r.StopReason
	}
	return "result"
}

// openedSession is the sessionId a result names, "" for none.
func openedSession(f *frame) string {
	if f.Result == nil {
		return ""
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(*f.Result, &r)
	return r.SessionID
}
