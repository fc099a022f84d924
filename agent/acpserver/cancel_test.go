package acpserver_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog"
)

// arrivals wraps a handler and closes the returned channel when the first
// request has arrived whole (its body is read first, so the stand-in
// counts the request even when the client goes away at once).
func arrivals() (func(http.Handler) http.Handler, <-chan struct{}) {
	ch := make(chan struct{})
	var once sync.Once
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			once.Do(func() { close(ch) })
			next.ServeHTTP(w, r)
		})
	}, ch
}

// TestCancel cancels a running turn at three points. The prompt answers
// cancelled, the log ends with turn/end aborted (written although the
// turn's context was cancelled), and the session takes the next prompt.
func TestCancel(t *testing.T) {
	tests := []struct {
		name  string
		first standin.Response
		// ready reports when the turn reached the point to cancel at.
		ready func(us []acp.SessionUpdate) bool
		// fromArrival: cancel once the model request arrived instead.
		fromArrival bool
		// wantInterrupted is the text of the interrupted assistant/message
		// ("" when none is logged).
		wantInterrupted string
		wantToolResult  bool
	}{
		{
			name:  "mid-stream",
			first: standin.Response{Text: "partial answer", Hang: true, ChunkSize: 100},
			ready: func(us []acp.SessionUpdate) bool {
				return joined(us, "agent_message_chunk") == "partial answer"
			},
			wantInterrupted: "partial answer",
		},
		{
			name:        "before any output",
			first:       standin.Response{Hang: true},
			fromArrival: true,
		},
		{
			name:  "while a tool runs",
			first: standin.Response{ToolCalls: []standin.ToolCall{{ID: "call_sleep", Name: "bash", Arguments: `{"command":"echo started; sleep 300"}`}}},
			ready: func(us []acp.SessionUpdate) bool {
				for _, u := range us {
					if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acp.ToolCallStatusInProgress {
						return true
					}
				}
				return false
			},
			wantToolResult: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrap, arrived := arrivals()
			m := newModel(t, wrap, tt.first, standin.Response{Text: "YES", Expect: &standin.Expect{LastUserContains: "still there"}})
			r := start(t, agent.Config{Models: shared(m), Mode: sandbox.DangerFullAccess})
			r.initialize(t)
			sid := r.newSession(t, realDir(t))

			stop := make(chan struct{})
			var resp acp.PromptResponse
			var perr error
			go func() {
				defer close(stop)
				resp, perr = r.prompt(context.Background(), sid, "Start something long.")
			}()
			if tt.fromArrival {
				select {
				case <-arrived:
				case <-stop:
					t.Fatal("the prompt ended before the model call")
				}
			} else {
				r.client.waitFor(t, sid, stop, "the cancel point", tt.ready)
			}
			if err := r.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: sid}); err != nil {
				t.Fatal(err)
			}
			<-stop
			if perr != nil {
				t.Fatalf("prompt: %v", perr)
			}
			if resp.StopReason != acp.StopReasonCancelled {
				t.Fatalf("stopReason %q, want cancelled", resp.StopReason)
			}

			d := r.readLog(t, sid)
			// A title call may follow the turn (title_test.go).
			end := max(lastIndexOf(d.Events, sessionlog.TypeTurnEnd), 1)
			last := d.Events[end]
			if last.Type != sessionlog.TypeTurnEnd || string(last.Data) != `{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"user"}}}` {
				t.Fatalf("log ends with %s %s, want turn/end aborted by the user", last.Type, last.Data)
			}
			if prev := d.Events[end-1]; prev.Type != sessionlog.TypeStepEnd {
				t.Errorf("turn/end follows %s, want step/end", prev.Type)
			}
			msgs := ofType(d.Events, sessionlog.TypeAssistantMessage)
			switch {
			case tt.wantInterrupted != "":
				if len(msgs) != 1 {
					t.Fatalf("%d assistant/message events, want 1 interrupted", len(msgs))
				}
				md, err := sessionlog.DecodeData[sessionlog.MessageData](&msgs[0])
				if err != nil {
					t.Fatal(err)
				}
				pm, _ := sessionlog.ParseMessage(md.Message)
				if !md.Interrupted || pm.Text() != tt.wantInterrupted {
					t.Errorf("assistant/message interrupted=%v text %q, want interrupted %q", md.Interrupted, pm.Text(), tt.wantInterrupted)
				}
			case !tt.wantToolResult && len(msgs) != 0:
				t.Errorf("%d assistant/message events, want none", len(msgs))
			}
			results := ofType(d.Events, sessionlog.TypeToolResult)
			if tt.wantToolResult {
				if len(results) != 1 {
					t.Fatalf("%d tool/result events, want 1", len(results))
				}
				md, _ := sessionlog.DecodeData[sessionlog.MessageData](&results[0])
				pm, _ := sessionlog.ParseMessage(md.Message)
				if len(pm.Content) != 1 || !pm.Content[0].IsError {
					t.Errorf("cancelled tool result %s is not an error", md.Message)
				}
			} else if len(results) != 0 {
				t.Errorf("%d tool/result events, want none", len(results))
			}
			if n := len(m.requests(t)); n != 1 {
				t.Errorf("the model got %d requests before the cancel took effect, want 1", n)
			}

			// The session is usable again.
			r.mustPrompt(t, sid, "Are you still there?", acp.StopReasonEndTurn)
			if got := joined(r.client.updatesOf(sid), "agent_message_chunk"); !strings.HasSuffix(got, "YES") {
				t.Errorf("answer after the cancel %q", got)
			}
			ends := ofType(r.readLog(t, sid).Events, sessionlog.TypeTurnEnd)
			if len(ends) != 2 || string(ends[1].Data) != `{"turn":2,"reason":{"kind":"completed"}}` {
				t.Errorf("turn ends after the follow-up: %d, last %s", len(ends), ends[len(ends)-1].Data)
			}
		})
	}
}
