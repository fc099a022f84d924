package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// harnessPkg is the import path prefix of the snapshot harness's packages.
const harnessPkg = "github.com/reel-agent/reel/harness"

// TestACPSkipsHarnessInit pins that reel acp does no start-up work for the
// snapshot harness. cmd/reel links the harness (for reel snapshot), and Go
// initializes every linked package before main, in import-path order as
// each becomes ready: the harness's packages come before the OpenAI client
// that reel acp needs, so no dispatch can get ahead of them. What keeps
// them off reel acp's path is that their initialization does nothing (no
// map literal, regexp or error built at package level): GODEBUG=inittrace=1
// prints a line for every package whose initialization did work, and none
// may name a harness package. And the acp path itself (agent/acpcmd and
// everything it imports) must not import the harness at all.
func TestACPSkipsHarnessInit(t *testing.T) {
	fixture, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "text-turn", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
	}{
		{"loopback model", []string{"--base-url", "http://127.0.0.1:9/v1"}},
		{"replay", []string{"--replay", fixture}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"acp", "--state-dir", filepath.Join(dir, "state")}, tc.args...)
			cmd := exec.Command(reelBin, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "HOME="+dir)
			// stdin is empty: reel acp starts, reads EOF and exits.
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("reel acp with an empty stdin: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "init runtime @") {
				t.Fatalf("GODEBUG=inittrace=1 printed no init lines:\n%s", out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(line, "init "+harnessPkg+" @") || strings.HasPrefix(line, "init "+harnessPkg+"/") {
					t.Errorf("reel acp initialized a harness package: %s", line)
				}
			}
		})
	}
	t.Run("imports", func(t *testing.T) {
		out, err := exec.Command("go", "list", "-deps", "github.com/reel-agent/reel/agent/acpcmd").CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, p := range strings.Fields(string(out)) {
			if p == harnessPkg || strings.HasPrefix(p, harnessPkg+"/") {
				t.Errorf("the acp path imports %s", p)
			}
		}
	})
}
