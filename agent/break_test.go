package agent

import (
	"testing"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// TestBreakHooks checks the self-test's break hooks: no-ops in an
// ordinary build whatever REEL_BREAK says, and in a -tags reelbreak build
// (go test -tags reelbreak ./agent -run TestBreakHooks) each variant
// breaks exactly its part.
func TestBreakHooks(t *testing.T) {
	type breakCase struct {
		kind       string
		skip       bool // breakSkip stops the call
		changed    bool // breakResult changes a result
		approve    bool // breakApprove approves
		unconfined bool // breakMode lifts the sandbox
	}
	ok := tools.Result{Text: "real output"}
	cases := []breakCase{
		{kind: ""},
		{kind: "garbage", changed: true},
		{kind: "norun", skip: true},
		{kind: "shift", changed: true},
		{kind: "autoapprove", approve: true},
		{kind: "nosandbox", unconfined: true},
	}
	for _, c := range cases {
		t.Run("REEL_BREAK="+c.kind, func(t *testing.T) {
			t.Setenv("REEL_BREAK", c.kind)
			if !breakBuild {
				c = breakCase{kind: c.kind}
			}
			res, skip := breakSkip("bash")
			if skip != c.skip || (skip && res.Text != "ok") {
				t.Errorf("breakSkip = %+v, %v; want skip %v", res, skip, c.skip)
			}
			got := breakResult("s-"+c.kind, "bash", ok)
			if (got.Text != ok.Text) != c.changed {
				t.Errorf("breakResult(%q) = %q; want changed %v", ok.Text, got.Text, c.changed)
			}
			if c.kind == "shift" && breakBuild {
				if second := breakResult("s-"+c.kind, "bash", tools.Result{Text: "second"}); second.Text != ok.Text {
					t.Errorf("shift: the second call got %q, want the first call's %q", second.Text, ok.Text)
				}
			}
			if breakApprove() != c.approve {
				t.Errorf("breakApprove = %v, want %v", !c.approve, c.approve)
			}
			if m := breakMode(sandbox.ReadOnly); (m == sandbox.DangerFullAccess) != c.unconfined {
				t.Errorf("breakMode(read-only) = %s", m)
			}
		})
	}
}
