package mcpreplay

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reel-agent/reel/agent/mcp"
	"github.com/reel-agent/reel/sessionlog"
)

// server is the replay of one recorded MCP server: an sdk.Server, reached
// over an in-memory transport, that lists the recorded tools and answers
// each call with the recorded result the client's tool announced
// (expect). It is an sdk.Transport for mcp.Options.Transport: each
// Connect starts a session of the server on a fresh in-memory pipe, or
// fails as the recorded server did.
type server struct {
	rec   sessionlog.MCPServerData
	sdk   *sdk.Server
	tools []*sdk.Tool

	mu      sync.Mutex
	pending []*expected
}

// expected is a call the client is about to send: the remote tool, the
// canonical arguments the recording sent, the recorded result.
type expected struct {
	remote string
	args   string
	call   recordedCall
	// refused is set when the server was sent a call of remote it could
	// not match while this one was pending.
	refused bool
}

var _ sdk.Transport = (*server)(nil)

// newServer makes the replay server of rec. The recorded tool data are
// what reel's client made of the server's listing; the server lists them
// so that the client makes the same of them again: the remote name, the
// title without the "SERVER: " prefix the client adds, the description,
// the read-only annotation and the input schema.
func newServer(rec sessionlog.MCPServerData) *server {
	s := &server{rec: rec}
	for _, t := range rec.Tools {
		st := &sdk.Tool{
			Name:        t.Remote,
			Title:       strings.TrimPrefix(t.Title, rec.Name+": "),
			Description: t.Description,
			InputSchema: json.RawMessage(t.Parameters),
		}
		if t.ReadOnly {
			st.Annotations = &sdk.ToolAnnotations{ReadOnlyHint: true}
		}
		s.tools = append(s.tools, st)
	}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "reel-mcp-replay", Version: "1"}, &sdk.ServerOptions{
		Logger:       slog.New(slog.DiscardHandler),
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	// tools/list and tools/call are answered here, before the SDK's own
	// handlers: the recorded schemas are served as recorded (the SDK's
	// AddTool insists on more than reel's client does), and every call
	// goes to answer.
	s.sdk.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			switch method {
			case "tools/list":
				return &sdk.ListToolsResult{Tools: s.tools}, nil
			case "tools/call":
				p, ok := req.GetParams().(*sdk.CallToolParamsRaw)
				if !ok {
					return nil, fmt.Errorf("mcp replay: server %q: tools/call with params %T", rec.Name, req.GetParams())
				}
				return s.answer(p.Name, p.Arguments), nil
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// Connect implements sdk.Transport: the client's end of a new in-memory
// pipe whose other end a session of the server serves. A server that
// failed in the recording fails here.
func (s *server) Connect(ctx context.Context) (sdk.Connection, error) {
	if s.rec.Error != "" {
		return nil, fmt.Errorf("mcp replay: the recorded server failed: %s", s.rec.Error)
	}
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	if _, err := s.sdk.Connect(ctx, serverEnd, nil); err != nil {
		return nil, fmt.Errorf("mcp replay: start the replay of server %q: %w", s.rec.Name, err)
	}
	return clientEnd.Connect(ctx)
}

// expect announces a call the client is about to send.
func (s *server) expect(e *expected) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, e)
}

// withdraw removes e if it is still pending (the server was never sent
// the call) and reports whether it was, and whether a call the server
// refused came meanwhile.
func (s *server) withdraw(e *expected) (pending, refused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.pending, e)
	if i < 0 {
		return false, e.refused
	}
	s.pending = slices.Delete(s.pending, i, i+1)
	return true, e.refused
}

// answer serves one tools/call: the first pending call of the tool with
// the same canonical arguments gets its recorded result. Anything else is
// an error result naming what the server received and what was expected.
func (s *server) answer(name string, raw json.RawMessage) *sdk.CallToolResult {
	got := string(raw)
	if canon, err := mcp.CheckArguments(name, raw, mcp.DefaultMaxArgBytes); err == nil {
		got = string(canon)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var others []string
	for i, e := range s.pending {
		if e.remote != name {
			continue
		}
		if e.args == got {
			s.pending = slices.Delete(s.pending, i, i+1)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: e.call.text}}, IsError: e.call.isErr}
		}
		e.refused = true
		others = append(others, fmt.Sprintf("%s (call %q)", e.call.args, e.call.id))
	}
	msg := fmt.Sprintf("mcp replay: the server %q was called with %s %s, but the recording", s.rec.Name, name, got)
	if len(others) == 0 {
		msg += " has no call of it pending"
	} else {
		msg += " called it with " + strings.Join(others, ", ")
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: msg}}, IsError: true}
}
