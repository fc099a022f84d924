package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/tools"
)

// Tool is the lsp tool: precise code navigation (definition, references,
// implementation, hover) from the language server of the file's language,
// started for the session's workspace on the first call that needs it.
// Its zero value is not usable: make it with NewTool.
type Tool struct {
	c Config
}

var (
	_ tools.Tool      = (*Tool)(nil)
	_ tools.Describer = (*Tool)(nil)
)

// NewTool returns the tool for c (defaults filled in), or c's error.
func NewTool(c Config) (*Tool, error) {
	r, err := c.resolved()
	if err != nil {
		return nil, err
	}
	return &Tool{c: r}, nil
}

// Name returns "lsp".
func (*Tool) Name() string { return ToolName }

// Schema returns the reference's schema of the tool.
func (*Tool) Schema() tools.Schema {
	return tools.Schema{
		Name: ToolName,
		Description: "Query a language server for precise code navigation. operation is one of goToDefinition, findReferences, goToImplementation, hover. " +
			"line and character are one-based UTF-16 cursor coordinates. findReferences includes the declaration.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"operation":{"type":"string","description":"goToDefinition, findReferences, goToImplementation, or hover.","enum":["goToDefinition","findReferences","goToImplementation","hover"]},` +
			`"file_path":{"type":"string","description":"The source file to query, relative to the workspace or absolute."},` +
			`"line":{"type":"number","description":"One-based line of the cursor."},` +
			`"character":{"type":"number","description":"One-based UTF-16 column of the cursor."}},` +
			`"required":["operation","file_path","line","character"]}`),
	}
}

// Describe announces a call: "LSP goToDefinition subject.ts:1:7", a
// search, at the file's line.
func (*Tool) Describe(raw json.RawMessage) (string, tools.Kind, []tools.Location) {
	a, err := ParseArgs(raw)
	if err != nil {
		return ToolName, tools.KindSearch, nil
	}
	return title(a), tools.KindSearch, []tools.Location{{Path: a.FilePath, Line: a.Line}}
}

// title is a call's title.
func title(a Args) string {
	return fmt.Sprintf("LSP %s %s:%d:%d", a.Operation, a.FilePath, a.Line, a.Character)
}

// Run answers one call. The file must lie beneath the session's cwd, as
// the kernel resolves it (tools.ReadBeneath): reel reads it and sends its
// text to the server, which runs in the workspace under the session's
// sandbox mode. Failures the model can act on (no server for the file, a
// server not installed, a file outside the workspace, a server that hung,
// died or broke the protocol) are error results; a cancelled call is an
// error.
func (t *Tool) Run(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := ParseArgs(raw)
	if err != nil {
		return tools.Result{}, err
	}
	if env == nil || !filepath.IsAbs(env.Cwd) {
		return tools.Result{}, fmt.Errorf("%w: no cwd", tools.ErrEnv)
	}
	root := filepath.Clean(env.Cwd)
	p := a.FilePath
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	res := tools.Result{Kind: tools.KindSearch, Title: title(a), Locations: []tools.Location{{Path: p, Line: a.Line}}}
	fail := func(text string) (tools.Result, error) {
		res.Text, res.IsError = text, true
		return res, nil
	}
	cfg, lang, ok := t.c.serverFor(p)
	if !ok {
		return fail(fmt.Sprintf("no language server is configured for %q files (lsp handles %s)", filepath.Ext(p), strings.Join(t.c.extensions(), ", ")))
	}
	text, found, err := tools.ReadBeneath(root, p, int64(t.c.MaxDocumentBytes))
	switch {
	case errors.Is(err, tools.ErrOutsideRoot):
		return fail(fmt.Sprintf("%s is outside the workspace %s: lsp reads files beneath the workspace only", a.FilePath, root))
	case errors.Is(err, fs.ErrNotExist):
		return fail("file not found: " + p)
	case errors.Is(err, tools.ErrNotRegular):
		return fail(p + " is not a regular file")
	case errors.Is(err, tools.ErrTooLarge):
		return fail(fmt.Sprintf("%s is larger than the %d bytes lsp sends to a language server", p, t.c.MaxDocumentBytes))
	case err != nil:
		return fail(fmt.Sprintf("cannot read %s: %v", p, err))
	}
	if !utf8.Valid(text) {
		return fail(p + " is not UTF-8 text")
	}
	ctx, cancel := context.WithTimeout(ctx, t.c.Timeout)
	defer cancel()
	pl, err := t.poolOf(env)
	if err != nil {
		return tools.Result{}, err
	}
	if env.Keep == nil {
		defer pl.Close()
	}
	srv, err := pl.get(ctx, cfg, &t.c, env, root)
	if err == nil {
		var answer json.RawMessage
		answer, err = srv.query(ctx, a.Operation, fileURI(found), lang, string(text), position{Line: a.Line - 1, Character: a.Character - 1})
		if err == nil {
			return t.render(res, a.Operation, answer, srv.roots)
		}
	}
	if cerr := context.Cause(ctx); errors.Is(cerr, context.Canceled) {
		return tools.Result{}, fmt.Errorf("lsp %s %s: %w", a.Operation, a.FilePath, cerr)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, ErrServer) {
		err = fmt.Errorf("%w: the %s language server did not answer within %s; it was stopped (the next call starts it again)", ErrServer, cfg.Name, t.c.Timeout)
	}
	return fail(strings.TrimPrefix(err.Error(), "lsp: "))
}

// render turns the server's answer into the result's text.
func (t *Tool) render(res tools.Result, op string, answer json.RawMessage, roots []string) (tools.Result, error) {
	if op == OpHover {
		h, err := decodeHover(answer)
		if err != nil {
			res.Text, res.IsError = strings.TrimPrefix(err.Error(), "lsp: "), true
			return res, nil
		}
		res.Text = formatHover(h, t.c.MaxResultChars)
		return res, nil
	}
	locs, err := decodeLocations(answer)
	if err != nil {
		res.Text, res.IsError = strings.TrimPrefix(err.Error(), "lsp: "), true
		return res, nil
	}
	res.Text = formatLocations(locs, roots, t.c.MaxLocations, t.c.MaxResultChars)
	return res, nil
}

// poolOf returns the session's pool (env.Keep), or a pool of this call
// alone.
func (t *Tool) poolOf(env *tools.Env) (*pool, error) {
	if env.Keep == nil {
		return &pool{}, nil
	}
	r, err := env.Keep.Get(keepKey, func() io.Closer { return &pool{} })
	if err != nil {
		return nil, err
	}
	pl, ok := r.(*pool)
	if !ok {
		return nil, fmt.Errorf("lsp: the session keeps %T under %q", r, keepKey)
	}
	return pl, nil
}
