package agent_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// syncLog is what the writers of a syncStore were given: the types of the
// events appended, in order, and the batches of them each Sync made
// durable (a Sync with nothing new to flush adds no batch).
type syncLog struct {
	mu       sync.Mutex
	appended []string
	synced   int
	batches  [][]string
	// violations are the checkpoints reached with events not yet durable.
	violations []string
}

// durable checks, at checkpoint what, that every event appended so far is
// durable: a crash there would lose nothing.
func (l *syncLog) durable(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.synced < len(l.appended) {
		l.violations = append(l.violations, what+": not durable: "+strings.Join(l.appended[l.synced:], " "))
	}
}

// syncStore wraps a store: its writers report to log.
type syncStore struct {
	sessionlog.Store
	log *syncLog
}

func (s syncStore) Create(ctx context.Context, h sessionlog.Header) (sessionlog.Writer, error) {
	w, err := s.Store.Create(ctx, h)
	if err != nil {
		return nil, err
	}
	return syncWriter{w, s.log}, nil
}

func (s syncStore) Open(ctx context.Context, id string) (*sessionlog.Loaded, sessionlog.Writer, error) {
	l, w, err := s.Store.Open(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return l, syncWriter{w, s.log}, nil
}

type syncWriter struct {
	sessionlog.Writer
	log *syncLog
}

func (w syncWriter) Append(ctx context.Context, events ...sessionlog.Event) error {
	if err := w.Writer.Append(ctx, events...); err != nil {
		return err
	}
	w.log.mu.Lock()
	defer w.log.mu.Unlock()
	for _, e := range events {
		w.log.appended = append(w.log.appended, e.Type)
	}
	return nil
}

func (w syncWriter) Sync(ctx context.Context) error {
	if err := w.Writer.Sync(ctx); err != nil {
		return err
	}
	w.log.mu.Lock()
	defer w.log.mu.Unlock()
	if w.log.synced < len(w.log.appended) {
		w.log.batches = append(w.log.batches, slices.Clone(w.log.appended[w.log.synced:]))
		w.log.synced = len(w.log.appended)
	}
	return nil
}

// syncProvider checks that everything logged is durable when a model call
// is dispatched.
type syncProvider struct {
	llm.Provider
	log *syncLog
}

func (p syncProvider) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	what := "model call"
	if req.Purpose == llm.PurposeTitle {
		what = "title model call"
	}
	p.log.durable(what)
	return p.Provider.Stream(ctx, req)
}

// syncUpdates checks that everything logged is durable when a tool starts
// running and when the client is shown a result or a title as done.
type syncUpdates struct {
	*recorder
	log    *syncLog
	titled chan struct{}
}

func (u syncUpdates) ToolRunning(ctx context.Context, id string) {
	u.log.durable("tool run " + id)
	u.recorder.ToolRunning(ctx, id)
}

func (u syncUpdates) ToolEnd(ctx context.Context, id string, res tools.Result) {
	u.log.durable("tool result " + id + " shown")
	u.recorder.ToolEnd(ctx, id, res)
}

func (u syncUpdates) Title(_ context.Context, t agent.Title) {
	u.log.durable("title " + t.Text + " shown")
	if t.Late {
		close(u.titled)
	}
}

