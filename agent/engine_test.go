package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

// recorder is an agent.Updates that writes down every report as one line.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *recorder) UserText(_ context.Context, s string) { r.add("user %s", s) }
func (r *recorder) Text(_ context.Context, s string)     { r.add("text %s", s) }
func (r *recorder) Thought(_ context.Context, s string)  { r.add("thought %s", s) }
func (r *recorder) ToolStart(_ context.Context, c agent.ToolCall) {
	r.add("start %s %s %s", c.ID, c.Name, c.Kind)
}
func (r *recorder) ToolRunning(_ context.Context, id string)     { r.add("running %s", id) }
func (r *recorder) ToolProgress(context.Context, string, string) {}
func (r *recorder) Usage(context.Context, agent.ContextUsage)    {}
func (r *recorder) ToolEnd(_ context.Context, id string, res tools.Result) {
	r.add("end %s error=%v %s", id, res.IsError, strings.TrimSpace(res.Text))
}
func (r *recorder) Plan(_ context.Context, todos []tools.Todo) { r.add("plan %d", len(todos)) }
func (r *recorder) Title(context.Context, agent.Title)         {}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

// approverFunc adapts a function to agent.Approver and counts its calls.
type approverFunc struct {
	mu    sync.Mutex
	asked []agent.Approval
	f     func(agent.Approval) agent.Answer
}

func (a *approverFunc) Approve(_ context.Context, req agent.Approval) (agent.Answer, error) {
	a.mu.Lock()
	a.asked = append(a.asked, req)
	a.mu.Unlock()
	return a.f(req), nil
}

// textEntry and toolEntry are the scripted model calls of these tests.
var (
	textEntry = replay.TextEntry
	toolEntry = replay.ToolCallEntry
)

