//go:build !reelbreak

package agent

import (
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// The break hooks let the harness self-test (harness/break_test.go) build
// reel wrong on purpose, with -tags reelbreak (break_on.go), and check that
// the corpus comparison fails it. In an ordinary build they change
// nothing.

// breakBuild reports whether this is a -tags reelbreak build.
const breakBuild = false

// breakSkip is called before a tool call runs; ok true means: do not run
// it, report res instead.
func breakSkip(string) (res tools.Result, ok bool) { return tools.Result{}, false }

// breakResult is called with each tool result before it is logged and
// may replace it.
func breakResult(_, _ string, res tools.Result) tools.Result { return res }

// breakApprove is called before an escalation is put to the client; true
// approves it without asking.
func breakApprove() bool { return false }

// breakHooks reports whether the configured hooks are ignored.
func breakHooks() bool { return false }

// breakTitles reports whether sessions go without titles (never in an
// ordinary build).
func breakTitles() bool { return false }

// breakMode is called with the mode a tool call runs under and may
// replace it.
func breakMode(m sandbox.Mode) sandbox.Mode { return m }

// breakImages drops every image before it enters the conversation (never
// in an ordinary build).
func breakImages() bool { return false }

// breakSubagents reports whether subagent calls are to start no child
// (REEL_BREAK=nosubagents).
func breakSubagents() bool { return false }

// breakClosing reports whether settlement notices are to drop the child's
// closing message (REEL_BREAK=noclosing).
func breakClosing() bool { return false }
