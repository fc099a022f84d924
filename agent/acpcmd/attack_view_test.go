package acpcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// editorClient is a client that advertises fs/read_text_file and
// fs/write_text_file and holds unsaved buffers: a read of a path with a
// buffer is answered with the buffer, a write replaces the buffer (and is
// recorded); a read of any other path is answered from disk, as an editor
// does.
type editorClient struct {
	buffers map[string]string
	writes  []string // paths written through fs/write_text_file, in order
}

// answer answers f when it is an fs request, reporting whether it was.
func (c *editorClient) answer(t *testing.T, p *proc, f frame) bool {
	t.Helper()
	var params struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	var result any
	switch f.Method {
	case "fs/read_text_file":
		_ = json.Unmarshal(f.Params, &params)
		text, ok := c.buffers[params.Path]
		if !ok {
			b, err := os.ReadFile(params.Path)
			if err != nil {
				reply, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.ID,
					"error": map[string]any{"code": -32002, "message": "resource not found"}})
				p.send(string(reply))
				return true
			}
			text = string(b)
		}
		result = map[string]any{"content": text}
	case "fs/write_text_file":
		_ = json.Unmarshal(f.Params, &params)
		c.buffers[params.Path] = params.Content
		c.writes = append(c.writes, params.Path)
		result = map[string]any{}
	default:
		return false
	}
	reply, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.ID, "result": result})
	p.send(string(reply))
	return true
}

// prompt runs a prompt, answering fs requests from the buffers and every
// permission request with reject_once, until the prompt's response.
func (c *editorClient) prompt(t *testing.T, p *proc, sid, text string) string {
	t.Helper()
	return promptServing(t, p, sid, text, func(f frame) {
		if !c.answer(t, p, f) && f.Method == "session/request_permission" {
			selectOption(p, f, "reject_once")
		}
	})
}

// shownText is the file text a read result showed: its numbered lines
// with the numbers taken off.
func shownText(result string) string {
	var b strings.Builder
	for _, line := range strings.Split(result, "\n") {
		if _, text, ok := strings.Cut(line, "\t"); ok {
			b.WriteString(text + "\n")
		}
	}
	return b.String()
}

// TestAttackReadsAndWritesAgree is the one-file-view finding of issue 28:
// the client holds an unsaved buffer that differs from the file on disk;
// the model reads the file, then edits a line both versions share. Whatever
// view reel picks for a session's file tools, the file the edit changed
// must end as exactly the text the read showed with that one change —
// never the other version's text with the change (a silent divergence),
// and the other view must not change, also when the mode changes between
// the read and the edit. When the edit cannot go where the read came from
// (the buffer was read, then the mode confines writes to the disk), it
// must be refused until the file is read again, and nothing may change.
func TestAttackReadsAndWritesAgree(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	const (
		disk   = "shared line\ndisk only\n"
		buffer = "shared line\nbuffer only, unsaved\n"
	)
	tests := []struct {
		name      string
		mode      string // the session's mode at the read
		editMode  string // the mode switched to before the edit ("" none)
		wantError string // in the edit's result when it must be refused
	}{
		{name: "workspace-write", mode: "workspace-write"},
		{name: "danger-full-access", mode: "danger-full-access"},
		{name: "view changes between read and edit", mode: "danger-full-access", editMode: "workspace-write",
			wantError: "re-read the file"},
		{name: "disk read, then an unconfined edit", mode: "workspace-write", editMode: "danger-full-access"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, ws, state := workspace(t)
			file := filepath.Join(ws, "notes.txt")
			if err := os.WriteFile(file, []byte(disk), 0o644); err != nil {
				t.Fatal(err)
			}
			read := jsonArgs(t, map[string]any{"file_path": "notes.txt"})
			edit := jsonArgs(t, map[string]any{"file_path": "notes.txt", "old_string": "shared line", "new_string": "changed line"})
			url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
				{ToolCalls: []standin.ToolCall{{ID: "call_read", Name: "read", Arguments: read}}},
				{Text: "read it"},
				{ToolCalls: []standin.ToolCall{{ID: "call_edit", Name: "edit", Arguments: edit}}},
				{Text: "edited"},
			}})
			env := append(baseEnv(t), "DEEPSEEK_API_KEY=sk-reel-fake-attack")
			p := startProc(t, dir, env, "acp", "--state-dir", state, "--session-id", "VIEW",
				"--mode", tc.mode, "--provider", "deepseek", "--base-url", url, "--model", "standin")
			underAttack(t, p)
			p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
				"fs": map[string]any{"readTextFile": true, "writeTextFile": true}}})
			sid := p.newSession(ws)
			c := &editorClient{buffers: map[string]string{file: buffer}}
			if stop := c.prompt(t, p, sid, "Read notes.txt."); stop != "end_turn" {
				t.Fatalf("read turn: stopReason %q", stop)
			}
			if tc.editMode != "" {
				p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": tc.editMode})
			}
			if stop := c.prompt(t, p, sid, "Change the shared line."); stop != "end_turn" {
				t.Fatalf("edit turn: stopReason %q", stop)
			}
			res := results(t, logEvents(t, state, sid))
			shown := shownText(res["call_read"])
			if shown != disk && shown != buffer {
				t.Fatalf("the read showed %q, neither the disk nor the buffer", shown)
			}
			onDisk, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantError != "" {
				if !strings.Contains(res["call_edit"], tc.wantError) {
					t.Errorf("the edit after the view changed was not refused: %q", res["call_edit"])
				}
				if string(onDisk) != disk || c.buffers[file] != buffer {
					t.Errorf("a refused edit changed the file: disk %q, buffer %q", onDisk, c.buffers[file])
				}
				return
			}
			want := strings.Replace(shown, "shared line", "changed line", 1)
			// The view the edit wrote: the editor's when it was asked to
			// write, else the disk; the other must be untouched.
			got, other, otherWas := string(onDisk), c.buffers[file], buffer
			if len(c.writes) > 0 {
				got, other, otherWas = c.buffers[file], string(onDisk), disk
			}
			if got != want {
				t.Errorf("the read showed %q but the edit (%q) left %q: the model edited text it was not shown", shown, res["call_edit"], got)
			}
			if other != otherWas {
				t.Errorf("the other view changed too: %q", other)
			}
		})
	}
}