// TestSyncCheckpoints: the log is synced at each of the durability rule's
// checkpoints — before a model call is dispatched (the turn's and the
// title's), before a tool runs, after a step's results, at the turn's end —
// and whatever the client is shown as done (a tool result, the prompt's
// answer, a title) is durable when it is shown, so a crash at any of those
// moments loses nothing the client saw. The results of the turn's last
// step, its turn/end and the title call's request share one write and one
// sync (before: three syncs), and no sync is made with nothing to flush.
func TestSyncCheckpoints(t *testing.T) {
	dir := t.TempDir()
	store, err := jsonl.Open(filepath.Join(dir, "state"), jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sl := &syncLog{}
	model := replay.New([]replay.Entry{
		replay.ToolCallEntry("c1", "read", `{"file_path":"f.txt"}`),
		replay.TextEntry("the file says hello"),
		replay.TextEntry("and again"),
	}, 0, dir).WithTitles([]replay.Entry{replay.TextEntry("Reading a file")})
	e, err := agent.New(agent.Config{
		Store: syncStore{store, sl}, Models: agent.SharedModels{Provider: syncProvider{model, sl}},
		Provider: "replay", Model: "replay", Mode: sandbox.WorkspaceWrite, SpillDir: filepath.Join(dir, "spill"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cwd := filepath.Join(dir, "work")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := e.NewSession(ctx, cwd)
	if err != nil {
		t.Fatal(err)
	}
	up := syncUpdates{recorder: &recorder{}, log: sl, titled: make(chan struct{})}
	for i, prompt := range []string{"read f.txt", "again"} {
		sl.mu.Lock()
		from := len(sl.batches)
		sl.mu.Unlock()
		if stop, err := s.Prompt(ctx, []agent.Content{{Text: prompt}}, agent.Client{Updates: up}); err != nil || stop != agent.StopEndTurn {
			t.Fatalf("prompt %d = %q, %v", i+1, stop, err)
		}
		sl.durable("prompt " + prompt + " answered")
		if i == 0 {
			select {
			case <-up.titled:
			case <-time.After(10 * time.Second):
				t.Fatal("no title from the model")
			}
		}
		sl.mu.Lock()
		batches := sl.batches[from:]
		var got []string
		for _, b := range batches {
			got = append(got, b[len(b)-1])
		}
		// The last batch of a turn's answer holds its last step's results
		// and its end.
		var ends []string
		for _, b := range batches {
			if slices.Contains(b, sessionlog.TypeTurnEnd) {
				ends = b
			}
		}
		sl.mu.Unlock()
		want := []string{
			sessionlog.TypeRequestContext,  // before step 1's model call
			sessionlog.TypeToolCall,        // before the tool runs
			sessionlog.TypeToolResult,      // before the result is shown
			sessionlog.TypeStepEnd,         // after step 1's results
			sessionlog.TypeRequestContext,  // before step 2's model call
			sessionlog.TypeTitleLLMRequest, // step 2's results, the turn's end, before the title call
			sessionlog.TypeSessionTitle,    // before the title is shown
		}
		if i == 1 {
			want = []string{sessionlog.TypeRequestContext, sessionlog.TypeTurnEnd}
		}
		if !slices.Equal(got, want) {
			t.Errorf("prompt %d: the syncs' batches end in %q, want %q", i+1, got, want)
		}
		for _, typ := range []string{sessionlog.TypeAssistantMessage, sessionlog.TypeStepEnd, sessionlog.TypeTurnEnd} {
			if !slices.Contains(ends, typ) {
				t.Errorf("prompt %d: the turn end's sync %q has no %s", i+1, ends, typ)
			}
		}
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for _, v := range sl.violations {
		t.Error(v)
	}
	if len(sl.violations) == 0 && sl.synced != len(sl.appended) {
		t.Errorf("%d events never made durable", len(sl.appended)-sl.synced)
	}
}

// toolsProvider records the tool schemas of each model call.
type toolsProvider struct {
	llm.Provider
	mu    sync.Mutex
	tools [][]byte
}

func (p *toolsProvider) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	p.mu.Lock()
	p.tools = append(p.tools, slices.Clone(req.Tools))
	p.mu.Unlock()
	return p.Provider.Stream(ctx, req)
}

// TestToolSchemasAreTheFirstRequests: Engine.ToolSchemas, which reel acp
// maps ahead of the first prompt (openai.Provider.WarmTools), are byte for
// byte the tool schemas a new session's first model call carries, in each
// default mode and in code mode — else the mapping done ahead is never
// used.
func TestToolSchemasAreTheFirstRequests(t *testing.T) {
	for _, c := range []struct {
		mode sandbox.Mode
		code bool
	}{{sandbox.WorkspaceWrite, false}, {sandbox.ReadOnly, false}, {sandbox.DangerFullAccess, false}, {sandbox.WorkspaceWrite, true}} {
		dir := t.TempDir()
		store, err := jsonl.Open(filepath.Join(dir, "state"), jsonl.Options{})
		if err != nil {
			t.Fatal(err)
		}
		prov := &toolsProvider{Provider: replay.New([]replay.Entry{replay.TextEntry("hi")}, 0, dir)}
		e, err := agent.New(agent.Config{Store: store, Models: agent.SharedModels{Provider: prov}, Provider: "replay", Model: "replay",
			Mode: c.mode, CodeMode: c.code, DisableTitleModel: true, SpillDir: filepath.Join(dir, "spill")})
		if err != nil {
			t.Fatal(err)
		}
		s, err := e.NewSession(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prompt(context.Background(), []agent.Content{{Text: "hello"}}, agent.Client{}); err != nil {
			t.Fatal(err)
		}
		want := e.ToolSchemas()
		if len(prov.tools) != 1 || len(want) == 0 || !bytes.Equal(prov.tools[0], want) {
			t.Errorf("mode %s, code mode %v: the first call's tools differ from ToolSchemas (%d calls)", c.mode, c.code, len(prov.tools))
		}
		_ = e.Close()
		_ = store.Close()
	}
}
