package acpcmd_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// streamCap is the --max-response-bytes the stream attacks run reel with.
const streamCap = 32 << 10

// cutNoteMarker is in the note a cut response leaves the model and the user.
const cutNoteMarker = "The previous model response was cut off"

// TestAttackEndlessModelStream drives the real `reel acp` binary against a
// local SSE model endpoint that streams without end, or three times the cap
// and then finishes (issue 26 finding 7: 64 MiB of answer text took reel to
// a peak RSS of 1,169 MiB and a 192 MiB log; nothing bounded it). The
// stream is text, or the arguments of one bash tool call (`touch PWNED`
// and a comment of endless padding; three times the 32 KiB cap is still an
// argument the kernel takes, so code without the cap ran the call). With
// --max-response-bytes 32 KiB each prompt ends end_turn (the log's turn/end max-tokens), the log holds at most the cap's worth of the response (its
// chunks and its message: a small multiple of the cap), the tool does not
// run, the user is told, and the model's next request carries the note.
func TestAttackEndlessModelStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		endless  bool
		toolArgs bool
	}{
		{"text three times the cap", false, false},
		{"tool-call arguments three times the cap", false, true},
		{"endless text", true, false},
		{"endless tool-call arguments", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := &sseServer{size: 3 * streamCap, endless: tc.endless, toolArgs: tc.toolArgs, onlyFirst: true, bodies: make(chan []byte, 8)}
			url := serveSSE(t, srv)
			dir, ws, state := workspace(t)
			p := startProc(t, dir, baseEnv(t), "acp", "--base-url", url, "--model", "m", "--state-dir", state,
				"--mode", "danger-full-access", "--no-title-model", "--max-response-bytes", strconv.Itoa(streamCap))
			underAttack(t, p)
			p.initialize()
			sid := p.newSession(ws)
			stop, frames := p.prompt(sid, "Tell me a long story.")
			if n := len(srv.bodies); n != 1 {
				t.Errorf("the prompt made %d model requests, want 1 (a tool call ran and its result went back)", n)
			}
			for len(srv.bodies) > 0 {
				<-srv.bodies
			}

			var shown strings.Builder
			for _, f := range frames {
				if _, kind, text := f.update(); kind == "agent_message_chunk" {
					shown.WriteString(text)
				}
				if _, kind, _ := f.update(); kind == "tool_call" {
					t.Errorf("a tool call of the cut response was shown: %.200s…", f.raw)
				}
			}
			// The reference answers a turn cut at the limit with end_turn;
			// the log's turn/end says max-tokens (checked below).
			if stop != "end_turn" {
				t.Errorf("stop reason %q, want end_turn (the response is over the %d-byte cap; the turn/end says max-tokens)", stop, streamCap)
			}
			if !strings.Contains(shown.String(), cutNoteMarker) {
				t.Errorf("the user was not told the response was cut (no %q in %d bytes of agent text)", cutNoteMarker, shown.Len())
			}
			if _, err := os.Stat(filepath.Join(ws, "PWNED")); err == nil {
				t.Errorf("the cut tool call ran: %s exists", filepath.Join(ws, "PWNED"))
			}
			st, err := os.Stat(filepath.Join(state, sid+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() > 4*streamCap {
				t.Errorf("the log is %d bytes for a %d-byte cap (more than 4×: the response was not bounded)", st.Size(), streamCap)
			}
			events := logEvents(t, state, sid)
			var kinds []string
			for _, e := range events {
				switch e.Type {
				case sessionlog.TypeAssistantMessage:
					if len(e.Data) > streamCap+4<<10 {
						t.Errorf("the assistant/message keeps %d bytes, more than the %d-byte cap", len(e.Data), streamCap)
					}
				case sessionlog.TypeToolCall, sessionlog.TypeToolResult:
					t.Errorf("the cut response's tool call was logged as run: %s %.300s…", e.Type, e.Data)
				case sessionlog.TypeTurnEnd:
					d, err := sessionlog.DecodeData[sessionlog.TurnEndData](&e)
					if err != nil {
						t.Fatal(err)
					}
					kinds = append(kinds, d.Reason.Kind)
				}
			}
			if len(kinds) != 1 || kinds[0] != sessionlog.EndMaxTokens {
				t.Errorf("turn/end kinds %q, want [%q]", kinds, sessionlog.EndMaxTokens)
			}

			// The next prompt's request tells the model its last answer was cut.
			if stop, _ := p.prompt(sid, "Go on."); stop != "end_turn" {
				t.Errorf("second prompt: stop reason %q, want end_turn", stop)
			}
			select {
			case body := <-srv.bodies:
				if !bytes.Contains(body, []byte(cutNoteMarker)) {
					t.Errorf("the next request does not tell the model its response was cut (no %q in %d bytes)", cutNoteMarker, len(body))
				}
			default:
				t.Errorf("the second prompt made no model request")
			}
			if code := p.finish(); code != 0 {
				t.Errorf("reel exited %d", code)
			}
		})
	}
}

// serveSSE serves h on 127.0.0.1 and returns its base URL.
func serveSSE(t *testing.T, h *sseServer) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/v1"
}
