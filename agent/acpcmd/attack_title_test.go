package acpcmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
)

// titleProblem reports what is wrong with a title an editor is shown ("" for
// nothing): it must be one line of valid UTF-8 within 80 bytes, with no
// control, escape or invisible direction-changing character.
func titleProblem(s string) string {
	switch {
	case s == "":
		return "empty"
	case len(s) > 80:
		return "longer than 80 bytes"
	case !utf8.ValidString(s):
		return "not UTF-8"
	}
	for _, r := range s {
		if unicode.IsControl(r) || (r != ' ' && unicode.IsSpace(r)) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200b || r == 0xfeff {
			return fmt.Sprintf("holds %U", r)
		}
	}
	return ""
}

// sessionTitles lists the session/title records of a session's log as
// "source title".
func sessionTitles(t *testing.T, state, sid string) []string {
	t.Helper()
	events := logEvents(t, state, sid)
	var out []string
	for i := range events {
		if events[i].Type != sessionlog.TypeSessionTitle {
			continue
		}
		td, err := sessionlog.DecodeData[sessionlog.SessionTitleData](&events[i])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, td.Source.Kind+" "+td.Title)
	}
	return out
}

// TestAttackTitleModel: the title model is the model, so an attacker's.
// Through the real binary with the stand-in, a title answer that is huge,
// full of escape sequences and newlines, a tool call, an error or that
// never ends does not hang the agent, does not hold up the next prompt
// (past the title's own short grace), and never puts a control character
// in the title the editor is shown or the log keeps; a bad answer leaves
// the fallback title.
func TestAttackTitleModel(t *testing.T) {
	t.Parallel()
	const prompt = "Reply with PONG and nothing else"
	fallback := "fallback Reply with PONG and nothing"
	for _, tt := range []struct {
		name  string
		title standin.Response
		// want is the log's titles after both prompts.
		want []string
	}{
		{"escapes and newlines", standin.Response{Text: "\x1b]0;pwned-window\x07\x1b[31mEvil\x1b[0m\n\r\nTitle\u202e\x00\u009b2J\r"},
			[]string{fallback, "provider Evil Title"}},
		{"only escapes", standin.Response{Text: "\x1b[2J\x1b[H\x1b]52;c;ZXZpbA==\x07\n"}, []string{fallback}},
		{"long answer", standin.Response{Text: strings.Repeat("Title words again ", 2000), ChunkSize: 4096},
			[]string{fallback, "provider " + strings.TrimSpace(strings.Repeat("Title words again ", 5)[:80])}},
		{"huge answer", standin.Response{Text: strings.Repeat("x", 2<<20), ChunkSize: 1 << 16}, []string{fallback}},
		{"tool call", standin.Response{ToolCalls: []standin.ToolCall{{ID: "t1", Name: "bash", Arguments: `{"command":"touch pwned"}`}}},
			[]string{fallback}},
		{"error", standin.Response{Error: &standin.ErrorReply{Status: 500, Message: "\x1b[31mtitle model down\x1b[0m"}}, []string{fallback}},
		{"cut at the token cap", standin.Response{Text: "A title cut short", Finish: "length"}, []string{fallback}},
		{"hang", standin.Response{Text: "Never ending", Hang: true}, []string{fallback}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ws, state := filepath.Join(dir, "ws"), filepath.Join(dir, "state")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			title := tt.title
			script, err := json.Marshal(standin.Script{
				Responses: []standin.Response{{Text: "PONG"}, {Text: "PONG again"}},
				Title:     &title,
			})
			if err != nil {
				t.Fatal(err)
			}
			scriptPath := filepath.Join(dir, "standin.json")
			if err := os.WriteFile(scriptPath, script, 0o644); err != nil {
				t.Fatal(err)
			}
			p := startProc(t, dir, baseEnv(t), "acp", "--standin", scriptPath, "--state-dir", state, "--mode", "read-only")
			p.initialize()
			sid := p.newSession(ws)
			for _, text := range []string{prompt, "Again"} {
				if stop, _ := p.prompt(sid, text); stop != "end_turn" {
					t.Fatalf("prompt %q: stop reason %q", text, stop)
				}
			}
			res, _ := p.call("session/list", map[string]any{"cwd": ws})
			if code := p.finish(); code != 0 {
				t.Fatalf("reel exited %d", code)
			}
			lines := p.stdoutLines()
			checkFramesOnly(t, lines)
			// Every title the editor was shown, in frames and in the list.
			var shown []string
			for _, line := range lines {
				var f struct {
					Params struct {
						Update struct {
							SessionUpdate string  `json:"sessionUpdate"`
							Title         *string `json:"title"`
						} `json:"update"`
					} `json:"params"`
				}
				if json.Unmarshal([]byte(line), &f) == nil && f.Params.Update.SessionUpdate == "session_info_update" && f.Params.Update.Title != nil {
					shown = append(shown, *f.Params.Update.Title)
				}
			}
			var list struct {
				Sessions []struct {
					Title *string `json:"title"`
				} `json:"sessions"`
			}
			if err := json.Unmarshal(res, &list); err != nil || len(list.Sessions) != 1 || list.Sessions[0].Title == nil {
				t.Fatalf("session/list %s", res)
			}
			shown = append(shown, *list.Sessions[0].Title)
			for _, s := range shown {
				if why := titleProblem(s); why != "" {
					t.Errorf("the editor was shown the title %q: %s", s, why)
				}
			}
			got := sessionTitles(t, state, sid)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("log titles %q, want %q", got, tt.want)
			}
			last := tt.want[len(tt.want)-1]
			if _, text, _ := strings.Cut(last, " "); *list.Sessions[0].Title != text {
				t.Errorf("session/list shows %q, want %q", *list.Sessions[0].Title, text)
			}
			if strings.Contains(strings.Join(lines, "\n"), "pwned-window") {
				t.Error("the OSC payload reached stdout")
			}
			if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
				t.Error("the title model's tool call ran")
			}
		})
	}
}
