package acpcmd_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
)

// forkStart starts `reel acp` with the stand-in model at url.
func forkStart(t *testing.T, dir, url string) *proc {
	t.Helper()
	env := append(baseEnv(t), "DEEPSEEK_API_KEY=sk-reel-fake-attack")
	p := startProc(t, dir, env, "acp", "--state-dir", filepath.Join(dir, "state"),
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model")
	p.initialize()
	return p
}

// forkUserTexts is the text of the user message chunks of frames, in order.
func forkUserTexts(frames []frame) string {
	var b strings.Builder
	for _, f := range frames {
		if _, kind, text := f.update(); kind == "user_message_chunk" {
			b.WriteString(text + "|")
		}
	}
	return b.String()
}

// TestForkSessionAtMessage: session/fork anchored at the first answer's
// message id keeps the first turn only; each session's next request holds
// its own history and nothing of the other's; after a restart both load
// with their own history. Anchors that are not a message id of the
// session are refused with invalid params, and nothing is created.
func TestForkSessionAtMessage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	rwFiles(t, ws, map[string]string{"a.txt": "a"})
	url, model := standinURL(t, &standin.Script{Responses: []standin.Response{
		{Text: "answer-one"}, {Text: "answer-two"}, {Text: "answer-fork"}, {Text: "answer-orig"},
	}})
	p := forkStart(t, dir, url)
	res, _ := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var caps struct {
		AgentCapabilities struct {
			SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
	}
	if err := json.Unmarshal(res, &caps); err != nil || caps.AgentCapabilities.SessionCapabilities["fork"] == nil {
		t.Errorf("initialize does not advertise sessionCapabilities.fork: %s", res)
	}
	sid := p.newSession(ws)
	_, frames := p.prompt(sid, "first-prompt")
	at := oneID(t, "first answer", chunkIDs(t, frames, "agent_message_chunk"))
	_, frames = p.prompt(sid, "second-prompt")
	second := oneID(t, "second answer", chunkIDs(t, frames, "agent_message_chunk"))

	res, _ = p.call("session/fork", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{},
		"_meta": map[string]any{"reel": map[string]any{"atMessageId": at}}})
	var forked struct {
		SessionID string          `json:"sessionId"`
		Modes     json.RawMessage `json:"modes"`
	}
	if err := json.Unmarshal(res, &forked); err != nil || forked.SessionID == "" || forked.SessionID == sid || forked.Modes == nil {
		t.Fatalf("session/fork result %s", res)
	}
	fid := forked.SessionID

	// Hostile anchors: each refused with -32602, no session created.
	for _, tc := range []struct {
		name, sid string
		reel      map[string]any
	}{
		{"unknown id", sid, map[string]any{"atMessageId": "m999"}},
		{"not an id", sid, map[string]any{"atMessageId": "m01"}},
		{"the other session's id", fid, map[string]any{"atMessageId": second}},
		{"a non-message seq", sid, map[string]any{"atSeq": 0}},
		{"negative seq", sid, map[string]any{"atSeq": -1}},
		{"huge seq", sid, map[string]any{"atSeq": 1 << 40}},
		{"unknown session", "nosuch", map[string]any{"atSeq": 1}},
	} {
		resp, _ := p.await(p.request("session/fork", map[string]any{"sessionId": tc.sid, "cwd": ws, "mcpServers": []any{},
			"_meta": map[string]any{"reel": tc.reel}}))
		if resp.Error == nil || !strings.Contains(string(resp.raw), "-32602") {
			t.Errorf("%s: session/fork answered %s, want invalid params", tc.name, resp.raw)
		}
	}

	p.prompt(fid, "fork-prompt")
	p.prompt(sid, "orig-prompt")
	if code := p.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
	}
	reqs := model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	for i, tc := range []struct {
		name      string
		has, hasn []string
	}{
		2: {"the fork's request", []string{"first-prompt", "answer-one", "fork-prompt"}, []string{"second-prompt", "answer-two", "orig-prompt"}},
		3: {"the original's request", []string{"first-prompt", "answer-one", "second-prompt", "answer-two", "orig-prompt"}, []string{"fork-prompt", "answer-fork"}},
	} {
		if tc.name == "" {
			continue
		}
		body := string(reqs[i])
		for _, s := range tc.has {
			if !strings.Contains(body, s) {
				t.Errorf("%s lacks %q", tc.name, s)
			}
		}
		for _, s := range tc.hasn {
			if strings.Contains(body, s) {
				t.Errorf("%s holds %q of the other session", tc.name, s)
			}
		}
	}
	if d := logEvents(t, filepath.Join(dir, "state"), fid); !hasEndSeed(d) {
		t.Errorf("the fork's log has no session/end-seed")
	}

	// After a restart each loads with its own history.
	p = forkStart(t, dir, url)
	for _, tc := range []struct{ sid, want string }{
		{fid, "first-prompt|fork-prompt|"},
		{sid, "first-prompt|second-prompt|orig-prompt|"},
	} {
		_, history := p.call("session/load", map[string]any{"sessionId": tc.sid, "cwd": ws, "mcpServers": []any{}})
		if got := forkUserTexts(history); got != tc.want {
			t.Errorf("session %s loads user messages %q, want %q", tc.sid, got, tc.want)
		}
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
	}
}

// hasEndSeed reports whether events hold a session/end-seed.
func hasEndSeed(events []sessionlog.Event) bool {
	for _, e := range events {
		if e.Type == sessionlog.TypeEndSeed {
			return true
		}
	}
	return false
}

// TestForkSessionBusy: a session running a prompt is not forked (its
// history is still being written): invalid params saying it is busy.
func TestForkSessionBusy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	rwFiles(t, ws, map[string]string{"a.txt": "a"})
	url, model := standinURL(t, &standin.Script{Responses: []standin.Response{{Text: "answer-one"}, {Hang: true}}})
	p := forkStart(t, dir, url)
	sid := p.newSession(ws)
	p.prompt(sid, "first-prompt")
	running := p.request("session/prompt", promptParams(sid, "second-prompt"))
	for len(model.Requests()) < 2 { // the prompt's request hangs at the model
		time.Sleep(10 * time.Millisecond)
	}
	resp, _ := p.await(p.request("session/fork", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}))
	if resp.Error == nil || !strings.Contains(resp.raw, "-32602") || !strings.Contains(resp.raw, "busy") {
		t.Errorf("session/fork of a busy session answered %s, want invalid params saying it is busy", resp.raw)
	}
	p.notify("session/cancel", map[string]any{"sessionId": sid})
	p.await(running)
	if code := p.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
	}
}
