package sessionlog

// The approval audit pair, as dsh writes it: a question put to whoever
// approves the session's tool calls, and its outcome, paired by id. Both
// are log-only (no surface op) and lie inside the turn that asked.
const (
	TypeApprovalAsked   = "approval/asked"
	TypeApprovalDecided = "approval/decided"
)

// The outcomes of approval/decided: dsh's closed set, and reel's two
// session-wide answers (an editor's "always" options, offered for MCP
// tools), which dsh readers keep as unknown strings.
const (
	OutcomeAllowedOnce    = "allowed-once"
	OutcomeRejected       = "rejected"
	OutcomeCancelled      = "cancelled"
	OutcomeUnavailable    = "unavailable"
	OutcomeAllowedAlways  = "allowed-always"
	OutcomeRejectedAlways = "rejected-always"
)

// ApprovalAskedData is the data of approval/asked: question ID is about a
// call (CallID, omitted when none) of ToolName; Reason says why it is
// asked (omitted when empty). For an MCP tool, MCPServer and MCPTool are
// its server's configured name and the tool's own name on that server
// (omitted for reel's tools): a session-wide answer holds for that pair,
// never for ToolName, which two pairs can share across connections.
type ApprovalAskedData struct {
	ID        string `json:"id"`
	ToolName  string `json:"toolName"`
	CallID    string `json:"callId,omitempty"`
	Reason    string `json:"reason,omitempty"`
	MCPServer string `json:"mcpServer,omitempty"`
	MCPTool   string `json:"mcpTool,omitempty"`
}

// AppendJSON appends {"id","toolName","callId"?,"reason"?,"mcpServer"?,"mcpTool"?}.
func (d ApprovalAskedData) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, d.ID)
	b = append(b, `,"toolName":`...)
	b = AppendString(b, d.ToolName)
	if d.CallID != "" {
		b = append(b, `,"callId":`...)
		b = AppendString(b, d.CallID)
	}
	if d.Reason != "" {
		b = append(b, `,"reason":`...)
		b = AppendString(b, d.Reason)
	}
	if d.MCPServer != "" {
		b = append(b, `,"mcpServer":`...)
		b = AppendString(b, d.MCPServer)
	}
	if d.MCPTool != "" {
		b = append(b, `,"mcpTool":`...)
		b = AppendString(b, d.MCPTool)
	}
	return append(b, '}')
}

// ApprovalDecidedData is the data of approval/decided: question ID ended
// with Outcome (one of the Outcome constants).
type ApprovalDecidedData struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
}

// AppendJSON appends {"id","outcome"}.
func (d ApprovalDecidedData) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, d.ID)
	b = append(b, `,"outcome":`...)
	b = AppendString(b, d.Outcome)
	return append(b, '}')
}
