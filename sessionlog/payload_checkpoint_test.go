package sessionlog_test

import (
	"encoding/json"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// TestCheckpointPayload: workspace/checkpoint encodes in a fixed member
// order with the empty members absent, and re-encodes to the same bytes.
func TestCheckpointPayload(t *testing.T) {
	for _, c := range []struct {
		d    sessionlog.CheckpointData
		want string
	}{
		{sessionlog.CheckpointData{Kind: sessionlog.CheckpointCapture, Turn: 1, Tree: "ab", Files: 2, Bytes: 9, Left: []string{"big \"x\""}},
			`{"kind":"capture","turn":1,"tree":"ab","files":2,"bytes":9,"left":["big \"x\""]}`},
		{sessionlog.CheckpointData{Kind: sessionlog.CheckpointSkipped, Turn: 3, Note: "too big"}, `{"kind":"skipped","turn":3,"note":"too big"}`},
		{sessionlog.CheckpointData{Kind: sessionlog.CheckpointRestore, Turn: 2, Tree: "cd", Paths: []string{"a", "b"}, Forced: true, Journal: "/s/restore-4.journal"},
			`{"kind":"restore","turn":2,"tree":"cd","paths":["a","b"],"forced":true,"journal":"/s/restore-4.journal"}`},
	} {
		got := string(c.d.AppendJSON(nil))
		if got != c.want {
			t.Errorf("AppendJSON = %s, want %s", got, c.want)
		}
		e := sessionlog.Event{Type: sessionlog.TypeWorkspaceCheckpoint, Data: json.RawMessage(got)}
		re, ok, err := sessionlog.ReencodePayload(&e)
		if err != nil || !ok || string(re) != got {
			t.Errorf("ReencodePayload(%s) = %s, %v, %v", got, re, ok, err)
		}
	}
}
