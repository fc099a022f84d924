package acpcmd_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
)

// TestModelPicker: through the real binary, --models offers a model
// picker (a session config option of category model); picking a model
// routes the next request to it (the stand-in checks each request's
// model), logs the choice and a change header, survives a restart, and a
// model not offered is invalid params.
func TestModelPicker(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	script := &standin.Script{Responses: []standin.Response{
		{Text: "one", Expect: &standin.Expect{Model: "small"}},
		{Text: "two", Expect: &standin.Expect{Model: "large"}},
		{Text: "three", Expect: &standin.Expect{Model: "large"}},
	}}
	url, _ := standinURL(t, script)
	args := []string{"acp", "--state-dir", state, "--mode", "read-only", "--provider", "deepseek", "--base-url", url, "--model", "small", "--models", "large, small"}
	p := startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	res, _ := p.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	var created struct {
		SessionID     string            `json:"sessionId"`
		ConfigOptions []json.RawMessage `json:"configOptions"`
	}
	// The options: the mode (mirrored), then the model.
	if err := json.Unmarshal(res, &created); err != nil || len(created.ConfigOptions) != 2 {
		t.Fatalf("session/new %s", res)
	}
	opt := string(created.ConfigOptions[1])
	for _, want := range []string{`"id":"model"`, `"category":"model"`, `"currentValue":"small"`, `"value":"small"`, `"value":"large"`} {
		if !strings.Contains(opt, want) {
			t.Errorf("config option %s lacks %s", opt, want)
		}
	}
	sid := created.SessionID
	if stop, _ := p.prompt(sid, "first"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	set := func(value string) frame {
		resp, _ := p.await(p.request("session/set_config_option", map[string]any{"sessionId": sid, "configId": "model", "value": value}))
		return resp
	}
	if resp := set("huge"); resp.Error == nil || !strings.Contains(resp.raw, `model \"huge\" is not offered`) {
		t.Errorf("picking a model not offered: %s", resp.raw)
	}
	if resp := set("large"); resp.Error != nil || !strings.Contains(resp.raw, `"currentValue":"large"`) {
		t.Fatalf("set_config_option: %s", resp.raw)
	}
	if stop, _ := p.prompt(sid, "second"); stop != "end_turn" {
		t.Fatalf("stopReason %q (stderr: %s)", stop, p.stderr.String())
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	p = startProc(t, dir, baseEnv(t), args...)
	p.initialize()
	loaded, _ := p.call("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
	if !strings.Contains(string(loaded), `"currentValue":"large"`) {
		t.Errorf("session/load after a restart: %s", loaded)
	}
	if stop, _ := p.prompt(sid, "third"); stop != "end_turn" {
		t.Fatalf("stopReason %q after load", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var headers []string
	for _, e := range logEvents(t, state, sid) {
		switch e.Type {
		case sessionlog.TypeModelSelected:
			headers = append(headers, "selected "+string(e.Data))
		case sessionlog.TypeRequestHeader:
			d, err := sessionlog.DecodeData[sessionlog.RequestHeaderData](&e)
			if err != nil {
				t.Fatal(err)
			}
			headers = append(headers, d.Reason)
		}
	}
	if got := strings.Join(headers, ","); got != `initial,selected {"model":"large","source":"client"},change,resume` {
		t.Errorf("headers and choices: %s", got)
	}
}
