package scenario

import (
	"encoding/json"
	"slices"

	"github.com/reel-agent/reel/internal/strictjson"
)

// The editor a scenario's client plays (reel's own input.json members):
//
//	"editorBuffers": {"notes.txt": "unsaved text", …}
//	"elicitationAnswers": [{"action":"accept","content":{…}}, {"action":"decline"}, …]
//
// editorBuffers makes the client advertise fs/read_text_file and
// fs/write_text_file and hold unsaved buffers: a read of a path with a
// buffer (slash-separated, relative to the run's cwd) gets the buffer,
// any other read the file on disk; a write replaces the path's buffer (the
// disk is not written). elicitationAnswers makes the client advertise form
// elicitation and answer each elicitation/create with the next reply, as
// it is written; an elicitation past the last reply, or a reply left over
// at the end, fails the run.

// editorBuffers parses editorBuffers: local paths to their text.
func editorBuffers(v strictjson.Value) (map[string]string, error) {
	obj, err := v.Object()
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(obj.Members))
	for _, m := range obj.Members {
		if why := strictjson.NotLocal(m.Key, "run's cwd"); why != "" {
			return nil, m.Value.Errorf(ErrUnsafePath, "%s", why)
		}
		text, err := m.Value.Str()
		if err != nil {
			return nil, err
		}
		out[m.Key] = text
	}
	return out, nil
}

// elicitationAnswers parses elicitationAnswers: objects whose action is
// accept (with an optional content object), decline or cancel.
func elicitationAnswers(v strictjson.Value) ([]json.RawMessage, error) {
	elems, err := v.Array()
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	for _, e := range elems {
		obj, err := e.Object()
		if err != nil {
			return nil, err
		}
		fields := []string{"action", "content"}
		if err := obj.Check(fields, strictjson.Fields{Allowed: fields, Required: []string{"action"}}, "an elicitation answer"); err != nil {
			return nil, err
		}
		for _, m := range obj.Members {
			switch m.Key {
			case "action":
				a, err := m.Value.Str()
				if err != nil {
					return nil, err
				}
				if !slices.Contains([]string{"accept", "decline", "cancel"}, a) {
					return nil, m.Value.Errorf(ErrBadValue, "unknown elicitation action %q (want accept, decline or cancel)", a)
				}
			case "content":
				if _, err := m.Value.Object(); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, append(json.RawMessage(nil), e.Raw()...))
	}
	return out, nil
}
