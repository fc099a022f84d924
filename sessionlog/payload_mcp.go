package sessionlog

import "encoding/json"

// TypeMCPConnect is reel's record of a session connecting its MCP servers
// (session/new, session/load), written before the first request that
// offers their tools: which servers connected with which tools, and which
// failed. dsh has none; other readers keep it verbatim. Log-only (no
// surface op).
const TypeMCPConnect = "mcp/connect"

// MCPConnectData is the data of mcp/connect: every configured server, in
// configuration order.
type MCPConnectData struct {
	Servers []MCPServerData `json:"servers"`
}

// MCPServerData is one MCP server of mcp/connect: its configured name and
// transport ("stdio", "http", "sse"), and either the tools it contributes
// or, when it could not be used, Error (what the user was told).
type MCPServerData struct {
	Name      string        `json:"name"`
	Transport string        `json:"transport"`
	Error     string        `json:"error,omitempty"`
	Tools     []MCPToolData `json:"tools"`
}

// MCPToolData is one tool of an MCP server: Name is the name the model
// calls (mcp__SERVER__TOOL), Remote the server's own name for it, Title the
// one-line title the client is shown, ReadOnly the server's read-only hint,
// Description and Parameters the schema offered to the model (Parameters
// compact JSON), as the server listed it when the session connected.
type MCPToolData struct {
	Name        string          `json:"name"`
	Remote      string          `json:"remote"`
	Title       string          `json:"title"`
	ReadOnly    bool            `json:"readOnly,omitempty"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// AppendJSON appends {"servers":[…]}.
func (d MCPConnectData) AppendJSON(b []byte) []byte {
	b = append(b, `{"servers":[`...)
	for i, s := range d.Servers {
		if i > 0 {
			b = append(b, ',')
		}
		b = s.AppendJSON(b)
	}
	return append(b, "]}"...)
}

// AppendJSON appends {"name","transport","error"?,"tools":[…]}.
func (d MCPServerData) AppendJSON(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = AppendString(b, d.Name)
	b = append(b, `,"transport":`...)
	b = AppendString(b, d.Transport)
	if d.Error != "" {
		b = append(b, `,"error":`...)
		b = AppendString(b, d.Error)
	}
	b = append(b, `,"tools":[`...)
	for i, t := range d.Tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = AppendString(b, t.Name)
		b = append(b, `,"remote":`...)
		b = AppendString(b, t.Remote)
		b = append(b, `,"title":`...)
		b = AppendString(b, t.Title)
		if t.ReadOnly {
			b = append(b, `,"readOnly":true`...)
		}
		b = append(b, `,"description":`...)
		b = AppendString(b, t.Description)
		b = append(b, `,"parameters":`...)
		if len(t.Parameters) == 0 {
			b = append(b, "null"...)
		} else {
			b = append(b, t.Parameters...)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}
