package acpcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// userBlocks are the content blocks of the user_message_chunk updates
// among frames, in order, as compact JSON.
func userBlocks(t *testing.T, frames []frame) []string {
	t.Helper()
	var out []string
	for _, f := range frames {
		var p struct {
			Update struct {
				SessionUpdate string          `json:"sessionUpdate"`
				Content       json.RawMessage `json:"content"`
			} `json:"update"`
		}
		if f.Method != "session/update" || json.Unmarshal(f.Params, &p) != nil || p.Update.SessionUpdate != "user_message_chunk" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(p.Update.Content, &v); err != nil {
			t.Fatal(err)
		}
		delete(v, "_meta")
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	return out
}

// TestLoadRetellsPromptsAsSent (issue 28): a prompt with text, an inline
// image and resource links (a file:// image, a file:// text file that is
// inlined for the model, an https link with a title and a MIME type) is
// retold by session/load in a fresh process block for block as the client
// sent it — the image from the attachment store with its exact bytes, each
// link as a resource_link with its members, not as the text the model
// read. When the stored image is gone, the load still succeeds and says
// what the image was instead.
func TestLoadRetellsPromptsAsSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, store string
		lose        bool // delete the stored image before the load
	}{
		{name: "jsonl", store: "jsonl"},
		{name: "sqlite", store: "sqlite"},
		{name: "stored image gone", store: "jsonl", lose: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ws, _ := workspace(t)
			if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("the notes say 42"), 0o644); err != nil {
				t.Fatal(err)
			}
			url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{{Text: "seen"}}})
			state := filepath.Join(dir, "state", "sessions")
			args := []string{"acp", "--state-dir", state, "--store", tc.store, "--session-id", "S1", "--no-title-model",
				"--provider", "deepseek", "--base-url", url, "--model", "standin", "--image-input", "on"}
			env := append(baseEnv(t), "DEEPSEEK_API_KEY=standin")
			notes := "file://" + filepath.Join(ws, "notes.txt")
			prompt := []map[string]any{
				{"type": "text", "text": "Look: "},
				{"type": "image", "data": redPixel, "mimeType": "image/png"},
				{"type": "resource_link", "uri": notes, "name": "notes.txt"},
				{"type": "resource_link", "uri": "https://example.com/spec.html", "name": "spec", "title": "The spec", "mimeType": "text/html"},
				{"type": "text", "text": "What do they say?"},
			}
			want := make([]string, len(prompt))
			for i, b := range prompt {
				j, _ := json.Marshal(b)
				want[i] = string(j)
			}

			p := startProc(t, dir, env, args...)
			p.initialize()
			sid := p.newSession(ws)
			if res, _ := p.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt}); !strings.Contains(string(res), "end_turn") {
				t.Fatalf("prompt result %s", res)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("reel exited %d", code)
			}
			if tc.lose {
				objects, _ := filepath.Glob(filepath.Join(dir, "state", "attachments", "v1", "objects", "*", "*"))
				if len(objects) != 1 {
					t.Fatalf("%d stored objects, want the image's 1", len(objects))
				}
				if err := os.Remove(objects[0]); err != nil {
					t.Fatal(err)
				}
				want[1] = `{"text":"[image: image/png, 1x1 px]","type":"text"}`
			}

			p = startProc(t, dir, env, args...)
			p.initialize()
			_, history := p.call("session/load", map[string]any{"sessionId": "S1", "cwd": ws, "mcpServers": []any{}})
			got := userBlocks(t, history)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("session/load retold the prompt as\n%s\nwant, as sent,\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if code := p.finish(); code != 0 {
				t.Errorf("reel exited %d", code)
			}
		})
	}
}
