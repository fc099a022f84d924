package harness_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gkampitakis/go-snaps/snaps"

	"github.com/reel-agent/reel/harness"
)

// reelExe is the reel binary built once for the whole test run, in binDir.
var reelExe, binDir string

// stripped is the go build flag for the reels the tests build: without the
// symbol table and DWARF, linking takes about half the CPU time (a race
// report and a panic's trace still name functions and lines: they come
// from the runtime's own tables).
const stripped = "-ldflags=-s -w"

// reelBreak is the -tags reelbreak reel (see agent/break_on.go), built
// once, at the first test that asks (reelBreakExe).
var reelBreak struct {
	once sync.Once
	exe  string
	err  error
}

// reelBreakExe builds the -tags reelbreak reel once and returns its path.
func reelBreakExe(t *testing.T) string {
	t.Helper()
	reelBreak.once.Do(func() {
		exe := filepath.Join(binDir, "reel-break")
		if out, err := exec.Command("go", "build", "-tags", "reelbreak", stripped, "-o", exe, "../cmd/reel").CombinedOutput(); err != nil {
			reelBreak.err = fmt.Errorf("go build -tags reelbreak: %w\n%s", err, out)
			return
		}
		reelBreak.exe = exe
	})
	if reelBreak.err != nil {
		t.Fatal(reelBreak.err)
	}
	return reelBreak.exe
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "reel-harness-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir, reelExe = dir, filepath.Join(dir, "reel")
	build := exec.Command("go", "build", stripped, "-o", reelExe, "../cmd/reel")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building reel:", err)
		os.Exit(1)
	}
	code := m.Run()
	// Goldens no test produced are an error (obsolete snapshots fail CI).
	dirty, err := snaps.Clean(m, snaps.CleanOpts{Sort: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-snaps clean:", err)
		code = 1
	}
	if dirty && code == 0 && os.Getenv("UPDATE_SNAPS") == "" {
		fmt.Fprintln(os.Stderr, "obsolete snapshots found: remove them (UPDATE_SNAPS=clean) or restore their scenarios")
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// snapsGolden checks goldens through go-snaps, so UPDATE_SNAPS=true
// refreshes them and obsolete ones are reported by snaps.Clean.
type snapsGolden struct{ t *testing.T }

func (g snapsGolden) Match(dir, name, ext string, content []byte) error {
	g.t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	snaps.WithConfig(snaps.Dir(abs), snaps.Filename(name), snaps.Ext(ext),
		snaps.Serializer(func(v any) string { return v.(string) })).
		MatchStandaloneSnapshot(g.t, string(content))
	return nil
}

// mode reads REEL_SNAPSHOT (replay by default).
func mode(t *testing.T) harness.Mode {
	switch m := os.Getenv("REEL_SNAPSHOT"); m {
	case "", "replay":
		return harness.Replay
	case "refresh":
		return harness.Refresh
	case "record":
		return harness.Record
	default:
		t.Fatalf("REEL_SNAPSHOT=%q: want replay, refresh or record", m)
	}
	return ""
}

// TestScenarios replays every committed scenario through the real binary
// and compares transcripts, logs, prompts and tool schemas.
func TestScenarios(t *testing.T) {
	m := mode(t)
	s := &harness.Suite{
		Runner:    harness.Runner{Exe: reelExe, Mode: m},
		Fixtures:  filepath.Join("..", "fixtures"),
		Snapshots: filepath.Join("..", "snapshots"),
		Standin:   m == harness.Record,
	}
	dirs, err := s.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no scenarios under fixtures/")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			s := *s
			s.Golden = snapsGolden{t}
			if m != harness.Replay {
				s.Golden = harness.FileGolden{Update: true}
			}
			r := s.RunOne(context.Background(), dir)
			for _, f := range r.Failures {
				t.Error(f)
			}
		})
	}
	if t.Failed() {
		return
	}
	if problems := s.Guard(); len(problems) > 0 {
		for _, p := range problems {
			t.Error(p)
		}
	}
}
