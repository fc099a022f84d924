package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/internal/strictjson"
)

// maxErrorBytes cuts a server's error message shown to the model.
const maxErrorBytes = 4 << 10

// maxKeyBytes cuts the keys and the path a refusal of arguments names.
const maxKeyBytes = 512

// Tool is one tool of a connected MCP server, as a reel tool. Its name is
// the reel name (mcp__SERVER__TOOL, see [ToolName]); the server knows it by
// RemoteName. It is immutable; Run may be called concurrently.
type Tool struct {
	srv    *server
	name   string
	remote string
	title  string
	schema tools.Schema
	ann    *sdk.ToolAnnotations
}

var _ tools.Tool = (*Tool)(nil)

// newTool makes the reel tool of t.
func newTool(srv *server, t *sdk.Tool, name string, params json.RawMessage) *Tool {
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	if title == "" {
		title = t.Name
	}
	desc := t.Description
	if desc == "" {
		desc = fmt.Sprintf("The tool %s of the MCP server %s.", strconv.Quote(t.Name), strconv.Quote(srv.cfg.Name))
	}
	return &Tool{
		srv: srv, name: name, remote: t.Name,
		title:  field(srv.cfg.Name + ": " + title),
		schema: tools.Schema{Name: name, Description: cutText(desc, MaxDescriptionBytes), Parameters: params},
		ann:    t.Annotations,
	}
}

// Name returns the reel name of the tool.
func (t *Tool) Name() string { return t.name }

// Schema returns the tool's schema: its reel name, the server's
// description (cut to MaxDescriptionBytes) and the server's input schema
// as compact JSON with sorted keys.
func (t *Tool) Schema() tools.Schema {
	s := t.schema
	s.Parameters = append(json.RawMessage(nil), s.Parameters...)
	return s
}

// Server returns the configured name of the tool's server.
func (t *Tool) Server() string { return t.srv.cfg.Name }

// RemoteName returns the name the server knows the tool by.
func (t *Tool) RemoteName() string { return t.remote }

// Title returns a one-line title for the client: "SERVER: TITLE", the
// title being the server's title of the tool, else its name.
func (t *Tool) Title() string { return t.title }

// Kind returns tools.KindOther: what an MCP tool does is unknown to reel.
func (t *Tool) Kind() tools.Kind { return tools.KindOther }

var _ tools.Describer = (*Tool)(nil)

// Describe implements tools.Describer: every call is shown with the
// tool's Title and kind other; an MCP tool names no files reel knows of.
func (t *Tool) Describe(json.RawMessage) (string, tools.Kind, []tools.Location) {
	return t.title, tools.KindOther, nil
}

// ReadOnlyHint reports whether the server declares the tool read-only. It
// is the server's claim, not a guarantee.
func (t *Tool) ReadOnlyHint() bool { return t.ann != nil && t.ann.ReadOnlyHint }

