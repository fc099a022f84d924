package harness

import (
	"bytes"
	"encoding/json"
)

// withoutProgress drops from a transcript the frames that stream a running
// command's output (a tool_call_update in_progress with content, see
// agent.Updates.ToolProgress): how many a run sends depends on how long
// its commands take on the machine, so no golden can pin them. The
// result, in the call's last update, is pinned as usual.
func withoutProgress(transcript []byte) []byte {
	if !bytes.Contains(transcript, []byte(`"in_progress"`)) {
		return transcript
	}
	var out []byte
	for _, line := range bytes.SplitAfter(transcript, []byte("\n")) {
		if !isProgress(line) {
			out = append(out, line...)
		}
	}
	return out
}

// isProgress reports whether line is a progress frame.
func isProgress(line []byte) bool {
	if !bytes.Contains(line, []byte(`"tool_call_update"`)) || !bytes.Contains(line, []byte(`"in_progress"`)) {
		return false
	}
	var f struct {
		Method string `json:"method"`
		Params struct {
			Update struct {
				SessionUpdate string          `json:"sessionUpdate"`
				Status        string          `json:"status"`
				Content       json.RawMessage `json:"content"`
			} `json:"update"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &f) != nil || f.Method != "session/update" {
		return false
	}
	u := f.Params.Update
	return u.SessionUpdate == "tool_call_update" && u.Status == "in_progress" && len(u.Content) > 0 && string(u.Content) != "null"
}
