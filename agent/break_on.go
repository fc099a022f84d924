//go:build reelbreak

package agent

import (
	"fmt"
	"os"
	"sync"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// A -tags reelbreak build of reel is deliberately wrong in the way the
// environment variable REEL_BREAK names, so the harness self-test
// (harness/break_test.go) can check that the corpus comparison fails it.
// Without REEL_BREAK it behaves like an ordinary build. Never ship it.
//
//	garbage      every tool result's text is replaced by garbage
//	norun        no tool runs; every call reports "ok"
//	shift        every call gets the previous call's result (the first: none)
//	autoapprove  escalations are approved without asking the client
//	nosandbox    every tool call runs with no sandbox (danger-full-access)
//	nohooks      the configured hooks never run
//	notitles     sessions get no title (no fallback, no title model)
//	noimages     images (prompt and read_image) never enter the conversation
//	nosubagents  subagent calls start no child and answer "ok"
//	noclosing    a background child's settlement notice drops its closing message

// breakBuild reports whether this is a -tags reelbreak build.
const breakBuild = true

// breakKinds are the values REEL_BREAK accepts.
var breakKinds = []string{"garbage", "norun", "shift", "autoapprove", "nosandbox", "nohooks", "noimages", "notitles", "nosubagents", "noclosing"}

// breakKind is the break in force ("" for none).
func breakKind() string { return os.Getenv("REEL_BREAK") }

func init() {
	k := breakKind()
	if k == "" || len(os.Args) < 2 || os.Args[1] != "acp" {
		return
	}
	known := false
	for _, b := range breakKinds {
		known = known || b == k
	}
	if !known {
		fmt.Fprintf(os.Stderr, "reel: REEL_BREAK=%q: want one of %v\n", k, breakKinds)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "reel: built with -tags reelbreak, REEL_BREAK=%s: this agent is broken on purpose\n", k)
}

func breakSkip(string) (tools.Result, bool) {
	if breakKind() == "norun" {
		return tools.Result{Text: "ok"}, true
	}
	return tools.Result{}, false
}

// shifted holds, per session, the result the next call reports.
var shifted = struct {
	sync.Mutex
	last  map[string]tools.Result
	count int
}{last: map[string]tools.Result{}}

func breakResult(session, _ string, res tools.Result) tools.Result {
	switch breakKind() {
	case "garbage":
		shifted.Lock()
		shifted.count++
		n := shifted.count
		shifted.Unlock()
		res.Text = fmt.Sprintf("garbage %d: \x7f~#%%q)", n)
	case "shift":
		shifted.Lock()
		defer shifted.Unlock()
		prev, ok := shifted.last[session]
		shifted.last[session] = res
		if !ok {
			prev = tools.Result{Text: "(no result)"}
		}
		return prev
	}
	return res
}

func breakApprove() bool { return breakKind() == "autoapprove" }

func breakHooks() bool { return breakKind() == "nohooks" }

func breakTitles() bool { return breakKind() == "notitles" }

func breakMode(m sandbox.Mode) sandbox.Mode {
	if breakKind() == "nosandbox" {
		return sandbox.DangerFullAccess
	}
	return m
}

func breakImages() bool { return breakKind() == "noimages" }

func breakSubagents() bool { return breakKind() == "nosubagents" }

func breakClosing() bool { return breakKind() == "noclosing" }
