package acpcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// hangOverride makes the first model call stream "partial" and then hang
// until the turn is cancelled.
const hangOverride = `[{"kind":"hang","chunks":[{"type":"block-start","index":0,"blockType":"text"},{"type":"text-delta","index":0,"text":"partial"}]}]`

// TestBadInputKeepsServing feeds one reel acp process a table of bad
// inputs. Each gets the exact JSON-RPC error (code, id and a message
// fragment), and a valid request sent right after it is answered: the
// process keeps serving. stdout carries nothing but JSON-RPC frames.
func TestBadInputKeepsServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	override := filepath.Join(dir, "override.json")
	if err := os.WriteFile(override, []byte(hangOverride), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--session-id", "S1", "--log-level", "debug",
		"--replay", fixture(t, "hang-cancel", "session.jsonl"), "--replay-override", override,
		// The override is this test's own script, answering prompts the
		// recording never saw: its requests are not the recorded ones.
		"--replay-match", "off")
	p.initialize()
	sid := p.newSession(ws)
	if sid != "S1" {
		t.Fatalf("session id %q, want S1", sid)
	}

	var hung json.RawMessage     // id of the prompt left hanging by the queue-bound case
	var queued []json.RawMessage // ids of the prompts queued behind it
	tests := []struct {
		name  string
		setup func()
		frame string
		id    string // the error response's id, as JSON
		code  int
		frag  string
		after func()
		// noReply: the frame is a notification; nothing answers it.
		noReply bool
	}{
		{name: "malformed JSON", frame: `{"jsonrpc":"2.0","id":1,"method":`, id: `null`, code: -32700, frag: "Parse error"},
		{name: "JSON array (batch) frame", frame: `[{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}]`, id: `null`, code: -32600, frag: "a frame must be one JSON-RPC object"},
		{name: "JSON string frame", frame: `"hello"`, id: `null`, code: -32600, frag: "a frame must be one JSON-RPC object"},
		{name: "jsonrpc 1.0", frame: `{"jsonrpc":"1.0","id":4,"method":"session/list","params":{}}`, id: `4`, code: -32600, frag: `\"jsonrpc\" must be \"2.0\"`},
		{name: "jsonrpc missing", frame: `{"id":5,"method":"session/list","params":{}}`, id: `5`, code: -32600, frag: `must be \"2.0\"`},
		{name: "request without a method", frame: `{"jsonrpc":"2.0","id":6}`, id: `6`, code: -32600, frag: "no method"},
		{name: "unknown method", frame: `{"jsonrpc":"2.0","id":7,"method":"session/frobnicate","params":{}}`, id: `7`, code: -32601, frag: "session/frobnicate"},
		{name: "session/new params of the wrong type", frame: `{"jsonrpc":"2.0","id":8,"method":"session/new","params":"cwd"}`, id: `8`, code: -32602, frag: "Invalid params"},
		{name: "session/new cwd not a string", frame: `{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":42,"mcpServers":[]}}`, id: `9`, code: -32602, frag: "Invalid params"},
		{name: "session/new relative cwd", frame: `{"jsonrpc":"2.0","id":10,"method":"session/new","params":{"cwd":"rel/dir","mcpServers":[]}}`, id: `10`, code: -32602, frag: "must be an absolute path"},
		{name: "string id with HTML characters on session/new", frame: `{"jsonrpc":"2.0","id":"<a&b>","method":"session/new","params":{"cwd":"rel","mcpServers":[]}}`, id: `"<a&b>"`, code: -32602, frag: "must be an absolute path"},
		{name: "prompt for an unknown session", frame: `{"jsonrpc":"2.0","id":11,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"x"}]}}`, id: `11`, code: -32602, frag: `unknown session \"nope\"`},
		{name: "prompt that is not a content list", frame: `{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{"sessionId":"S1","prompt":"x"}}`, id: `12`, code: -32602, frag: "Invalid params"},
		{name: "set_mode with an unknown mode", frame: `{"jsonrpc":"2.0","id":13,"method":"session/set_mode","params":{"sessionId":"S1","modeId":"god-mode"}}`, id: `13`, code: -32602, frag: `unknown mode \"god-mode\"`},
		{name: "set_mode on an unknown session", frame: `{"jsonrpc":"2.0","id":14,"method":"session/set_mode","params":{"sessionId":"nope","modeId":"read-only"}}`, id: `14`, code: -32602, frag: `unknown session \"nope\"`},
		{name: "load an unknown session", frame: `{"jsonrpc":"2.0","id":15,"method":"session/load","params":{"sessionId":"nope","cwd":"` + ws + `","mcpServers":[]}}`, id: `15`, code: -32602, frag: `unknown session \"nope\"`},
		{name: "load a session that is open", frame: `{"jsonrpc":"2.0","id":16,"method":"session/load","params":{"sessionId":"S1","cwd":"` + ws + `","mcpServers":[]}}`, id: `16`, code: -32602, frag: "already open in this process"},
		{name: "frame over 8 MiB", frame: `{"jsonrpc":"2.0","id":17,"method":"session/list","params":{"pad":"` + strings.Repeat("x", 8<<20) + `"}}`, id: `17`, code: -32600, frag: "frame larger than 8 MiB"},
		{name: "session/new sent as a notification", frame: `{"jsonrpc":"2.0","method":"session/new","params":{"cwd":"` + ws + `","mcpServers":[]}}`, noReply: true},
		{name: "session/new with a null id", frame: `{"jsonrpc":"2.0","id":null,"method":"session/new","params":{"cwd":"` + ws + `","mcpServers":[]}}`, noReply: true},
		{
			name: "prompt over the queue bound while a prompt runs",
			setup: func() {
				hung = p.request("session/prompt", promptParams("S1", "This prompt hangs."))
				p.waitUpdate("agent_message_chunk", "partial")
				queued = nil
				for range 8 {
					queued = append(queued, p.request("session/prompt", promptParams("S1", "queued")))
				}
			},
			frame: `{"jsonrpc":"2.0","id":18,"method":"session/prompt","params":{"sessionId":"S1","prompt":[{"type":"text","text":"REFUSED PROMPT"}]}}`,
			id:    `18`, code: -32600, frag: "8 prompts queued",
			after: func() {
				p.notify("session/cancel", map[string]any{"sessionId": "S1"})
				for _, id := range append([]json.RawMessage{hung}, queued...) {
					resp, _ := p.await(id)
					if resp.Error != nil || !strings.Contains(string(resp.Result), `"stopReason":"cancelled"`) {
						t.Errorf("prompt %s ended with %s, want stopReason cancelled", id, resp.raw)
					}
				}
			},
		},
		{
			name:  "prompt on a closed session",
			setup: func() { p.call("session/close", map[string]any{"sessionId": "S1"}) },
			frame: `{"jsonrpc":"2.0","id":19,"method":"session/prompt","params":{"sessionId":"S1","prompt":[{"type":"text","text":"x"}]}}`,
			id:    `19`, code: -32602, frag: `unknown session \"S1\"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.t = t
			defer func() { p.t = nil }()
			if tt.setup != nil {
				tt.setup()
			}
			p.send(tt.frame)
			if !tt.noReply {
				resp, _ := p.await(json.RawMessage(tt.id))
				if resp.Error == nil {
					t.Fatalf("answer %s, want error %d", resp.raw, tt.code)
				}
				if resp.Error.Code != tt.code {
					t.Errorf("error code %d, want %d: %s", resp.Error.Code, tt.code, resp.raw)
				}
				if !strings.Contains(resp.raw, tt.frag) {
					t.Errorf("error %s does not mention %s", resp.raw, tt.frag)
				}
			}
			if tt.after != nil {
				tt.after()
			}
			// The process keeps serving.
			res, _ := p.call("session/list", map[string]any{})
			if !strings.Contains(string(res), `"sessions":[`) {
				t.Errorf("session/list after the bad input: %s", res)
			}
		})
	}
	p.t = t

	if code := p.finish(); code != 0 {
		t.Errorf("reel acp exited %d after stdin closed; stderr:\n%s", code, p.stderr.String())
	}
	checkFramesOnly(t, p.stdoutLines())
	if !strings.Contains(p.stderr.String(), "rejected malformed frame") {
		t.Errorf("stderr does not report the malformed frames:\n%s", p.stderr.String())
	}
	// Every answer was awaited: nothing answered the notifications.
	for _, f := range p.parked {
		t.Errorf("unexpected answer %s", f.raw)
	}
	// The log of S1: valid, ends with the cancelled turn, and the refused
	// prompt never reached it.
	d, err := jsonl.ReadFile(filepath.Join(state, "S1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sessionlog.Seed(d.Header, d.Events); err != nil {
		t.Fatalf("S1's log: %v", err)
	}
	// The last turn/end: a title call may follow the turn (agent/title.go).
	last := d.Events[len(d.Events)-1]
	for i := len(d.Events) - 1; i > 0 && last.Type != sessionlog.TypeTurnEnd; i-- {
		last = d.Events[i-1]
	}
	if last.Type != sessionlog.TypeTurnEnd || !strings.Contains(string(last.Data), `"kind":"aborted"`) {
		t.Errorf("S1's log ends with %s %s, want turn/end aborted", last.Type, last.Data)
	}
	raw, _ := os.ReadFile(filepath.Join(state, "S1.jsonl"))
	if strings.Contains(string(raw), "REFUSED PROMPT") {
		t.Error("the refused prompt reached the log")
	}
}

// TestReplayRefusesBadLogs: reel acp --replay on a corrupt or legacy log
// (or a bad override) exits non-zero before serving, with one clear line
// on stderr naming the file and the line or seq, and nothing on stdout.
func TestReplayRefusesBadLogs(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile(fixture(t, "text-turn", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(good), "\n"), "\n")
	edit := func(f func([]string) []string) string {
		return strings.Join(f(append([]string(nil), lines...)), "\n") + "\n"
	}
	tests := []struct {
		name     string
		log      string // content; "" = the file does not exist
		legacy   bool   // use the committed legacy-refused seed
		override string
		want     []string
	}{
		{name: "corrupt line mid-file", log: edit(func(l []string) []string { l[4] = `{"type":"user/message","seq":4,`; return l }),
			want: []string{"log.jsonl:5:", "corrupt log", "before the complete turn/end"}},
		{name: "seq gap", log: edit(func(l []string) []string { return append(l[:5], l[6:]...) }),
			want: []string{"log.jsonl:6:", "corrupt log", "seq 5 (session/title) breaks the contiguous sequence"}},
		{name: "format version 1", log: edit(func(l []string) []string { l[0] = strings.Replace(l[0], `"version":0`, `"version":1`, 1); return l }),
			want: []string{"log.jsonl:1:", "unsupported session format version 1"}},
		{name: "header reason fallback", log: strings.Replace(string(good), `"reason":"initial"`, `"reason":"fallback"`, 1),
			want: []string{"log.jsonl:8: seq 6 (request/header)", "legacy request-header encoding refused"}},
		{name: "legacy request/header-delta", legacy: true,
			want: []string{"seed.jsonl:6: seq 4 (request/header-delta)", "legacy request-header encoding refused"}},
		{name: "missing log", log: "",
			want: []string{"--replay", "log.jsonl", "no such file or directory"}},
		{name: "override of an unknown kind", log: string(good), override: `[{"kind":"explode"}]`,
			want: []string{"override.json: [0].kind", `unknown kind \"explode\"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "log.jsonl")
			switch {
			case tt.legacy:
				path = fixture(t, "legacy-refused", "seed.jsonl")
			case tt.log != "":
				if err := os.WriteFile(path, []byte(tt.log), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"acp", "--state-dir", filepath.Join(dir, "state"), "--replay", path}
			if tt.override != "" {
				ov := filepath.Join(dir, "override.json")
				if err := os.WriteFile(ov, []byte(tt.override), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--replay-override", ov)
			}
			p := startProc(t, dir, baseEnv(t), args...)
			code := p.finish()
			if code == 0 {
				t.Fatalf("reel acp --replay exited 0; stderr:\n%s", p.stderr.String())
			}
			if out := p.stdoutLines(); len(out) != 0 {
				t.Errorf("stdout is not empty: %q", out)
			}
			stderr := strings.TrimSpace(p.stderr.String())
			// %q-quoted fragments are matched with Go's quoting undone.
			for _, w := range tt.want {
				if !strings.Contains(stderr, strings.ReplaceAll(w, `\"`, `"`)) {
					t.Errorf("stderr does not mention %s:\n%s", w, stderr)
				}
			}
			if !strings.HasPrefix(stderr, "reel: --replay: ") {
				t.Errorf("stderr does not start with the failing flag: %s", stderr)
			}
		})
	}
}
