package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// toolRecorder writes down what a client is shown of tool calls and plans,
// field by field: what a loaded session must show again as it was shown
// live.
type toolRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *toolRecorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (*toolRecorder) UserText(context.Context, string)             {}
func (*toolRecorder) Text(context.Context, string)                 {}
func (*toolRecorder) Thought(context.Context, string)              {}
func (*toolRecorder) ToolRunning(context.Context, string)          {}
func (*toolRecorder) ToolProgress(context.Context, string, string) {}
func (*toolRecorder) Usage(context.Context, agent.ContextUsage)    {}
func (r *toolRecorder) ToolStart(_ context.Context, c agent.ToolCall) {
	r.add("start %s %s title=%q kind=%s locations=%v", c.ID, c.Name, c.Title, c.Kind, c.Locations)
}
func (r *toolRecorder) ToolEnd(_ context.Context, id string, res tools.Result) {
	diff := "none"
	if d := res.Diff; d != nil {
		old := "<new file>"
		if d.OldText != nil {
			old = *d.OldText
		}
		diff = fmt.Sprintf("%s %q→%q", d.Path, old, d.NewText)
	}
	r.add("end %s error=%v text=%q diff=%s", id, res.IsError, strings.TrimSpace(res.Text), diff)
}
func (r *toolRecorder) Plan(_ context.Context, todos []tools.Todo) {
	r.add("plan %+v", todos)
}
func (r *toolRecorder) Title(context.Context, agent.Title) {}

// TestLoadShowsWhatTheLiveTurnShowed: a session's history, replayed on
// load, shows the tool calls with the same titles, kinds and (absolute)
// locations, the same results and file diffs, and the same plans as the
// live turn did.
func TestLoadShowsWhatTheLiveTurnShowed(t *testing.T) {
	e, dir := newEngine(t, sandbox.DangerFullAccess,
		toolEntry("w1", "write", `{"file_path":"notes/a.txt","content":"one\n"}`),
		toolEntry("r1", "read", `{"file_path":"notes/a.txt"}`),
		toolEntry("e1", "edit", `{"file_path":"notes/a.txt","old_string":"one","new_string":"two"}`),
		toolEntry("w2", "write", `{"file_path":"notes/a.txt","content":"three\n"}`),
		toolEntry("t1", "todo_write", `{"todos":[{"content":"check the notes","status":"in_progress"},{"content":"ship","status":"pending","priority":"high"}]}`),
		toolEntry("b1", "bash", `{"command":"cat notes/a.txt","description":"Show the notes"}`),
		textEntry("done"))
	cwd := filepath.Join(dir, "work")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession(context.Background(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	live := &toolRecorder{}
	if _, err := s.Prompt(context.Background(), []agent.Content{{Text: "take notes"}}, agent.Client{Updates: live}); err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	if err := e.CloseSession(id); err != nil {
		t.Fatal(err)
	}
	loaded, err := e.LoadSession(context.Background(), id, cwd)
	if err != nil {
		t.Fatal(err)
	}
	again := &toolRecorder{}
	loaded.History(context.Background(), again)
	if !slices.Equal(live.lines, again.lines) {
		t.Errorf("the load shows something else than the live turn:\nlive:\n  %s\nload:\n  %s",
			strings.Join(live.lines, "\n  "), strings.Join(again.lines, "\n  "))
	}
	// The test means something only if the live turn showed all of it.
	joined := strings.Join(live.lines, "\n")
	for _, want := range []string{`<new file>"→"one\n"`, `"one\n"→"two\n"`, "plan [", filepath.Join(cwd, "notes", "a.txt")} {
		if !strings.Contains(joined, want) {
			t.Errorf("the live turn did not show %q:\n%s", want, joined)
		}
	}
}
