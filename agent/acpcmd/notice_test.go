package acpcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// surfaceUpdate is the members of a session/update this test reads.
type surfaceUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Severity      string `json:"severity"`
	Title         string `json:"title"`
	CompactionID  string `json:"compactionId"`
	Status        string `json:"status"`
	Content       struct {
		Text string `json:"text"`
	} `json:"content"`
}

func updatesOf(t *testing.T, frames []frame) []surfaceUpdate {
	t.Helper()
	var out []surfaceUpdate
	for _, f := range frames {
		if f.Method != "session/update" {
			continue
		}
		var p struct {
			Update surfaceUpdate `json:"update"`
		}
		if err := json.Unmarshal(f.Params, &p); err != nil {
			t.Fatalf("session/update %s: %v", f.raw, err)
		}
		out = append(out, p.Update)
	}
	return out
}

// TestNoticesAndCompactionByCapability: an unusable hook file is shown as
// a notice update to a client that advertises session.notices and as the
// thought it always was otherwise; /compact is shown as a
// compaction_summary_chunk (the summary) and a compaction_update
// (completed, same id) to a client that advertises session.compaction,
// and as agent text otherwise.
func TestNoticesAndCompactionByCapability(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		caps map[string]any
		new  bool
	}{
		{"legacy client", map[string]any{}, false},
		{"notices and compaction", map[string]any{"session": map[string]any{"notices": map[string]any{}, "compaction": map[string]any{}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ws, state := workspace(t)
			broken := filepath.Join(dir, "hooks.json")
			if err := os.WriteFile(broken, []byte("{not json"), 0o600); err != nil {
				t.Fatal(err)
			}
			p := surfaceProc(t, dir, state, []string{"--hooks", broken}, "first answer", "second answer", "SUMMARY-TEXT")
			p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": tc.caps})
			sid := p.newSession(ws)
			_, frames := p.prompt(sid, "first")
			notices, hookThoughts := 0, 0
			for _, u := range updatesOf(t, frames) {
				switch {
				case u.SessionUpdate == "notice" && u.Severity == "warning" && strings.Contains(u.Title, "--hooks"):
					notices++
				case u.SessionUpdate == "agent_thought_chunk" && strings.Contains(u.Content.Text, "--hooks"):
					hookThoughts++
				}
			}
			if tc.new && (notices != 1 || hookThoughts != 0) {
				t.Errorf("the broken hook file was shown as %d notices and %d thoughts, want 1 notice", notices, hookThoughts)
			}
			if !tc.new && (notices != 0 || hookThoughts != 1) {
				t.Errorf("the broken hook file was shown as %d notices and %d thoughts, want 1 thought", notices, hookThoughts)
			}
			p.prompt(sid, "second")
			_, frames = p.prompt(sid, "/compact")
			var kinds []string
			var chunk, done surfaceUpdate
			text := ""
			for _, u := range updatesOf(t, frames) {
				kinds = append(kinds, u.SessionUpdate)
				switch u.SessionUpdate {
				case "compaction_summary_chunk":
					chunk = u
				case "compaction_update":
					done = u
				case "agent_message_chunk":
					text += u.Content.Text
				}
			}
			if tc.new {
				if chunk.Content.Text != "SUMMARY-TEXT" || !strings.HasPrefix(chunk.CompactionID, "compaction-") ||
					done.CompactionID != chunk.CompactionID || done.Status != "completed" || text != "" {
					t.Errorf("/compact shown as %q (chunk %+v, update %+v, text %q), want the summary chunk then the completed update", kinds, chunk, done, text)
				}
			} else if chunk.CompactionID != "" || done.CompactionID != "" || !strings.HasPrefix(text, "Compacted the earlier conversation") {
				t.Errorf("/compact shown to a legacy client as %q (text %q), want agent text", kinds, text)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
			}
			if n := checkFrames(t, p, map[string]string{"1": "InitializeResponse"}); n < 10 {
				t.Errorf("only %d frames checked against the ACP schema", n)
			}
		})
	}
}

// TestAutoCompactionByCapability: the compaction reel makes on its own
// when the context fills (a --context-window far below the system prompt,
// so the second prompt compacts the first turn) is shown to a client that
// advertises session.compaction as compaction_update in_progress, the
// summary as a compaction_summary_chunk and compaction_update completed
// (one id, in that order, before the step's answer); to a client that
// shows notices only as an info notice; to a legacy client as a thought.
func TestAutoCompactionByCapability(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		caps map[string]any
		want []string // the compaction as shown, in order
	}{
		{"legacy client", map[string]any{}, []string{"agent_thought_chunk"}},
		{"notices only", map[string]any{"session": map[string]any{"notices": map[string]any{}}}, []string{"notice"}},
		{"compaction", map[string]any{"session": map[string]any{"notices": map[string]any{}, "compaction": map[string]any{}}},
			[]string{"compaction_update in_progress", "compaction_summary_chunk AUTO-SUMMARY", "compaction_update completed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ws, state := workspace(t)
			p := surfaceProc(t, dir, state, []string{"--context-window", "1000"}, "first answer", "AUTO-SUMMARY", "second answer")
			p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": tc.caps})
			sid := p.newSession(ws)
			_, frames := p.prompt(sid, "first")
			for _, u := range updatesOf(t, frames) {
				if strings.HasPrefix(u.SessionUpdate, "compaction") || strings.Contains(u.Title+u.Content.Text, "Compacted") {
					t.Errorf("the first prompt, with nothing older to compact, showed %+v", u)
				}
			}
			_, frames = p.prompt(sid, "second")
			var got []string
			id, answer := "", ""
			for _, u := range updatesOf(t, frames) {
				switch u.SessionUpdate {
				case "compaction_update":
					got = append(got, u.SessionUpdate+" "+u.Status)
				case "compaction_summary_chunk":
					got = append(got, u.SessionUpdate+" "+u.Content.Text)
				case "notice":
					if u.Severity == "info" && strings.HasPrefix(u.Title, "Compacted the earlier conversation") {
						got = append(got, u.SessionUpdate)
					}
				case "agent_thought_chunk":
					if strings.HasPrefix(u.Content.Text, "Compacted the earlier conversation") {
						got = append(got, u.SessionUpdate)
					}
				case "agent_message_chunk":
					if len(got) < len(tc.want) {
						t.Errorf("agent text %q came before the compaction was shown (so far %q)", u.Content.Text, got)
					}
					answer += u.Content.Text
				}
				if u.CompactionID != "" {
					if id == "" {
						id = u.CompactionID
					}
					if u.CompactionID != id || !strings.HasPrefix(id, "compaction-") {
						t.Errorf("compaction ids %q and %q, want one compaction-<seq> id", id, u.CompactionID)
					}
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("the automatic compaction was shown as %q, want %q", got, tc.want)
			}
			if answer != "second answer" {
				t.Errorf("answer %q, want the step's answer after the compaction", answer)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
			}
			if n := checkFrames(t, p, map[string]string{"1": "InitializeResponse"}); n < 8 {
				t.Errorf("only %d frames checked against the ACP schema", n)
			}
			events := logEvents(t, state, sid)
			auto := false
			for _, e := range events {
				if e.Type == "compaction/start" && strings.Contains(string(e.Data), `"reason":"auto"`) {
					auto = true
				}
			}
			if !auto {
				t.Error("the log has no automatic compaction/start: the test did not exercise automatic compaction")
			}
		})
	}
}
