package acpcmd_test

import (
	"encoding/json"
	"testing"
)

// chunkIDs returns the messageId of each chunk of kind in frames ("" for
// a chunk without one).
func chunkIDs(t *testing.T, frames []frame, kind string) []string {
	t.Helper()
	var ids []string
	for _, f := range frames {
		if _, k, _ := f.update(); k != kind {
			continue
		}
		var p struct {
			Update struct {
				MessageID string `json:"messageId"`
			} `json:"update"`
		}
		if err := json.Unmarshal(f.Params, &p); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.Update.MessageID)
	}
	return ids
}

// oneID checks that ids is non-empty, all one non-empty id, and returns it.
func oneID(t *testing.T, what string, ids []string) string {
	t.Helper()
	if len(ids) == 0 {
		t.Fatalf("%s: no chunks", what)
	}
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("%s: message ids %q, want one non-empty id on every chunk", what, ids)
		}
	}
	return ids[0]
}

// TestMessageIDsStable: the chunks of an answer carry one messageId, the
// same live and when a fresh process loads the session; the loaded user
// message has an id of its own; the next answer a new one.
func TestMessageIDsStable(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	p1 := surfaceProc(t, dir, state, nil, "one two three four")
	p1.initialize()
	sid := p1.newSession(ws)
	_, frames := p1.prompt(sid, "count")
	live := oneID(t, "live answer", chunkIDs(t, frames, "agent_message_chunk"))
	if code := p1.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, p1.stderr.String())
	}
	next := ""
	for round := range 2 { // a restart between loads changes nothing
		p := surfaceProc(t, dir, state, nil, "five")
		p.initialize()
		_, history := p.call("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
		ids := chunkIDs(t, history, "agent_message_chunk")
		if round == 1 {
			// The second answer, after the first one's chunks.
			if len(ids) < 2 || ids[len(ids)-1] != next {
				t.Errorf("round 1: loaded answer ids %q, want the first answer's then %q", ids, next)
			}
			ids = ids[:len(ids)-1]
		}
		if loaded := oneID(t, "loaded answer", ids); loaded != live {
			t.Errorf("round %d: the answer's id is %q after load, %q live", round, loaded, live)
		}
		users := chunkIDs(t, history, "user_message_chunk")
		if users[0] == "" || users[0] == live {
			t.Errorf("the loaded user message has id %q (the answer's is %q)", users[0], live)
		}
		if round == 0 {
			_, frames := p.prompt(sid, "more")
			if next = oneID(t, "next answer", chunkIDs(t, frames, "agent_message_chunk")); next == live || next == users[0] {
				t.Errorf("the next answer reuses id %q", next)
			}
		}
		if code := p.finish(); code != 0 {
			t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
		}
	}
}
