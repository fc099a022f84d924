package acpcmd_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/tools"
)

// TestAttackSpillBounded is finding 11 of the hardening issue: a confined
// command prints without end, its output spilled next to the state dir
// without bound, and a full disk then failed every later turn. Through the
// real binary, in workspace-write: 50 MB of output keep a spill file of at
// most tools.MaxSpillBytes and the model is told it was cut; with the spill
// dir on a full (1 MiB tmpfs) disk the call still returns its tail with a
// note saying the output was not saved whole, and the next turn works.
func TestAttackSpillBounded(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	for _, tc := range []struct {
		name     string
		fullDisk bool
		note     string
	}{
		{"cap", false, "the spill file cap of"},
		{"full disk", true, "no space left on device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			state := filepath.Join(dir, "state", "sessions")
			spill := filepath.Join(dir, "state", "spill")
			for _, d := range []string{ws, state, spill} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.fullDisk {
				if err := syscall.Mount("tmpfs", spill, "tmpfs", 0, "size=1m"); err != nil {
					if os.Getuid() == 0 && os.Getenv("CI") == "true" {
						t.Fatalf("mounting a 1 MiB tmpfs as root failed: %v", err)
					}
					t.Skipf("!!! SKIPPED LOUDLY: cannot mount a small tmpfs to fill (%v); the full-disk attack is not tested", err)
				}
				t.Cleanup(func() { _ = syscall.Unmount(spill, syscall.MNT_DETACH) })
			}
			url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
				{ToolCalls: []standin.ToolCall{{ID: "flood", Name: "bash", Arguments: jsonArgs(t, map[string]any{
					"command": `head -c 50000000 /dev/zero | tr '\0' a; echo; echo FLOOD-END`})}}},
				{Text: "flooded"},
				{ToolCalls: []standin.ToolCall{{ID: "after", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": "echo still-working"})}}},
				{Text: "done"},
			}})
			p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-disk-test"), "acp", "--state-dir", state,
				"--mode", "workspace-write", "--provider", "deepseek", "--base-url", url, "--model", "standin")
			p.initialize()
			sid := p.newSession(ws)
			stop, frames := p.prompt(sid, "flood")
			if stop != "end_turn" {
				t.Fatalf("stopReason %q", stop)
			}
			got := toolResults(frames)["flood"]
			if !strings.Contains(got, "FLOOD-END") || !strings.Contains(got, "50000011 bytes in total") || !strings.Contains(got, tc.note) {
				t.Errorf("flood result does not show the tail and say the spill was cut (%q):\n%.600s\nstderr: %s", tc.note, got, p.stderr.String())
			}
			if len(got) > 2*tools.MaxOutputBytes {
				t.Errorf("the model was shown %d bytes", len(got))
			}
			var spilled int64
			_ = filepath.WalkDir(spill, func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					if fi, err := d.Info(); err == nil {
						spilled += fi.Size()
					}
				}
				return nil
			})
			if spilled > tools.MaxSpillBytes {
				t.Errorf("%d bytes spilled, want at most %d", spilled, tools.MaxSpillBytes)
			}
			if stop, frames := p.prompt(sid, "again"); stop != "end_turn" || !strings.Contains(toolResults(frames)["after"], "still-working") {
				t.Errorf("the turn after the flood: %s %q", stop, toolResults(frames)["after"])
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
		})
	}
}

// TestAttackJobFloodBounded: a background job that prints 50 MB on each
// of stdout and stderr, read back with job_output, shows the model a
// bounded window and spills at most the spill caps — through the real
// binary, the job's end waited for by the model.
func TestAttackJobFloodBounded(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	state := filepath.Join(dir, "state", "sessions")
	spill := filepath.Join(dir, "state", "spill")
	for _, d := range []string{ws, state, spill} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	flood := `head -c 50000000 /dev/zero | tr '\0' o; head -c 50000000 /dev/zero | tr '\0' e >&2; echo JOB-END`
	url, _ := standinURL(t, &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{{ID: "start", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": flood, "run_in_background": true})}}},
		{ToolCalls: []standin.ToolCall{{ID: "read", Name: "job_output", Arguments: jsonArgs(t, map[string]any{"job_id": "bash-1", "wait": true, "timeout_ms": 120000})}}},
		{Text: "done"},
	}})
	p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=sk-job-flood"), "acp", "--state-dir", state,
		"--mode", "workspace-write", "--provider", "deepseek", "--base-url", url, "--model", "standin")
	p.initialize()
	sid := p.newSession(ws)
	stop, frames := p.prompt(sid, "flood in the background")
	if stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	got := toolResults(frames)["read"]
	if !strings.Contains(got, "JOB-END") || !strings.Contains(got, "[status: completed, exit code: 0]") {
		t.Fatalf("job_output did not read the job to its end:\n%.400s", got)
	}
	if len(got) > 4*tools.JobWindowBytes {
		t.Errorf("the model was shown %d bytes of a 100 MB job", len(got))
	}
	var spilled int64
	_ = filepath.WalkDir(spill, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				spilled += fi.Size()
			}
		}
		return nil
	})
	if spilled > 2*tools.MaxSpillBytes {
		t.Errorf("%d bytes spilled for the job's two streams, want at most %d", spilled, 2*tools.MaxSpillBytes)
	}
}
