package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm/replay"
)

// TestReadGuardPerSession: in reel acp's engine, edit refuses a file the
// session has not read, with the reference's words; what one session read
// does not count for another; and, as in the reference, a loaded session
// starts with nothing read. DisableReadGuard turns the rule off.
func TestReadGuardPerSession(t *testing.T) {
	edit := func(id string) replay.Entry {
		return toolEntry(id, "edit", `{"file_path":"f.txt","old_string":"one","new_string":"two"}`)
	}
	te := newTestEngine(t, nil,
		edit("e1"), toolEntry("r1", "read", `{"file_path":"f.txt"}`), edit("e2"), textEntry("s1 done"),
		edit("e3"), textEntry("s2 done"),
		edit("e4"), textEntry("s1 after load"),
	)
	ws := filepath.Join(te.dir, "ws")
	put(t, ws, map[string]string{"f.txt": "one\n"})
	p := filepath.Join(ws, "f.txt")
	refusal := `edit requires reading "` + p + `" first — read the file, then retry`
	s1, err := te.NewSession(t.Context(), ws)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(prompt(t, s1, "edit it"), "\n")
	if !strings.Contains(got, "end e1 error=true "+refusal) || !strings.Contains(got, "end e2 error=false") {
		t.Fatalf("session 1: %s", got)
	}
	put(t, ws, map[string]string{"f.txt": "one\n"})
	s2, err := te.NewSession(t.Context(), ws)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(prompt(t, s2, "edit it"), "\n"); !strings.Contains(got, "end e3 error=true "+refusal) {
		t.Fatalf("session 2 edited a file only session 1 read: %s", got)
	}
	id := s1.ID()
	if err := te.CloseSession(id); err != nil {
		t.Fatal(err)
	}
	s1, err = te.LoadSession(t.Context(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(prompt(t, s1, "edit it again"), "\n"); !strings.Contains(got, "end e4 error=true "+refusal) {
		t.Fatalf("a loaded session edited a file it read before the load: %s", got)
	}
	if b, _ := os.ReadFile(p); string(b) != "one\n" {
		t.Fatalf("f.txt holds %q", b)
	}

	off := newTestEngine(t, func(c *agent.Config) { c.DisableReadGuard = true }, edit("e1"), textEntry("done"))
	ws = filepath.Join(off.dir, "ws")
	put(t, ws, map[string]string{"f.txt": "one\n"})
	s, err := off.NewSession(t.Context(), ws)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(prompt(t, s, "edit it"), "\n"); !strings.Contains(got, "end e1 error=false") {
		t.Fatalf("with the guard off: %s", got)
	}
}
