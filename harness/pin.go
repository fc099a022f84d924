package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reel-agent/reel/agent/codemode"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// Pinned is the content a scenario's headers refer to: readable prompts
// and tool-schema lists by name.
type Pinned struct {
	Prompts map[string]string // name → Markdown
	Tools   map[string][]byte // name → indented JSON
}

func newPinned() *Pinned {
	return &Pinned{Prompts: map[string]string{}, Tools: map[string][]byte{}}
}

// pinState tracks, while a log is read in order, the session's sandbox
// mode and approval policy: what the agent's header depends on besides the
// (normalized) cwd, and so what names a pinned prompt or tool list.
type pinState struct {
	mode, approval string
}

func (st *pinState) observe(line []byte) {
	switch {
	case bytes.HasPrefix(line, []byte(`{"type":"sandbox/mode",`)):
		if e, err := sessionlog.DecodeEvent(line); err == nil {
			if d, err := sessionlog.DecodeData[sessionlog.SandboxModeData](&e); err == nil {
				st.mode = d.Mode
			}
		}
	case bytes.HasPrefix(line, []byte(`{"type":"approval/policy",`)):
		if e, err := sessionlog.DecodeEvent(line); err == nil {
			if d, err := sessionlog.DecodeData[sessionlog.ApprovalPolicyData](&e); err == nil {
				st.approval = d.Policy
			}
		}
	}
}

// PromptName is the pinned name of the system prompt written under a mode
// and approval policy, with "-network-off" when the network was off,
// "-code-mode" in code mode (which declares the tools to programs) and
// "-background" for a background subagent's (which has the report
// section).
func PromptName(mode, approval string, networkOff, codeMode, background bool) string {
	name := "system-" + orUnknown(mode) + "-approval-" + orUnknown(approval)
	if networkOff {
		name += "-network-off"
	}
	if codeMode {
		name += "-code-mode"
	}
	if background {
		name += "-background"
	}
	return name
}

// ToolsName is the pinned name of a tool list: its tool names in order
// (the tools of an MCP server as one part, mcp__SERVER-xN for its N
// tools, and the persistent terminal tools as terminal-xN, so that many
// tools do not make the name too long for a file), and whether the sandbox escalation arguments are offered.
// Descriptions and other schema details are the pinned content, not the
// name, so a refresh after such a change rewrites only the pinned file.
func ToolsName(compact []byte) string {
	var tools []struct {
		Name       string `json:"name"`
		Parameters struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"parameters"`
	}
	if json.Unmarshal(compact, &tools) != nil {
		return "tools-unparsable"
	}
	names := make([]string, 0, len(tools))
	escalation := false
	server, count := "", 0
	flush := func() {
		switch {
		case count > 0 && server == terminalGroup:
			names = append(names, fmt.Sprintf("%s-x%d", server, count))
		case count > 0:
			names = append(names, fmt.Sprintf("mcp__%s-x%d", server, count))
		}
		server, count = "", 0
	}
	for _, t := range tools {
		if strings.HasPrefix(t.Name, terminalGroup+"_") {
			if server != terminalGroup {
				flush()
				server = terminalGroup
			}
			count++
			continue
		}
		if rest, ok := strings.CutPrefix(t.Name, "mcp__"); ok {
			if s, _, ok := strings.Cut(rest, "__"); ok {
				if s != server {
					flush()
					server = s
				}
				count++
				continue
			}
		}
		flush()
		names = append(names, t.Name)
		if _, ok := t.Parameters.Properties["sandbox_permissions"]; ok {
			escalation = true
		}
	}
	flush()
	name := "tools-" + strings.Join(names, "-")
	if escalation {
		name += "-with-escalation"
	}
	return name
}

// terminalGroup names the persistent terminal tools' part of a pinned
// tool-list name (terminal_open, terminal_send, …).
const terminalGroup = "terminal"

func orUnknown(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

const (
	promptRef = "{{prompt:%s}}"
	toolsRef  = "{{tools:%s}}"
)

// pinLine replaces the system prompt and tools of a request/header event
// line by references, recording the content in p. Other lines pass through.
func pinLine(line []byte, st *pinState, p *Pinned) ([]byte, error) {
	st.observe(line)
	if !bytes.HasPrefix(line, []byte(`{"type":"request/header",`)) {
		return line, nil
	}
	e, err := sessionlog.DecodeEvent(line)
	if err != nil {
		return nil, err
	}
	d, err := sessionlog.DecodeData[sessionlog.RequestHeaderData](&e)
	if err != nil {
		return nil, err
	}
	h, err := sessionlog.ParseRequestHeader(d.Header)
	if err != nil {
		return nil, err
	}
	if h.System != "" && !strings.HasPrefix(h.System, "{{") {
		name := PromptName(st.mode, st.approval, strings.Contains(h.System, sandbox.NetworkOffNote),
			strings.Contains(h.System, codemode.PromptHeading), strings.Contains(h.System, tools.ReportSection))
		if prev, dup := p.Prompts[name]; dup && prev != h.System {
			return nil, fmt.Errorf("two different system prompts pin as %s in one run:\n%s", name, TextDiff(prev, h.System))
		}
		p.Prompts[name] = h.System
		h.System = fmt.Sprintf(promptRef, name)
	}
	if len(h.Tools) > 0 && h.Tools[0] == '[' {
		var compact bytes.Buffer
		if err := json.Compact(&compact, h.Tools); err != nil {
			return nil, err
		}
		name := ToolsName(compact.Bytes())
		var pretty bytes.Buffer
		_ = json.Indent(&pretty, compact.Bytes(), "", "  ")
		pretty.WriteByte('\n')
		if prev, dup := p.Tools[name]; dup && !bytes.Equal(prev, pretty.Bytes()) {
			return nil, fmt.Errorf("two different tool lists pin as %s in one run", name)
		}
		p.Tools[name] = pretty.Bytes()
		h.Tools = json.RawMessage(fmt.Sprintf("%q", fmt.Sprintf(toolsRef, name)))
	}
	e.Data = sessionlog.HeaderData(h, d.Reason)
	return e.AppendJSON(nil), nil
}

// refsIn lists the prompt and tools names a fixture log refers to.
func refsIn(log []byte) (prompts, tools []string) {
	for _, line := range bytes.Split(log, []byte("\n")) {
		prompts = append(prompts, refPattern(line, "{{prompt:")...)
		tools = append(tools, refPattern(line, "{{tools:")...)
	}
	return prompts, tools
}

func refPattern(line []byte, open string) []string {
	var out []string
	s := string(line)
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return out
		}
		s = s[i+len(open):]
		j := strings.Index(s, "}}")
		if j < 0 {
			return out
		}
		out = append(out, s[:j])
		s = s[j+2:]
	}
}
