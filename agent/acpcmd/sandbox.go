package acpcmd

import (
	"log/slog"
	"regexp"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// confinement adapts agent/sandbox to the agent: Landlock hooks, the mode
// description, and the denial marker on denied bash results.
type confinement struct {
	sb  *sandbox.Sandbox
	log *slog.Logger
}

func newSandbox(exe string, log *slog.Logger) *confinement {
	sb := sandbox.New(exe)
	if abi := sb.ABI(); abi == 0 {
		log.Warn("Landlock is unavailable: bash fails closed (SANDBOX_UNAVAILABLE) in read-only and workspace-write")
	} else {
		log.Debug("Landlock available", "abi", abi)
	}
	return &confinement{sb: sb, log: log}
}

// Hooks implements agent.Sandbox.
func (c *confinement) Hooks(mode, cwd string) (tools.Guard, tools.CommandFunc) {
	return c.sb.Hooks(mode, cwd)
}

// Describe implements agent.Sandbox.
func (c *confinement) Describe(mode string) string { return c.sb.Describe(mode) }

var exitLine = regexp.MustCompile(`\[exit code (\d+)\]\s*$`)

// Annotate implements agent.Sandbox: a bash result whose failure came from
// the sandbox gets the fixed denial marker, or the unavailable marker, in
// front, so the model can tell it from an ordinary failure.
func (c *confinement) Annotate(mode, tool string, res tools.Result) tools.Result {
	if tool != "bash" || !res.IsError || mode == sandbox.DangerFullAccess {
		return res
	}
	m := exitLine.FindStringSubmatch(res.Text)
	if m == nil {
		return res
	}
	code, _ := strconv.Atoi(m[1])
	switch sandbox.Classify(code, res.Text, mode) {
	case sandbox.Denied:
		res.Text = sandbox.Marker(mode) + " the sandbox blocked a write outside the writable roots; the command's other effects stand.\n" + res.Text
	case sandbox.Unavailable:
		if !strings.Contains(res.Text, sandbox.UnavailableMarker) {
			res.Text = sandbox.UnavailableMarker + ": " + res.Text
		}
	}
	return res
}
