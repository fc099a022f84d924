package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/reel-agent/reel/harness/scenario"
)

// PromptQueued sends session/prompt and returns once the frame is
// written, after creating the step's path (when given); the answer is
// awaited like promptAsync's (waitForTurnEnd, or the end of the
// process).
func (d *driver) PromptQueued(ctx context.Context, st scenario.Step) error {
	id, err := d.sessionID(st.Session)
	if err != nil {
		return err
	}
	wait, err := d.p.client.Dispatch(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": st.Prompt()})
	if err != nil {
		return err
	}
	p := d.p
	p.pending.Add(1)
	go func() {
		defer p.pending.Done()
		wctx, cancel := context.WithTimeout(context.Background(), d.timeout())
		defer cancel()
		if err := wait(wctx, nil); err != nil {
			p.pmu.Lock()
			p.perr = errors.Join(p.perr, err)
			p.pmu.Unlock()
		}
	}()
	return d.touch(st.Path)
}

// touch creates path (relative to the run's cwd) when it is not empty.
func (d *driver) touch(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(d.run.Cwd, filepath.FromSlash(path)), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	return f.Close()
}

// Steer waits for the step's ready file, sends _session/steering with the
// step's text, requires the answer "injected", then creates the step's
// path (when given) so the turn's command can go on.
func (d *driver) Steer(ctx context.Context, st scenario.Step) error {
	id, err := d.sessionID(st.Session)
	if err != nil {
		return err
	}
	if err := waitForFile(ctx, filepath.Join(d.run.Cwd, filepath.FromSlash(st.WaitForFile.Path))); err != nil {
		return err
	}
	var resp struct {
		Outcome string `json:"outcome"`
	}
	params := map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": st.Text}}}
	if err := d.p.client.Call(ctx, "_session/steering", params, &resp); err != nil {
		return err
	}
	if resp.Outcome != "injected" {
		return fmt.Errorf("_session/steering answered outcome %q, want injected", resp.Outcome)
	}
	return d.touch(st.Path)
}

// SetConfigOption sends session/set_config_option; with ExpectError the
// answer must be a JSON-RPC error.
func (d *driver) SetConfigOption(ctx context.Context, st scenario.Step) error {
	id, err := d.sessionID(st.Session)
	if err != nil {
		return err
	}
	err = d.p.client.Call(ctx, "session/set_config_option", map[string]any{"sessionId": id, "configId": st.ConfigID, "value": st.Value}, nil)
	if !st.ExpectError {
		return err
	}
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) {
		return nil
	}
	if err == nil {
		return fmt.Errorf("session/set_config_option %s=%s succeeded, but the scenario expects an error", st.ConfigID, st.Value)
	}
	return err
}
