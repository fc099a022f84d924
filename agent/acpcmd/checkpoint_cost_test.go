package acpcmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// TestCheckpointTurnCost measures what checkpoints cost a session (opt-in:
// REEL_BENCH_CHECKPOINTS=1, rounds in REEL_BENCH_ROUNDS, default 5; it
// measures, it asserts nothing about time): a 20-turn session through the
// real binary and the stand-in model, each turn one bash command writing a
// file in a workspace of 1,000 small files, run with --checkpoints off and
// on, alternating. It logs each round and the medians (BENCHMARKS.md,
// checkpoint section).
func TestCheckpointTurnCost(t *testing.T) {
	t.Parallel()
	if os.Getenv("REEL_BENCH_CHECKPOINTS") != "1" {
		t.Skip("a measurement: REEL_BENCH_CHECKPOINTS=1 runs it")
	}
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("REEL_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	const turns = 20
	session := func(on bool) time.Duration {
		dir := t.TempDir()
		ws := filepath.Join(dir, "ws")
		files := map[string]string{}
		for i := range 1000 {
			files[fmt.Sprintf("d%02d/f%04d.go", i/100, i)] = fmt.Sprintf("package d\n\n// F%d is file %d.\nfunc F%d() int { return %d }\n", i, i, i, i)
		}
		rwFiles(t, ws, files)
		var rs []standin.Response
		for i := range turns {
			rs = append(rs,
				standin.Response{ToolCalls: []standin.ToolCall{awToolCall(fmt.Sprint("w", i), "bash", map[string]any{"command": fmt.Sprintf("echo turn %d > out%d.txt", i, i), "description": "write"})}},
				standin.Response{Text: "written"})
		}
		url, _ := standinURL(t, &standin.Script{Responses: rs})
		args := []string{"acp", "--state-dir", filepath.Join(dir, "state"), "--mode", "workspace-write",
			"--provider", "deepseek", "--base-url", url, "--model", "standin", "--no-title-model"}
		if on {
			args = append(args, "--checkpoints")
		}
		start := time.Now()
		p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-reel-fake-bench"), args...)
		p.initialize()
		sid := p.newSession(ws)
		for i := range turns {
			rwPrompt(t, p, sid, fmt.Sprint("Write file ", i, "."))
		}
		if code := p.finish(); code != 0 {
			t.Fatalf("exit %d", code)
		}
		return time.Since(start)
	}
	var off, on []time.Duration
	for r := range rounds {
		off = append(off, session(false))
		on = append(on, session(true))
		t.Logf("round %d: off %v, on %v", r+1, off[r].Round(time.Millisecond), on[r].Round(time.Millisecond))
	}
	median := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	mOff, mOn := median(off), median(on)
	t.Logf("%d-turn session, 1,000-file workspace, a bash write per turn: median off %v, on %v, ratio %.2f× (%.1f ms a turn with checkpoints)",
		turns, mOff.Round(time.Millisecond), mOn.Round(time.Millisecond), float64(mOn)/float64(mOff), float64(mOn-mOff)/float64(time.Millisecond)/turns)
}
