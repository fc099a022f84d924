package acpserver_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/sandbox"
)

// TestTwoSessionsConcurrently prompts two sessions of one process at the
// same time: each stand-in holds its request until both model calls are in
// flight, so the turns overlap. Each session's updates and log hold only
// its own conversation.
func TestTwoSessionsConcurrently(t *testing.T) {
	type side struct {
		word, question, answer string
	}
	sides := []side{
		{"alpha", "alpha question: name a fruit", "ALPHA answer: apple"},
		{"bravo", "bravo question: name a tree", "BRAVO answer: birch"},
	}
	var arrived sync.WaitGroup
	arrived.Add(len(sides))
	both, abort := make(chan struct{}), make(chan struct{})
	var abortOnce sync.Once
	go func() { arrived.Wait(); close(both) }()
	rendezvous := func(next http.Handler) http.Handler {
		var once sync.Once
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			once.Do(arrived.Done)
			select {
			case <-both:
			case <-abort:
			case <-r.Context().Done():
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	var models []*model
	var providers providerPerSession
	for _, s := range sides {
		m := newModel(t, rendezvous, standin.Response{
			Reasoning: "thinking about " + s.word, Text: s.answer, ChunkSize: 3,
			Expect: &standin.Expect{LastUserContains: s.question},
		})
		models = append(models, m)
		providers = append(providers, m.provider)
	}
	r := start(t, agent.Config{Models: providers})
	r.initialize(t)
	var sids []acp.SessionId
	for range sides {
		sids = append(sids, r.newSession(t, realDir(t)))
	}
	if sids[0] == sids[1] {
		t.Fatalf("both sessions got id %s", sids[0])
	}

	var wg sync.WaitGroup
	resps := make([]acp.PromptResponse, len(sides))
	errs := make([]error, len(sides))
	for i, s := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resps[i], errs[i] = r.prompt(context.Background(), sids[i], s.question)
			if errs[i] != nil {
				abortOnce.Do(func() { close(abort) })
			}
		}()
	}
	wg.Wait()
	for i, s := range sides {
		if errs[i] != nil {
			t.Fatalf("session %s (%s): %v", sids[i], s.word, errs[i])
		}
		if resps[i].StopReason != acp.StopReasonEndTurn {
			t.Errorf("session %s: stopReason %q", s.word, resps[i].StopReason)
		}
	}
	select {
	case <-both:
	default:
		t.Fatal("the two model calls never overlapped")
	}

	for i, s := range sides {
		other := sides[1-i]
		us := r.client.updatesOf(sids[i])
		if got := joined(us, "agent_message_chunk"); got != s.answer {
			t.Errorf("session %s streamed answer %q, want %q", s.word, got, s.answer)
		}
		if got := joined(us, "agent_thought_chunk"); got != "thinking about "+s.word {
			t.Errorf("session %s streamed thoughts %q", s.word, got)
		}
		raw := r.rawFile(t, sids[i])
		d := r.readLog(t, sids[i])
		if d.Header.ID != string(sids[i]) {
			t.Errorf("log of %s has header id %s", sids[i], d.Header.ID)
		}
		for _, want := range []string{s.question, s.answer} {
			if !strings.Contains(raw, want) {
				t.Errorf("log of session %s lacks %q", s.word, want)
			}
		}
		for _, leak := range []string{other.question, other.answer, "thinking about " + other.word} {
			if strings.Contains(raw, leak) {
				t.Errorf("log of session %s holds the other session's %q", s.word, leak)
			}
		}
		if n := len(models[i].requests(t)); n != 1 {
			t.Errorf("model of session %s got %d requests, want 1", s.word, n)
		}
	}
}

// TestEmptySpillDir: without a SpillDir a bash call leaves nothing in the
// session's workspace.
func TestEmptySpillDir(t *testing.T) {
	m := newModel(t, nil,
		standin.Response{ToolCalls: []standin.ToolCall{{ID: "call_1", Name: "bash", Arguments: `{"command":"echo hi"}`}}},
		standin.Response{Text: "ok"},
	)
	r := serve(t, agent.Config{Models: shared(m), Mode: sandbox.DangerFullAccess})
	r.initialize(t)
	cwd := realDir(t)
	sid := r.newSession(t, cwd)
	r.mustPrompt(t, sid, "Say hi with bash.", acp.StopReasonEndTurn)
	entries, err := os.ReadDir(cwd)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("the workspace gained %q", e.Name())
	}
}

// failing is a provider whose every call fails.
type failing struct{ err error }

func (f failing) Stream(context.Context, llm.Request) (llm.Stream, error) { return nil, f.err }

// TestModelFailure: a provider error answers the prompt with the
// provider's message (auth-required for refused credentials, internal
// error otherwise) and the log ends the turn with kind error.
func TestModelFailure(t *testing.T) {
	tests := []struct {
		name     string
		models   agent.Models
		wantCode int
		wantFrag string
	}{
		{"provider error", agent.SharedModels{Provider: failing{&llm.ProviderError{Code: llm.CodeAuth, Message: "no API key: set DEEPSEEK_API_KEY"}}}, -32603, `"message":"model call failed: no API key: set DEEPSEEK_API_KEY"`},
		{"http 400 from the model", nil, -32603, `"message":"model call failed: bad request from the test"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			models := tt.models
			if models == nil {
				m := newModel(t, nil, standin.Response{Error: &standin.ErrorReply{Status: 400, Message: "bad request from the test"}})
				models = shared(m)
			}
			r := start(t, agent.Config{Models: models})
			r.initialize(t)
			sid := r.newSession(t, realDir(t))
			_, err := r.prompt(context.Background(), sid, "hi")
			requireCode(t, err, tt.wantCode, tt.wantFrag)
			d := r.readLog(t, sid)
			last := d.Events[len(d.Events)-1]
			if last.Type != "turn/end" || !strings.Contains(string(last.Data), `"kind":"error"`) {
				t.Errorf("log ends with %s %s, want turn/end error", last.Type, last.Data)
			}
		})
	}
}