// newEngine is an engine over a JSONL store in a temp dir whose one model
// serves script; it is closed with the test.
func newEngine(t *testing.T, mode sandbox.Mode, script ...replay.Entry) (*agent.Engine, string) {
	t.Helper()
	dir := t.TempDir()
	store, err := jsonl.Open(filepath.Join(dir, "state"), jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := agent.New(agent.Config{
		Store: store, Models: agent.SharedModels{Provider: replay.New(script, 0, dir)},
		Provider: "replay", Model: "replay", Mode: mode, Invariant: true,
		SpillDir: filepath.Join(dir, "spill"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
		_ = store.Close()
	})
	return e, dir
}

// TestEngineTurnWithoutACP: the engine runs a whole tool turn with no
// protocol attached; what it reports to its Updates and what it logs tell
// the same story.
func TestEngineTurnWithoutACP(t *testing.T) {
	e, dir := newEngine(t, sandbox.WorkspaceWrite,
		toolEntry("c1", "read", `{"file_path":"f.txt"}`),
		textEntry("the file says hello"))
	cwd := filepath.Join(dir, "work")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An instruction file: the engine enters it for the model, but it is
	// not something the user said, so History must not retell it.
	if err := os.WriteFile(filepath.Join(cwd, "AGENTS.md"), []byte("Always be brief.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	stop, err := s.Prompt(t.Context(), []agent.Content{{Text: "read f.txt"}}, agent.Client{Updates: rec})
	if err != nil || stop != agent.StopEndTurn {
		t.Fatalf("Prompt = %q, %v; want end_turn", stop, err)
	}
	got := rec.got()
	want := []string{"start c1 read read", "running c1", "end c1 error=false", "text the file says hello"}
	if len(got) != len(want) {
		t.Fatalf("updates %q, want %d like %q", got, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("update %d = %q, want it to start with %q", i, got[i], want[i])
		}
	}
	if !strings.Contains(got[2], "hello") {
		t.Errorf("tool end %q does not carry the file's content", got[2])
	}
	// The history of the session, replayed to a fresh recorder, reports
	// the same tool call and answer, after the user's prompt.
	hist := &recorder{}
	s.History(t.Context(), hist)
	if h := hist.got(); len(h) != 4 || h[0] != "user read f.txt" || h[1] != got[0] || h[3] != got[3] {
		t.Errorf("history %q does not retell the turn %q", h, got)
	}
	if err := e.CloseSession(s.ID()); err != nil {
		t.Fatal(err)
	}
	lg := loadLog(t, filepath.Join(dir, "state"), s.ID())
	var types []string
	for _, ev := range lg.Events() {
		types = append(types, ev.Type)
	}
	for _, typ := range []string{sessionlog.TypeToolCall, sessionlog.TypeToolResult, sessionlog.TypeAssistantMessage, sessionlog.TypeTurnEnd} {
		if !slices.Contains(types, typ) {
			t.Errorf("log has no %s: %v", typ, types)
		}
	}
	var instructions int
	for _, ev := range lg.Events() {
		if ev.Type == sessionlog.TypeUserMessage && strings.Contains(string(ev.Data), "Always be brief.") {
			instructions++
		}
	}
	if instructions != 1 {
		t.Errorf("the instruction file entered the log %d times, want once", instructions)
	}
}

func loadLog(t *testing.T, dir, id string) *sessionlog.Log {
	t.Helper()
	store, err := jsonl.Open(dir, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	loaded, w, err := store.Open(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	return loaded.Log
}

// TestEngineApprover: an escalated call reaches the client's Approver with
// the whole command; only Allowed runs it, and a client without an Approver
// gets a refusal without anyone asked.
func TestEngineApprover(t *testing.T) {
	const args = `{"command":"echo escalated; echo second line","description":"d","sandbox_permissions":"danger-full-access","justification":"needed"}`
	for _, tc := range []struct {
		name     string
		answer   agent.Answer
		noAsker  bool
		wantErr  bool
		wantText string
	}{
		{"allowed", agent.Allowed, false, false, "escalated"},
		{"rejected", agent.Rejected, false, true, "The user rejected escalation to danger-full-access"},
		{"dismissed", agent.Dismissed, false, true, "was cancelled"},
		{"no approver", 0, true, true, "no one can approve it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, dir := newEngine(t, sandbox.ReadOnly, toolEntry("c1", "bash", args), textEntry("done"))
			s, err := e.NewSession(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{}
			ap := &approverFunc{f: func(agent.Approval) agent.Answer { return tc.answer }}
			c := agent.Client{Updates: rec, Approver: ap}
			if tc.noAsker {
				c.Approver = nil
			}
			if _, err := s.Prompt(t.Context(), []agent.Content{{Text: "go"}}, c); err != nil {
				t.Fatal(err)
			}
			var end string
			for _, l := range rec.got() {
				if strings.HasPrefix(l, "end c1 ") {
					end = l
				}
			}
			if !strings.Contains(end, tc.wantText) || strings.Contains(end, "error=true") != tc.wantErr {
				t.Errorf("tool end %q, want error=%v and %q", end, tc.wantErr, tc.wantText)
			}
			if tc.noAsker {
				return
			}
			if len(ap.asked) != 1 {
				t.Fatalf("approver asked %d times, want 1", len(ap.asked))
			}
			a := ap.asked[0]
			if a.Mode != sandbox.ReadOnly || a.Wanted != sandbox.DangerFullAccess || !strings.Contains(a.Detail, "echo escalated; echo second line") || !strings.Contains(a.Title, "needed") {
				t.Errorf("approval %+v does not show the whole call", a)
			}
		})
	}
}

// TestEngineErrors: the caller's mistakes match ErrInvalid or ErrBusy.
func TestEngineErrors(t *testing.T) {
	e, dir := newEngine(t, sandbox.WorkspaceWrite)
	if _, err := e.NewSession(t.Context(), "relative/dir"); !isErr(err, agent.ErrInvalid) {
		t.Errorf("relative cwd: %v, want ErrInvalid", err)
	}
	if _, err := e.Session("nope"); !isErr(err, agent.ErrInvalid) {
		t.Errorf("unknown session: %v, want ErrInvalid", err)
	}
	for _, id := range []string{"no-such-session", "../escape", ""} {
		if _, err := e.LoadSession(t.Context(), id, ""); !isErr(err, agent.ErrInvalid) {
			t.Errorf("load %q: %v, want ErrInvalid", id, err)
		}
	}
	s, err := e.NewSession(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetMode(t.Context(), "yolo"); !isErr(err, agent.ErrInvalid) {
		t.Errorf("set mode yolo: %v, want ErrInvalid", err)
	}
	if _, err := e.LoadSession(t.Context(), s.ID(), ""); !isErr(err, agent.ErrInvalid) {
		t.Errorf("load of an open session: %v, want ErrInvalid", err)
	}
}

func isErr(err, target error) bool { return err != nil && errors.Is(err, target) }

// TestEngineImportsNoProtocol: the engine's dependencies hold no ACP
// package, and the adapter is the only importer of the ACP SDK outside cmd.
func TestEngineImportsNoProtocol(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the go tool is not in PATH")
		}
		t.Skip("the go tool is not in PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "acp") && !strings.Contains(dep, "/reel/") {
			t.Errorf("the engine depends on %s", dep)
		}
	}
	out, err = exec.Command(goTool, "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if strings.Contains(imports, "github.com/coder/acp-go-sdk") && !strings.HasSuffix(pkg, "/agent/acpserver") {
			t.Errorf("%s imports the ACP SDK; only agent/acpserver may", pkg)
		}
	}
}

// TestEngineMaxTokensRunsNoTool: a response cut at the token limit may end
// in a truncated tool call, so none of its calls runs and the turn ends
// max-tokens (the reference's rule).
func TestEngineMaxTokensRunsNoTool(t *testing.T) {
	cut := toolEntry("c1", "bash", `{"command":"touch ran","description":"d"}`)
	cut.Chunks[len(cut.Chunks)-1] = llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishMaxTokens}}
	e, dir := newEngine(t, sandbox.DangerFullAccess, cut)
	s, err := e.NewSession(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	stop, err := s.Prompt(t.Context(), []agent.Content{{Text: "go"}}, agent.Client{Updates: rec})
	if err != nil || stop != agent.StopMaxTokens {
		t.Fatalf("Prompt = %q, %v; want max_tokens", stop, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the cut tool call ran")
	}
	for _, l := range rec.got() {
		if strings.HasPrefix(l, "start ") {
			t.Errorf("a tool call was started: %q", l)
		}
	}
}

// TestEngineCancelBetweenWrites: a cancel may land between any two writes
// of a step (here: right before the request is written); the turn then
// ends cancelled with its turn end on the log, not as a failed write.
func TestEngineCancelBetweenWrites(t *testing.T) {
	dir := t.TempDir()
	store, err := jsonl.Open(filepath.Join(dir, "state"), jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	e, err := agent.New(agent.Config{
		Store: store, Models: agent.SharedModels{Provider: replay.New([]replay.Entry{textEntry("never sent")}, 0, dir)},
		Provider: "replay", Model: "replay",
		PreStep: func(context.Context, agent.StepInfo) (agent.PreStepResult, error) {
			cancel()
			return agent.PreStepResult{}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	stop, err := s.Prompt(ctx, []agent.Content{{Text: "go"}}, agent.Client{})
	if err != nil || stop != agent.StopCancelled {
		t.Fatalf("Prompt = %q, %v; want cancelled", stop, err)
	}
	id := s.ID()
	if err := e.CloseSession(id); err != nil {
		t.Fatal(err)
	}
	evs := loadLog(t, filepath.Join(dir, "state"), id).Events()
	last := evs[len(evs)-1]
	if last.Type != sessionlog.TypeTurnEnd || !strings.Contains(string(last.Data), `"kind":"aborted"`) {
		t.Errorf("last event %s %s, want an aborted turn/end", last.Type, last.Data)
	}
}

// TestSessionsListLastActivity: the session list tells when a session was
// last used, not when it was made (session/list's updatedAt), with both
// stores.
func TestSessionsListLastActivity(t *testing.T) {
	for _, kind := range []string{"jsonl", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			var store sessionlog.Store
			var err error
			if kind == "jsonl" {
				store, err = jsonl.Open(filepath.Join(dir, "state"), jsonl.Options{})
			} else {
				store, err = sqlite.Open(filepath.Join(dir, "state"), sqlite.Options{})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			var mu sync.Mutex
			clock := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
			now := func() time.Time { // an hour passes at every look
				mu.Lock()
				defer mu.Unlock()
				clock = clock.Add(time.Hour)
				return clock
			}
			e, err := agent.New(agent.Config{Store: store, Models: agent.SharedModels{Provider: replay.New([]replay.Entry{textEntry("hi")}, 0, dir)},
				Provider: "replay", Model: "replay", Now: now})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			s, err := e.NewSession(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Prompt(context.Background(), []agent.Content{{Text: "hello"}}, agent.Client{}); err != nil {
				t.Fatal(err)
			}
			var infos []agent.SessionInfo
			for info := range e.Sessions(context.Background(), "") {
				infos = append(infos, info)
			}
			if len(infos) != 1 {
				t.Fatalf("listed %+v", infos)
			}
			if !infos[0].UpdatedAt.After(infos[0].CreatedAt.Add(time.Hour)) {
				t.Errorf("UpdatedAt %v is not the last activity (created %v, a turn later)", infos[0].UpdatedAt, infos[0].CreatedAt)
			}
		})
	}
}
