package agent

import (
	"fmt"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// Sandbox modes, advertised as the ACP session modes.
const (
	ModeReadOnly       = "read-only"
	ModeWorkspaceWrite = "workspace-write"
	ModeFullAccess     = "danger-full-access"
)

// Approval policies.
const (
	ApprovalOnRequest = "on-request"
	ApprovalNever     = "never"
)

// modeInfo is the name and description of each mode, in advertised order.
var modeInfo = []struct{ id, name, desc string }{
	{ModeReadOnly, "Read only", "Read files and run commands, but change nothing on disk."},
	{ModeWorkspaceWrite, "Workspace write", "Write inside the session's working directory and temp; read everywhere."},
	{ModeFullAccess, "Full access", "No sandbox: commands and file tools may change anything the user can."},
}

// ValidMode reports whether m is a sandbox mode.
func ValidMode(m string) bool {
	for _, mi := range modeInfo {
		if mi.id == m {
			return true
		}
	}
	return false
}

// modeRank orders modes by what they allow.
func modeRank(m string) int {
	for i, mi := range modeInfo {
		if mi.id == m {
			return i
		}
	}
	return -1
}

func defaultModeText(mode string) string {
	switch mode {
	case ModeReadOnly:
		return "Commands and file tools must not modify anything on disk; writes are denied."
	case ModeWorkspaceWrite:
		return "Commands and file tools may write only inside the working directory and the temp directory; everything else is read-only."
	}
	return "Commands and file tools are not confined."
}

// systemPrompt renders the system prompt for a session under mode. It must
// be a pure function of its inputs: a change in it is a changed header.
func (s *Server) systemPrompt(cwd, mode, approval string) string {
	var b strings.Builder
	b.WriteString("You are reel, a coding agent working in the user's workspace through tools.\n\n")
	fmt.Fprintf(&b, "Working directory: %s\n\n", cwd)
	b.WriteString("## Sandbox\n\n")
	fmt.Fprintf(&b, "Current sandbox mode: %s. ", mode)
	if s.cfg.Sandbox != nil {
		b.WriteString(s.cfg.Sandbox.Describe(mode))
	} else {
		b.WriteString(defaultModeText(mode))
	}
	b.WriteString("\n")
	if mode != ModeFullAccess {
		b.WriteString("When a command or write is denied by the sandbox, the result starts with `[sandbox denied: mode " + mode + "]`.\n")
	}
	fmt.Fprintf(&b, "\nApproval policy: %s. ", approval)
	switch {
	case mode == ModeFullAccess:
		b.WriteString("Nothing needs approval in this mode.\n")
	case approval == ApprovalNever:
		b.WriteString("Approval prompts are disabled in this session: do not request escalation (do not set `sandbox_permissions`).\n")
	default:
		b.WriteString("If the user's task truly needs more access, retry that single call once with `sandbox_permissions` set to the mode it needs and a short `justification`; the user is asked to approve it.\n")
	}
	b.WriteString("\n## Working style\n\n")
	b.WriteString("- Use the tools to inspect before you change anything; prefer `edit` for small changes to existing files.\n")
	b.WriteString("- Paths may be absolute or relative to the working directory.\n")
	b.WriteString("- Keep answers short and say what you changed.\n")
	return b.String()
}

// assembleHeader builds the request header the next step would send.
func (s *Server) assembleHeader(cwd, mode, approval string) sessionlog.RequestHeader {
	return sessionlog.RequestHeader{
		Config: jsonObject("provider", s.cfg.Provider, "model", s.cfg.Model),
		System: s.systemPrompt(cwd, mode, approval),
		Tools:  s.toolsFor(mode).Schemas(),
	}
}
