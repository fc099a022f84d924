package main_test

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestSubcommandHelp runs the binary: a help request prints to stdout
// and exits 0; a usage error exits 1 with the message on stderr.
func TestSubcommandHelp(t *testing.T) {
	cases := []struct {
		args     []string
		wantCode int
		stdout   []string // fragments of stdout
		stderr   string   // fragment of stderr ("" means stderr must be empty)
	}{
		{[]string{"snapshot", "-h"}, 0, []string{"usage: reel snapshot", "-shard K/N", "-junit FILE", "DEEPSEEK_API_KEY", "REEL_SNAPSHOT", "UPDATE_SNAPS", "examples:", "docs/scenarios.md"}, ""},
		{[]string{"snapshot", "--help"}, 0, []string{"usage: reel snapshot"}, ""},
		{[]string{"standin", "-h"}, 0, []string{"usage: reel standin", "-script FILE", "docs/scenarios.md"}, ""},
		{[]string{"standin", "--help"}, 0, []string{"usage: reel standin"}, ""},
		{[]string{"snapshot", "--shard", "0/3"}, 1, nil, `reel: snapshot: --shard "0/3": K must be between 1 and N (3)`},
		{[]string{"snapshot", "--bogus"}, 1, nil, "reel: snapshot: flag provided but not defined: -bogus (run `reel snapshot -h` for the flags)"},
		{[]string{"standin", "--bogus"}, 1, nil, "reel: standin: flag provided but not defined: -bogus"},
		{[]string{"log", "-h"}, 0, []string{"  diff A B "}, ""},
		{[]string{"log", "diff", "-h"}, 0, []string{"usage: reel log diff A B", "Exit status", "--env-line"}, ""},
		{[]string{"log", "diff", "../../fixtures/tool-call-turn/session.jsonl"}, 1, nil, "reel log diff A B"},
		{[]string{"log", "diff", "../../fixtures/tool-call-turn/session.jsonl", "../../fixtures/tool-call-turn/session.jsonl"}, 0, []string{"partial"}, ""},
		{[]string{"log", "diff", "../../fixtures/text-turn/session.jsonl", "../../fixtures/tool-call-turn/session.jsonl"}, 1, []string{"tool calls: A makes 0 tool call(s)", "different:"}, "reel: equiv: the runs differ"},
		{[]string{"snapshot", "--corpus", "x", "--refresh"}, 1, nil, "--corpus replays the reference's recordings"},
		{[]string{"snapshot", "--keep", "x"}, 1, nil, "--keep applies to --corpus"},
	}
	for _, c := range cases {
		cmd := exec.Command(reelBin, c.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("reel %q: %v", c.args, err)
		}
		if code != c.wantCode {
			t.Errorf("reel %q exited %d, want %d\nstdout: %s\nstderr: %s", c.args, code, c.wantCode, stdout.String(), stderr.String())
		}
		for _, w := range c.stdout {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("reel %q stdout lacks %q:\n%s", c.args, w, stdout.String())
			}
		}
		if c.stderr == "" && stderr.Len() > 0 {
			t.Errorf("reel %q wrote to stderr: %q", c.args, stderr.String())
		}
		if c.stderr != "" && !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("reel %q stderr = %q, want it to contain %q", c.args, stderr.String(), c.stderr)
		}
		if strings.Contains(stderr.String(), "help requested") {
			t.Errorf("reel %q still reports %q", c.args, "flag: help requested")
		}
	}
}
