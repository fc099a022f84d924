package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reel-agent/reel/agent/codemode"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// Approval policies.
const (
	ApprovalOnRequest = "on-request"
	ApprovalNever     = "never"
)

func defaultModeText(mode sandbox.Mode) string {
	switch mode {
	case sandbox.ReadOnly:
		return "Commands and file tools must not modify anything on disk; writes are denied."
	case sandbox.WorkspaceWrite:
		return "Commands and file tools may write only inside the working directory and the temp directory; everything else is read-only."
	}
	return "Commands and file tools are not confined."
}

// systemPrompt renders the system prompt for a session under mode. It must
// be a pure function of its inputs: a change in it is a changed header.
func (e *Engine) systemPrompt(cwd string, mode sandbox.Mode, approval string) string {
	var b strings.Builder
	b.WriteString("You are reel, a coding agent working in the user's workspace through tools.\n\n")
	fmt.Fprintf(&b, "Working directory: %s\n\n", cwd)
	b.WriteString("## Sandbox\n\n")
	fmt.Fprintf(&b, "Current sandbox mode: %s. ", mode)
	if e.cfg.Sandbox != nil {
		b.WriteString(e.cfg.Sandbox.Describe(mode))
	} else {
		b.WriteString(defaultModeText(mode))
	}
	b.WriteString("\n")
	if mode != sandbox.DangerFullAccess {
		b.WriteString("When a command or write is denied by the sandbox, the result starts with `[sandbox denied: mode " + string(mode) + "]`.\n")
	}
	fmt.Fprintf(&b, "\nApproval policy: %s. ", approval)
	switch {
	case mode == sandbox.DangerFullAccess:
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

// ToolSchemas are the tool schemas the requests of a new session carry in
// the default mode (without MCP servers): what a provider may prepare for
// before the first prompt (reel acp warms its request encoding with them).
func (e *Engine) ToolSchemas() json.RawMessage {
	if e.cfg.CodeMode {
		return codemode.Tool{}.WireSchemas()
	}
	return e.toolsFor(e.cfg.Mode).Schemas()
}

// assembleHeader builds the request header the session's next step would
// send under mode and approval.
func (s *Session) assembleHeader(mode sandbox.Mode, approval string) sessionlog.RequestHeader {
	e := s.eng
	system := e.systemPrompt(s.cwd, mode, approval)
	s.mu.Lock()
	if s.background {
		system += "\n## Background subagent\n\n" + tools.ReportSection + "\n"
	}
	s.mu.Unlock()
	schemas := s.toolsFor(mode).Schemas()
	if e.cfg.CodeMode {
		system += "\n" + codemode.PromptSection(schemas, e.cfg.CodeLimits)
		schemas = codemode.Tool{}.WireSchemas()
	}
	return sessionlog.RequestHeader{
		Config: s.requestContext().AppendJSON(nil),
		System: system,
		Tools:  schemas,
	}
}
