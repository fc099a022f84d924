package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/harness/scenario"
)

// fakeAgent answers initialize and session/new, then writes many
// notifications and exits at once: the frames sit in the pipe when the
// process is gone. The driver must still read every one of them (with
// cmd.StdoutPipe, Wait closed the read end at exit and the transcript
// lost them: CI's handshake golden missed its available_commands_update).
const fakeAgent = `#!/bin/bash
read -r _
printf '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}\n'
read -r _
out='{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}\n'
for i in $(seq 1 %d); do
  out+='{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}\n'
done
printf "$out"
exit 0
`

func TestStopReadsTheWholeOutput(t *testing.T) {
	const frames = 400
	dir := t.TempDir()
	exe := filepath.Join(dir, "fake-reel")
	if err := os.WriteFile(exe, fmt.Appendf(nil, fakeAgent, frames), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := scenario.ParseInput("input.json", []byte(`{"steps":[{"op":"initialize"},{"op":"newSession"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Exe: exe, Mode: Record}
	for round := range 20 {
		run, err := r.Execute(context.Background(), &scenario.Scenario{Name: "stop-reads-all", Input: in})
		if run != nil {
			defer os.RemoveAll(run.Temp)
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if got := bytes.Count(run.Transcript, []byte(`"agent_message_chunk"`)); got != frames {
			t.Fatalf("round %d: the transcript holds %d of the %d frames the agent wrote before exiting", round, got, frames)
		}
	}
}

// hungAgent never answers initialize; SIGQUIT makes it write a goroutine
// dump to stderr and exit, as the Go runtime does. refusingAgent answers
// initialize with an error at once (and would dump on SIGQUIT too).
const (
	hungAgent = `#!/bin/bash
sleep 1000 &
trap 'kill $!; printf "SIGQUIT: quit\ngoroutine 7 [chan receive]:\nreel/agent.(*Session).stuck()\n" >&2; exit 2' QUIT
echo "starting" >&2
while true; do sleep 0.05; done
`
	refusingAgent = `#!/bin/bash
trap 'printf "SIGQUIT: quit\n" >&2; exit 2' QUIT
echo "starting" >&2
read -r _
printf '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}\n'
cat <&0 >/dev/null &
wait $!
`
)

// A step that times out asks the hung agent for its goroutines (SIGQUIT)
// and quotes the dump, with the processes the agent started, in the
// failure, so a hang seen once in CI says where reel was stuck. A step
// that fails in time is reported as it is.
func TestStepTimeoutDumpsGoroutines(t *testing.T) {
	for _, tc := range []struct {
		name, agent   string
		want, notWant []string
	}{
		{"hung", hungAgent,
			[]string{"step 1 (initialize)", "context deadline exceeded", "starting", "(SIGQUIT)",
				"processes reel acp had started (pid state command):\n", " sleep 1000\n",
				"goroutine 7 [chan receive]:\nreel/agent.(*Session).stuck()"},
			nil},
		{"fails in time", refusingAgent,
			[]string{"step 1 (initialize)", "Internal error", "starting"},
			[]string{"SIGQUIT", "processes reel acp had started"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "reel")
			if err := os.WriteFile(exe, []byte(tc.agent), 0o755); err != nil {
				t.Fatal(err)
			}
			in, err := scenario.ParseInput("input.json", []byte(`{"steps":[{"op":"initialize"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			r := &Runner{Exe: exe, Mode: Record, StepTimeout: 500 * time.Millisecond}
			if tc.notWant != nil {
				// The refusal comes at once: the step's bound only has
				// to outlast a loaded machine's start of bash.
				r.StepTimeout = 30 * time.Second
			}
			run, err := r.Execute(context.Background(), &scenario.Scenario{Name: "step-timeout-dump", Input: in})
			if run != nil {
				defer os.RemoveAll(run.Temp)
			}
			if err == nil {
				t.Fatal("the initialize the agent never answers well passed")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the failure does not say %q:\n%v", w, err)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(err.Error(), w) {
					t.Errorf("the failure says %q:\n%v", w, err)
				}
			}
		})
	}
}

// explainingAgent refuses initialize and then says why on stderr, as reel
// logs a failure next to the error it answers with; it exits when stdin
// closes.
const explainingAgent = `#!/bin/bash
read -r _
printf '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}\n'
echo "why: the state dir is read-only" >&2
cat >/dev/null
`

// A step that fails in time quotes everything the agent wrote to stderr,
// also what it wrote after its answer: the quote is taken once the agent
// has exited (CI once failed TestStepTimeoutDumpsGoroutines with an empty
// quote, the agent's line still in the pipe).
func TestStepFailureQuotesWholeStderr(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "reel")
	if err := os.WriteFile(exe, []byte(explainingAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := scenario.ParseInput("input.json", []byte(`{"steps":[{"op":"initialize"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Exe: exe, Mode: Record, StepTimeout: 30 * time.Second}
	for round := range 10 {
		run, err := r.Execute(context.Background(), &scenario.Scenario{Name: "step-failure-stderr", Input: in})
		if run != nil {
			defer os.RemoveAll(run.Temp)
		}
		if err == nil {
			t.Fatal("the refused initialize passed")
		}
		for _, w := range []string{"step 1 (initialize)", "Internal error", "stderr:\nwhy: the state dir is read-only"} {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("round %d: the failure does not say %q:\n%v", round, w, err)
			}
		}
	}
}
