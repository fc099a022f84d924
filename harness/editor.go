package harness

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/reel-agent/reel/harness/rpcclient"
	"github.com/reel-agent/reel/harness/scenario"
)

// editorFS is the file system of the editor a scenario's client plays
// (input.json editorBuffers): unsaved buffers by absolute path over the
// run's cwd; reads of other paths come from disk, writes replace buffers.
// It lives for the whole run, across the agent's processes.
type editorFS struct {
	mu      sync.Mutex
	buffers map[string]string
}

var _ rpcclient.FileSystem = (*editorFS)(nil)

// newEditorFS returns the editor of sc run in cwd, nil when sc holds no
// buffers (the client then offers no file system).
func newEditorFS(sc *scenario.Scenario, cwd string) *editorFS {
	if sc.Input.EditorBuffers == nil {
		return nil
	}
	fs := &editorFS{buffers: map[string]string{}}
	for rel, text := range sc.Input.EditorBuffers {
		fs.buffers[filepath.Join(cwd, filepath.FromSlash(rel))] = text
	}
	return fs
}

// ReadTextFile implements rpcclient.FileSystem.
func (e *editorFS) ReadTextFile(_ context.Context, req rpcclient.ReadTextFileRequest) (string, error) {
	e.mu.Lock()
	text, ok := e.buffers[req.Path]
	e.mu.Unlock()
	if ok {
		return text, nil
	}
	b, err := os.ReadFile(req.Path)
	if err != nil {
		return "", &jsonrpc2.Error{Code: -32002, Message: "Resource not found: " + req.Path}
	}
	return string(b), nil
}

// WriteTextFile implements rpcclient.FileSystem.
func (e *editorFS) WriteTextFile(_ context.Context, req rpcclient.WriteTextFileRequest) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buffers[req.Path] = req.Content
	return nil
}

// initializeParams is what the harness client announces for sc: file
// system access when it plays an editor with buffers, form elicitation
// when it has elicitation answers.
func initializeParams(sc *scenario.Scenario) map[string]any {
	fs := sc.Input.EditorBuffers != nil
	caps := map[string]any{"fs": map[string]any{"readTextFile": fs, "writeTextFile": fs}, "terminal": false}
	if sc.Input.ElicitationAnswers != nil {
		caps["elicitation"] = map[string]any{"form": map[string]any{}}
	}
	return map[string]any{"protocolVersion": 1, "clientCapabilities": caps}
}
