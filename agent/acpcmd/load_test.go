package acpcmd_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// TestLoadInFreshProcess: process 1 creates a session, runs a prompt and
// exits on stdin close; process 2, on the same state dir, loads it. The
// history streams back before the session/load answer, and the next
// prompt's step writes a resume header.
func TestLoadInFreshProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	recorded := fixture(t, "load-resume", "session.jsonl")
	const first, second = "Remember the word PLUM. Reply OK.", "Which word did I ask you to remember?"

	p1 := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--session-id", "S1", "--replay", recorded)
	p1.initialize()
	sid := p1.newSession(ws)
	if stop, _ := p1.prompt(sid, first); stop != "end_turn" {
		t.Fatalf("process 1: stopReason %q", stop)
	}
	if code := p1.finish(); code != 0 {
		t.Fatalf("process 1 exited %d; stderr:\n%s", code, p1.stderr.String())
	}
	checkFramesOnly(t, p1.stdoutLines())

	p2 := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--replay", recorded)
	p2.initialize()
	res, before := p2.call("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
	if !strings.Contains(string(res), `"currentModeId":"workspace-write"`) {
		t.Errorf("session/load result %s lacks the current mode", res)
	}
	var history []string
	for _, f := range before {
		s, kind, text := f.update()
		if s != sid {
			t.Errorf("frame before the load answer is not an update of %s: %s", sid, f.raw)
			continue
		}
		if kind == "available_commands_update" {
			continue // advertised on load; not history
		}
		history = append(history, kind+": "+text)
	}
	// The context use of the last call and the stored title are shown again
	// after the history (agent/history.go, agent/title.go).
	if want := []string{"user_message_chunk: " + first, "agent_message_chunk: OK", "usage_update: ", "session_info_update: "}; !slices.Equal(history, want) {
		t.Errorf("history before the session/load answer\n got %q\nwant %q", history, want)
	}
	stop, streamed := p2.prompt(sid, second)
	if stop != "end_turn" {
		t.Fatalf("process 2: stopReason %q", stop)
	}
	var answer string
	for _, f := range streamed {
		if _, kind, text := f.update(); kind == "agent_message_chunk" {
			answer += text
		}
	}
	if answer != "PLUM" {
		t.Errorf("process 2 answered %q, want PLUM (the second recorded call)", answer)
	}
	if code := p2.finish(); code != 0 {
		t.Fatalf("process 2 exited %d; stderr:\n%s", code, p2.stderr.String())
	}
	checkFramesOnly(t, p2.stdoutLines())

	d, err := jsonl.ReadFile(filepath.Join(state, sid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sessionlog.Seed(d.Header, d.Events); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	var headers [][]byte
	resumeTurn := 0
	turn := 0
	for i := range d.Events {
		e := &d.Events[i]
		switch e.Type {
		case sessionlog.TypeTurnStart:
			turn++
		case sessionlog.TypeRequestHeader:
			h, err := sessionlog.DecodeData[sessionlog.RequestHeaderData](e)
			if err != nil {
				t.Fatal(err)
			}
			reasons = append(reasons, h.Reason)
			headers = append(headers, h.Header)
			if h.Reason == sessionlog.ReasonResume {
				resumeTurn = turn
			}
		}
	}
	if want := []string{sessionlog.ReasonInitial, sessionlog.ReasonResume}; !slices.Equal(reasons, want) {
		t.Fatalf("request/header reasons %v, want %v", reasons, want)
	}
	if resumeTurn != 2 {
		t.Errorf("resume header in turn %d, want 2", resumeTurn)
	}
	// Nothing changed between the processes: the resume header is a full
	// snapshot equal to the initial one.
	if string(headers[0]) != string(headers[1]) {
		t.Errorf("resume header differs from the initial one:\n%s\n%s", headers[0], headers[1])
	}
	req, err := sessionlog.Reconstruct(d.Header, d.Events, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 3 {
		t.Errorf("the resumed request carries %d messages, want 3 (the first turn and the new prompt)", len(req.Messages))
	}
}
