package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/skills"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// TestCatalogDigestReadsEachEventOnce: the catalog check runs before every
// step; it must not read the whole log each time (it once did, and a long
// session's turns slowed down with every message). With nothing appended
// since the last call it allocates next to nothing, however long the log.
func TestCatalogDigestReadsEachEventOnce(t *testing.T) {
	dir := t.TempDir()
	store, err := jsonl.Open(filepath.Join(dir, "state"), jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e, err := New(Config{Store: store, Models: SharedModels{Provider: replay.New(nil, 0, dir)}, Provider: "replay", Model: "replay"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.emit(ctx, 1, sessionlog.TypeTurnStart, sessionlog.TurnData{Turn: 1}, nil, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		m := sessionlog.NewUserMessage("m", sessionlog.TextPart("message "+string(rune('a'+i%26))))
		if _, err := s.emit(ctx, 1, sessionlog.TypeUserMessage, m, sessionlog.AppendOp(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if d, ever := s.catalogDigest(); d != "" || ever {
		t.Fatalf("catalogDigest = %q, %v on a log without a catalog", d, ever)
	}
	if n := testing.AllocsPerRun(20, func() { s.catalogDigest() }); n > 5 {
		t.Errorf("catalogDigest allocates %.0f times with nothing new in a 2000-message log: it reads the log again", n)
	}
}

// TestSkillsScannedOncePerNeed: the skill directories are scanned once
// when a session's commands are listed, once at the start of each turn
// (its notices, invoked skills and first step's catalog share it) and
// once at each later step — and a skill added while the session runs is
// in the catalog of the next step and of the next turn (the catalog's
// rule: at every step the session's skills are compared with the newest
// catalog the model was shown).
func TestSkillsScannedOncePerNeed(t *testing.T) {
	dir := t.TempDir()
	store, err := jsonl.Open(filepath.Join(dir, "state"), jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cwd := filepath.Join(dir, "work")
	skill := func(name string) {
		t.Helper()
		d := filepath.Join(cwd, ".reel", "skills", name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "---\nname: " + name + "\ndescription: the " + name + " skill\n---\nDo " + name + ".\n"
		if err := os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	skill("alpha")
	if err := os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// After the first step's catalog is entered, a skill appears.
	added := false
	preStep := func(_ context.Context, info StepInfo) (PreStepResult, error) {
		if info.Turn == 1 && info.Step == 1 && !added {
			added = true
			skill("beta")
		}
		return PreStepResult{}, nil
	}
	script := []replay.Entry{
		replay.ToolCallEntry("c1", "read", `{"file_path":"f.txt"}`),
		replay.TextEntry("read it"),
		replay.TextEntry("second turn"),
	}
	e, err := New(Config{Store: store, Models: SharedModels{Provider: replay.New(script, 0, dir)}, Provider: "replay", Model: "replay",
		Skills: skills.Options{NoUser: true}, PreStep: preStep, SpillDir: filepath.Join(dir, "spill"), DisableTitleModel: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	s, err := e.NewSession(ctx, cwd)
	if err != nil {
		t.Fatal(err)
	}
	scans := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.skillSet.scans
	}
	e.SessionCommands(ctx, s)
	if n := scans(); n != 1 {
		t.Fatalf("listing the commands scanned the skills %d times, want 1", n)
	}
	if _, err := s.Prompt(ctx, []Content{{Text: "read f.txt"}}, Client{}); err != nil {
		t.Fatal(err)
	}
	if n := scans(); n != 3 {
		t.Errorf("after a two-step turn the skills were scanned %d times in all, want 3 (commands, turn start, step 2)", n)
	}
	skill("gamma")
	if _, err := s.Prompt(ctx, []Content{{Text: "again"}}, Client{}); err != nil {
		t.Fatal(err)
	}
	if n := scans(); n != 4 {
		t.Errorf("after a one-step turn the skills were scanned %d times in all, want 4", n)
	}
	// The catalogs entered: alpha at turn 1 step 1, alpha+beta at step 2,
	// alpha+beta+gamma at turn 2.
	var catalogs []string
	for _, ev := range s.log.Log().Events() {
		if ev.Type == sessionlog.TypeUserMessage && bytes.Contains(ev.Data, catalogMarker) {
			var names []string
			for _, n := range []string{"alpha", "beta", "gamma"} {
				if bytes.Contains(ev.Data, []byte("`"+n+"`")) {
					names = append(names, n)
				}
			}
			catalogs = append(catalogs, strings.Join(names, "+"))
		}
	}
	if want := []string{"alpha", "alpha+beta", "alpha+beta+gamma"}; !slices.Equal(catalogs, want) {
		t.Errorf("catalogs entered %q, want %q", catalogs, want)
	}
}