// Run calls the tool with the model's arguments. env is used only for its
// MaxInlineBytes (it may be nil).
//
// The arguments go through [CheckArguments] (a JSON object of at most
// Options.MaxArgBytes, empty or null counting as {}, no repeated or
// case-colliding key at any depth, bounded nesting); a refusal is an
// *tools.ArgError and the server is not called. The server is sent the
// canonical encoding CheckArguments returns, which is args itself when
// args came from [Tool.Arguments]. The call ends when ctx does: the server is
// sent notifications/cancelled, Run returns at once with an error wrapping
// ctx.Err() (and an IsError result saying so). The result's content is
// rendered to text (see the package documentation) and cut to
// env.MaxInlineBytes (else Options.MaxResultBytes) with a notice; the
// server's isError is carried over. A failure of the call itself (the
// server closed or gone, a JSON-RPC error) is an IsError result naming the
// server, never a Go error.
func (t *Tool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	raw, err := t.checkArgs(args)
	if err != nil {
		return tools.Result{}, err
	}
	res := tools.Result{Kind: tools.KindOther, Title: t.title}
	srv := t.srv
	if srv.closed.Load() {
		res.IsError = true
		res.Text = fmt.Sprintf("The MCP server %s is closed; the tool %s was not called.", strconv.Quote(srv.cfg.Name), strconv.Quote(t.remote))
		return res, nil
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(srv.life, cancel)()
	out, err := srv.session.CallTool(cctx, &sdk.CallToolParams{Name: t.remote, Arguments: raw})
	switch {
	case err == nil && out != nil:
		// A result that arrived is reported even if ctx ended meanwhile:
		// the call did run.
		limit := srv.maxResultBytes
		if env != nil && env.MaxInlineBytes > 0 {
			limit = env.MaxInlineBytes
		}
		res.Text = render(out, limit)
		res.IsError = out.IsError
	case ctx.Err() != nil:
		res.IsError = true
		res.Text = fmt.Sprintf("The call of the MCP tool %s was cancelled; the server %s was told to stop it.", strconv.Quote(t.remote), strconv.Quote(srv.cfg.Name))
		return res, fmt.Errorf("mcp: %s: %w", t.name, ctx.Err())
	case err != nil:
		res.IsError = true
		res.Text = t.failure(err)
	default:
		res.IsError = true
		res.Text = fmt.Sprintf("The MCP server %s returned no result for the tool %s.", strconv.Quote(srv.cfg.Name), strconv.Quote(t.remote))
	}
	return res, nil
}

// Arguments is the one parse of a call's arguments (see [CheckArguments]
// with Options.MaxArgBytes): the bytes it returns are what the user is
// shown and, passed to Run, exactly what the server receives.
func (t *Tool) Arguments(args json.RawMessage) (json.RawMessage, error) {
	return CheckArguments(t.name, args, t.srv.maxArgBytes)
}

// checkArgs is Run's parse of its arguments: CheckArguments, which given
// its own result returns the same bytes.
func (t *Tool) checkArgs(args json.RawMessage) (json.RawMessage, error) {
	return t.Arguments(args)
}

// CheckArguments is the one strict parse of the model's arguments for the
// MCP tool named tool, shared by the permission request and the call: they
// must be at most maxBytes, valid UTF-8 and a JSON object (empty and null
// count as {}), with no key given twice in any object at any depth (also
// when one spelling escapes what the other writes plainly), no two keys of
// one object that differ only in case, and no more than [MaxArgDepth]
// nested objects and arrays. A refusal is a *tools.ArgError naming the
// keys and where they are; nothing is to be asked or sent then. Otherwise
// the result is the canonical encoding of the one decoding (no whitespace,
// keys sorted, strings escaped as json.Marshal does, numbers as written),
// which both json.Marshal and the SDK (no HTML escaping) send unchanged,
// and which CheckArguments returns unchanged.
func CheckArguments(tool string, args json.RawMessage, maxBytes int) (json.RawMessage, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxArgBytes
	}
	if len(args) > maxBytes {
		return nil, &tools.ArgError{Tool: tool, Msg: fmt.Sprintf("the arguments are %d bytes, more than the %d-byte limit", len(args), maxBytes)}
	}
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage("{}"), nil
	}
	if !utf8.Valid(trimmed) {
		return nil, &tools.ArgError{Tool: tool, Msg: "the arguments are not valid UTF-8"}
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, &tools.ArgError{Tool: tool, Msg: "the arguments must be a JSON object"}
	}
	v, err := strictjson.Parse(tool, trimmed)
	if err == nil {
		var canon []byte
		if canon, err = v.Canonical(MaxArgDepth); err == nil {
			return canon, nil
		}
	}
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return nil, &tools.ArgError{Tool: tool, Msg: "the arguments could not be read", Err: err}
	}
	// Keys and paths are the model's: quoted, and cut to a readable size.
	msg := cutText(se.Msg, maxKeyBytes)
	if se.Path != "" {
		msg += " in " + strconv.Quote(cutText(se.Path, maxKeyBytes))
	}
	if se.Line > 0 {
		msg += fmt.Sprintf(" (byte %d of line %d)", se.Column, se.Line)
	}
	switch {
	case errors.Is(err, strictjson.ErrDuplicateField):
		msg += "; a key may appear once in an object, spelled one way (not repeated, escaped differently or in another case). Nothing was sent to the server"
	case errors.Is(err, strictjson.ErrBadValue):
		msg += "; objects and arrays may nest that deep at most. Nothing was sent to the server"
	}
	return nil, &tools.ArgError{Tool: tool, Msg: msg}
}

// failure words a call that got no result.
func (t *Tool) failure(err error) string {
	srv := t.srv
	server, tool := strconv.Quote(srv.cfg.Name), strconv.Quote(t.remote)
	var rpc *jsonrpc.Error
	switch {
	case srv.life.Err() != nil:
		return fmt.Sprintf("The MCP server %s was closed while the tool %s ran; the call did not complete.", server, tool)
	case errors.As(err, &rpc):
		code := ""
		if rpc.Code != 0 {
			code = fmt.Sprintf(" (code %d)", rpc.Code)
		}
		return fmt.Sprintf("The MCP server %s answered the call of %s with an error%s: %s", server, tool, code, cutText(field(rpc.Message), maxErrorBytes))
	case errors.Is(err, sdk.ErrConnectionClosed):
		if srv.proc != nil {
			if st := srv.proc.exitStatus(); st != "" {
				return fmt.Sprintf("The MCP server %s is no longer running (%s); the tool %s was not completed.", server, st, tool)
			}
		}
		return fmt.Sprintf("The connection to the MCP server %s is closed; the tool %s was not completed.", server, tool)
	}
	return fmt.Sprintf("The call of the MCP tool %s on the server %s failed: %s", tool, server, cutText(field(err.Error()), maxErrorBytes))
}
