package acpserver_test

import (
	"context"
	"net"
	"net/http"
	"slices"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm/openai"
	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
)

// lastIndexOf is the index of the last event of type typ (-1: none).
func lastIndexOf(events []sessionlog.Event, typ string) int {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == typ {
			return i
		}
	}
	return -1
}

// titles lists the session_info_update titles of updates, in order.
func titles(us []acp.SessionUpdate) []string {
	var out []string
	for _, u := range us {
		if u.SessionInfoUpdate != nil && u.SessionInfoUpdate.Title != nil {
			out = append(out, *u.SessionInfoUpdate.Title)
		}
	}
	return out
}

// waitTitle waits for the second session_info_update (the model's title
// after the fallback) and checks that it shows title.
func waitTitle(t *testing.T, r *rig, sid acp.SessionId, title string) {
	t.Helper()
	r.client.waitFor(t, sid, nil, "the model's title", func(us []acp.SessionUpdate) bool {
		return len(titles(us)) >= 2
	})
	if got := titles(r.client.updatesOf(sid)); got[1] != title {
		t.Errorf("the model's title shows as %q, want %q", got[1], title)
	}
}

// scriptModel is newModel for a whole stand-in script (a title answer).
func scriptModel(t *testing.T, script *standin.Script) agent.Models {
	t.Helper()
	if err := script.Validate(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: standin.New(script, nil).Handler()}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	p, err := openai.New(openai.Config{Name: "deepseek", BaseURL: "http://" + ln.Addr().String() + "/v1", Model: "standin",
		APIKey: "sk-reel-test-standin", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return agent.SharedModels{Provider: p}
}

// TestTitleUpdates: an editor sees the fallback title during the first
// turn and the model's (cleaned) title after it, as session_info_update;
// session/list shows the title with the last activity time; a second
// prompt asks no title model again.
func TestTitleUpdates(t *testing.T) {
	m := scriptModel(t, &standin.Script{
		Responses: []standin.Response{{Text: "PONG"}, {Text: "PONG again"}},
		Title:     &standin.Response{Text: "\"Ping\x1b[31m pong\x1b[0m\n check\""},
	})
	r := start(t, agent.Config{Models: m})
	r.initialize(t)
	cwd := realDir(t)
	sid := r.newSession(t, cwd)
	r.mustPrompt(t, sid, "Reply with PONG and nothing else, please.", acp.StopReasonEndTurn)
	// The fallback precedes the answer's text.
	us := r.client.updatesOf(sid)
	first := slices.IndexFunc(us, func(u acp.SessionUpdate) bool { return u.SessionInfoUpdate != nil })
	text := slices.IndexFunc(us, func(u acp.SessionUpdate) bool { return u.AgentMessageChunk != nil })
	if first < 0 || first > text {
		t.Errorf("updates %s: the fallback title must come before the answer", describe(us))
	}
	want := "\"Ping pong check\""
	waitTitle(t, r, sid, want)
	if got := titles(r.client.updatesOf(sid)); !slices.Equal(got, []string{"Reply with PONG and nothing", want}) {
		t.Errorf("titles shown %q", got)
	}
	r.mustPrompt(t, sid, "Again.", acp.StopReasonEndTurn)
	d := r.readLog(t, sid)
	if n := len(ofType(d.Events, sessionlog.TypeTitleLLMRequest)); n != 1 {
		t.Errorf("%d title requests after two prompts, want 1", n)
	}
	list, err := r.conn.ListSessions(context.Background(), acp.ListSessionsRequest{Cwd: &cwd})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].Title == nil || *list.Sessions[0].Title != want || list.Sessions[0].UpdatedAt == nil {
		t.Errorf("session/list %+v, want the title %q and an updatedAt", list.Sessions, want)
	}
}

// TestTitleModelFails: a title call that fails keeps the fallback, which
// session/list shows; the turn is not affected.
func TestTitleModelFails(t *testing.T) {
	m := scriptModel(t, &standin.Script{
		Responses: []standin.Response{{Text: "PONG"}},
		Title:     &standin.Response{Error: &standin.ErrorReply{Status: 500, Message: "title model down"}},
	})
	r := start(t, agent.Config{Models: m})
	r.initialize(t)
	cwd := realDir(t)
	sid := r.newSession(t, cwd)
	r.mustPrompt(t, sid, "Reply with PONG", acp.StopReasonEndTurn)
	list, err := r.conn.ListSessions(context.Background(), acp.ListSessionsRequest{Cwd: &cwd})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].Title == nil || *list.Sessions[0].Title != "Reply with PONG" {
		t.Errorf("session/list %+v, want the fallback title", list.Sessions)
	}
}
