package acpcmd_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
)

// gateCommand is a bash command that marks its start (gate-open) and
// then waits until the test opens the gate (creates go): a turn that
// holds still for as long as the test needs, with no timing in it.
const gateCommand = `touch gate-open; while [ ! -e go ]; do sleep 0.02; done; echo gated`

// gatedTurn is a stand-in response whose tool call runs gateCommand.
func gatedTurn(t *testing.T) standin.Response {
	return standin.Response{ToolCalls: []standin.ToolCall{{ID: "g1", Name: "bash",
		Arguments: jsonArgs(t, map[string]any{"command": gateCommand, "description": "wait for the test"})}}}
}

// waitGate waits until the gated command started in ws.
func waitGate(t *testing.T, ws string) {
	t.Helper()
	for {
		if _, err := os.Stat(filepath.Join(ws, "gate-open")); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// openGate lets the gated command finish.
func openGate(t *testing.T, ws string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// turnsProc starts reel acp on a stand-in with script, in ws.
func turnsProc(t *testing.T, script *standin.Script) (p *proc, ws, state, sid string) {
	t.Helper()
	dir, ws, state := workspace(t)
	url, _ := standinURL(t, script)
	p = startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "danger-full-access",
		"--provider", "deepseek", "--base-url", url, "--model", "standin")
	p.initialize()
	return p, ws, state, p.newSession(ws)
}

// stopReason decodes a prompt's response, failing on an error.
func stopReason(t *testing.T, f frame) string {
	t.Helper()
	if f.Error != nil {
		t.Fatalf("prompt answered with an error: %s", f.raw)
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal(f.Result, &r); err != nil {
		t.Fatalf("prompt result %s: %v", f.raw, err)
	}
	return r.StopReason
}

// loggedUserTexts lists the text of every user/message in the log, in order.
func loggedUserTexts(t *testing.T, events []sessionlog.Event) []string {
	t.Helper()
	var out []string
	for i := range events {
		if events[i].Type != sessionlog.TypeUserMessage {
			continue
		}
		m, err := sessionlog.DecodeData[sessionlog.UserMessage](&events[i])
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, c := range m.Content {
			b.WriteString(c.Text)
		}
		out = append(out, b.String())
	}
	return out
}

// responseOrder reads frames until every id in ids was answered and
// returns the ids in the order their answers came, with the answers.
func responseOrder(p *proc, ids ...json.RawMessage) ([]string, map[string]frame) {
	got := map[string]frame{}
	var order []string
	for len(got) < len(ids) {
		f := p.next()
		if !f.isResponse() {
			continue
		}
		for _, id := range ids {
			if sameID(f.ID, id) {
				got[string(id)] = f
				order = append(order, string(id))
			}
		}
	}
	return order, got
}

// TestQueuedPromptsRunInOrder: prompts sent while a turn runs are queued,
// not refused, and not allowed to cancel the running one (what the SDK
// does with a second session/prompt): each runs after the one before it,
// in the order sent, and each is answered when its own turn ends.
//
// Before the queue: the second prompt was answered -32600 "session … is
// busy with another prompt; cancel it or wait".
func TestQueuedPromptsRunInOrder(t *testing.T) {
	t.Parallel()
	script := &standin.Script{Responses: []standin.Response{
		gatedTurn(t),
		{Text: "one"},
		{Text: "two", Expect: &standin.Expect{LastUserContains: "second"}},
		{Text: "three", Expect: &standin.Expect{LastUserContains: "third"}},
	}}
	p, ws, state, sid := turnsProc(t, script)
	a := p.request("session/prompt", promptParams(sid, "first"))
	b := p.request("session/prompt", promptParams(sid, "second"))
	c := p.request("session/prompt", promptParams(sid, "third"))
	waitGate(t, ws)
	openGate(t, ws)
	order, got := responseOrder(p, a, b, c)
	if want := []string{string(a), string(b), string(c)}; !slices.Equal(order, want) {
		t.Fatalf("answers came in order %v, want %v", order, want)
	}
	for _, id := range []json.RawMessage{a, b, c} {
		if s := stopReason(t, got[string(id)]); s != "end_turn" {
			t.Errorf("prompt %s: stopReason %q, want end_turn", id, s)
		}
	}
	if texts, want := loggedUserTexts(t, logEvents(t, state, sid)), []string{"first", "second", "third"}; !slices.Equal(texts, want) {
		t.Errorf("user messages on the log %q, want %q", texts, want)
	}
}

// TestCancelCancelsQueuedPrompts: session/cancel cancels the running turn
// and every prompt queued before it (answered "cancelled", never run, not
// on the log); a prompt sent after the cancel runs.
func TestCancelCancelsQueuedPrompts(t *testing.T) {
	t.Parallel()
	script := &standin.Script{Responses: []standin.Response{
		gatedTurn(t),
		{Text: "after", Expect: &standin.Expect{LastUserContains: "later"}},
	}}
	p, ws, state, sid := turnsProc(t, script)
	a := p.request("session/prompt", promptParams(sid, "first"))
	b := p.request("session/prompt", promptParams(sid, "queued"))
	waitGate(t, ws)
	p.notify("session/cancel", map[string]any{"sessionId": sid})
	c := p.request("session/prompt", promptParams(sid, "later"))
	_, got := responseOrder(p, a, b, c)
	for id, want := range map[string]string{string(a): "cancelled", string(b): "cancelled", string(c): "end_turn"} {
		if s := stopReason(t, got[id]); s != want {
			t.Errorf("prompt %s: stopReason %q, want %q", id, s, want)
		}
	}
	if texts, want := loggedUserTexts(t, logEvents(t, state, sid)), []string{"first", "later"}; !slices.Equal(texts, want) {
		t.Errorf("user messages on the log %q, want %q (the cancelled queued prompt must not run)", texts, want)
	}
}

// TestPromptQueueBounded: at most maxQueued (8) prompts wait behind the
// running one; one more is refused with -32600 naming the bound, and the
// running turn is not disturbed. A client cannot send the internal
// queued-prompt method itself.
func TestPromptQueueBounded(t *testing.T) {
	t.Parallel()
	script := &standin.Script{Responses: []standin.Response{gatedTurn(t), {Text: "done"}}}
	p, ws, _, sid := turnsProc(t, script)
	first := p.request("session/prompt", promptParams(sid, "first"))
	var queued []json.RawMessage
	for range 8 {
		queued = append(queued, p.request("session/prompt", promptParams(sid, "queued")))
	}
	over := p.request("session/prompt", promptParams(sid, "one too many"))
	resp, _ := p.await(over)
	if resp.Error == nil || resp.Error.Code != -32600 || !strings.Contains(resp.Error.Message, "8 prompts queued") {
		t.Fatalf("the ninth queued prompt: got %s, want -32600 naming the bound of 8", resp.raw)
	}
	p.send(`{"jsonrpc":"2.0","id":77,"method":"_reel/queued_prompt","params":{"requestId":"1001","request":{"sessionId":"` + sid + `","prompt":[]}}}`)
	resp, _ = p.await(json.RawMessage(`77`))
	if resp.Error == nil || resp.Error.Code != -32601 {
		t.Fatalf("a client-sent internal method: got %s, want -32601", resp.raw)
	}
	waitGate(t, ws)
	p.notify("session/cancel", map[string]any{"sessionId": sid})
	_, got := responseOrder(p, append([]json.RawMessage{first}, queued...)...)
	for id, f := range got {
		if s := stopReason(t, f); s != "cancelled" {
			t.Errorf("prompt %s: stopReason %q, want cancelled", id, s)
		}
	}
}

// TestSteeringEntersTheRunningTurn: _session/steering puts a message into
// the running turn: answered "injected", it is on the log as a user
// message at the turn's next step (before that step's model call, which
// sees it), marked as steering; initialize advertises the extension. On
// an idle session it is refused, or answered promptRequired when the
// client asks so; malformed requests are invalid params.
func TestSteeringEntersTheRunningTurn(t *testing.T) {
	t.Parallel()
	script := &standin.Script{Responses: []standin.Response{
		gatedTurn(t),
		{Text: "steered", Expect: &standin.Expect{LastUserContains: "use tabs"}},
	}}
	dir, ws, state := workspace(t)
	url, _ := standinURL(t, script)
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "danger-full-access",
		"--provider", "deepseek", "--base-url", url, "--model", "standin")
	res, _ := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var init struct {
		Meta struct {
			Steering struct {
				Supported bool `json:"supported"`
			} `json:"steering"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res, &init); err != nil || !init.Meta.Steering.Supported {
		t.Errorf("initialize does not advertise _meta.steering.supported: %s", res)
	}
	sid := p.newSession(ws)
	steer := func(params map[string]any) frame {
		f, _ := p.await(p.request("_session/steering", params))
		return f
	}
	text := []any{map[string]any{"type": "text", "text": "use tabs"}}
	idle := map[string]any{"steering": map[string]any{"idleBehavior": "promptRequired"}}
	for _, tc := range []struct {
		name   string
		params map[string]any
		code   int
		frag   string
		result string
	}{
		{"idle, promptRequired", map[string]any{"sessionId": sid, "prompt": text, "_meta": idle}, 0, "", `{"outcome":"promptRequired","reason":"noRunningTurn"}`},
		{"idle", map[string]any{"sessionId": sid, "prompt": text}, -32600, "no turn is running", ""},
		{"unknown session", map[string]any{"sessionId": "ghost", "prompt": text}, -32602, "unknown session", ""},
		{"no blocks", map[string]any{"sessionId": sid, "prompt": []any{}}, -32602, "at least one text block", ""},
		{"image block", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "image", "mimeType": "image/png", "data": "AA=="}}}, -32602, "text blocks", ""},
		{"unknown idleBehavior", map[string]any{"sessionId": sid, "prompt": text, "_meta": map[string]any{"steering": map[string]any{"idleBehavior": "startNewTurn"}}}, -32602, "idleBehavior", ""},
		{"no session", map[string]any{"prompt": text}, -32602, "sessionId is required", ""},
	} {
		f := steer(tc.params)
		switch {
		case tc.code == 0 && (f.Error != nil || string(f.Result) != tc.result):
			t.Errorf("%s: got %s, want result %s", tc.name, f.raw, tc.result)
		case tc.code != 0 && (f.Error == nil || f.Error.Code != tc.code || !strings.Contains(f.raw, tc.frag)):
			t.Errorf("%s: got %s, want error %d with %q", tc.name, f.raw, tc.code, tc.frag)
		}
	}

	a := p.request("session/prompt", promptParams(sid, "format the file"))
	waitGate(t, ws)
	f := steer(map[string]any{"sessionId": sid, "prompt": text})
	if f.Error != nil || string(f.Result) != `{"outcome":"injected"}` {
		t.Fatalf("steering a running turn: got %s, want injected", f.raw)
	}
	openGate(t, ws)
	resp, _ := p.await(a)
	if s := stopReason(t, resp); s != "end_turn" {
		t.Fatalf("stopReason %q", s)
	}
	evs := logEvents(t, state, sid)
	step := 0
	found := false
	for i := range evs {
		switch evs[i].Type {
		case sessionlog.TypeStepStart:
			d, _ := sessionlog.DecodeData[sessionlog.StepData](&evs[i])
			step = d.Step
		case sessionlog.TypeUserMessage:
			m, _ := sessionlog.DecodeData[sessionlog.UserMessage](&evs[i])
			if len(m.Content) == 1 && m.Content[0].Text == "use tabs" {
				found = true
				if step != 2 || !strings.Contains(string(evs[i].Data), `"delivery":"steering"`) {
					t.Errorf("the steering message entered at step %d with %s, want step 2 marked as steering", step, evs[i].Data)
				}
			}
		}
	}
	if !found {
		t.Errorf("the steering message is not on the log: %q", loggedUserTexts(t, evs))
	}
}

// usageOf decodes the usage_update notifications among frames.
func usageOf(t *testing.T, frames []frame) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, f := range frames {
		if _, kind, _ := f.update(); kind != "usage_update" {
			continue
		}
		var p struct {
			Update map[string]any `json:"update"`
		}
		if err := json.Unmarshal(f.Params, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Update)
	}
	return out
}

// TestCostAndTurnUsage: usage_update carries the session's cumulative
// cost from the price table (the built-in one, then a --prices file that
// overrides it), the prompt response carries the turn's token usage, and
// a tool call's final update carries rawOutput. A price file that does
// not parse stops reel at start with an error naming it.
func TestCostAndTurnUsage(t *testing.T) {
	t.Parallel()
	usage := &standin.Usage{PromptTokens: 1000, CompletionTokens: 500, CacheHitTokens: 200}
	for _, tc := range []struct {
		name, prices string
		amount       float64
		currency     string
	}{
		{"built-in price", "", (800*1 + 200*0.1 + 500*2) / 1e6, "USD"},
		{"price file", `{"models":{"standin":{"input":2,"cachedInput":0,"output":4,"currency":"EUR"}}}`, (800*2 + 500*4) / 1e6, "EUR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := &standin.Script{Responses: []standin.Response{
				{ToolCalls: []standin.ToolCall{{ID: "e1", Name: "bash", Arguments: jsonArgs(t, map[string]any{"command": "echo hi", "description": "echo"})}}, Usage: usage},
				{Text: "done", Usage: usage},
			}}
			dir, ws, state := workspace(t)
			url, _ := standinURL(t, script)
			args := []string{"acp", "--state-dir", state, "--mode", "danger-full-access", "--provider", "deepseek", "--base-url", url, "--model", "standin"}
			if tc.prices != "" {
				file := filepath.Join(dir, "prices.json")
				if err := os.WriteFile(file, []byte(tc.prices), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--prices", file)
			}
			p := startProc(t, dir, baseEnv(t), args...)
			p.initialize()
			sid := p.newSession(ws)
			resp, frames := p.await(p.request("session/prompt", promptParams(sid, "echo")))
			if stopReason(t, resp) != "end_turn" {
				t.Fatal(resp.raw)
			}
			ups := usageOf(t, frames)
			if len(ups) != 2 {
				t.Fatalf("%d usage updates, want 2", len(ups))
			}
			cost, _ := ups[1]["cost"].(map[string]any)
			if amount, _ := cost["amount"].(float64); cost == nil || math.Abs(amount-2*tc.amount) > 1e-12 || cost["currency"] != tc.currency {
				t.Errorf("last usage_update cost %v, want %v %s (two calls)", ups[1]["cost"], 2*tc.amount, tc.currency)
			}
			var r struct {
				Usage map[string]int `json:"usage"`
			}
			_ = json.Unmarshal(resp.Result, &r)
			if want := map[string]int{"inputTokens": 2000, "outputTokens": 1000, "cachedReadTokens": 400, "totalTokens": 3000}; !maps.Equal(r.Usage, want) {
				t.Errorf("prompt response usage %v, want %v", r.Usage, want)
			}
			raw := ""
			for _, f := range frames {
				if strings.Contains(f.raw, `"status":"completed"`) && strings.Contains(f.raw, "tool_call_update") {
					raw = f.raw
				}
			}
			if !strings.Contains(raw, `"rawOutput":{"output":"hi\n`) {
				t.Errorf("the completed tool_call_update has no rawOutput with the output: %s", raw)
			}
		})
	}
	t.Run("bad price file", func(t *testing.T) {
		dir, _, state := workspace(t)
		file := filepath.Join(dir, "prices.json")
		if err := os.WriteFile(file, []byte(`{"models":{"m":{"input":-1,"cachedInput":0,"output":1,"currency":"USD"}}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--standin", filepath.Join(dir, "none.json"), "--prices", file)
		if code := p.finish(); code == 0 || !strings.Contains(p.stderr.String(), `model "m": "input" is -1`) {
			t.Errorf("exit %d, stderr %s; want a failure naming the bad price", code, p.stderr.String())
		}
	})
}

// TestStepLimitStopsWithMaxTurnRequests: a model that keeps calling tools
// is stopped at the step bound, and the prompt answers ACP's
// max_turn_requests (before: a -32603 error "the turn exceeded 100 steps").
func TestStepLimitStopsWithMaxTurnRequests(t *testing.T) {
	t.Parallel()
	var rs []standin.Response
	for i := range 100 {
		rs = append(rs, standin.Response{ToolCalls: []standin.ToolCall{{ID: fmt.Sprint("s", i), Name: "glob", Arguments: jsonArgs(t, map[string]any{"pattern": "*.none"})}}})
	}
	p, _, state, sid := turnsProc(t, &standin.Script{Responses: rs})
	resp, _ := p.await(p.request("session/prompt", promptParams(sid, "loop forever")))
	if s := stopReason(t, resp); s != "max_turn_requests" {
		t.Fatalf("stopReason %q, want max_turn_requests", s)
	}
	ends := 0
	for _, e := range logEvents(t, state, sid) {
		if e.Type == sessionlog.TypeTurnEnd {
			ends++
			if !strings.Contains(string(e.Data), "STEP_LIMIT") {
				t.Errorf("turn/end %s, want the end at the step limit", e.Data)
			}
		}
	}
	if ends != 1 {
		t.Errorf("%d turn ends, want 1", ends)
	}
}

// configOf returns the current value of each config option in a result or
// config_option_update holding "configOptions".
func configOf(t *testing.T, raw json.RawMessage) map[string]string {
	t.Helper()
	var r struct {
		ConfigOptions []struct {
			ID           string `json:"id"`
			CurrentValue string `json:"currentValue"`
		} `json:"configOptions"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	out := map[string]string{}
	for _, o := range r.ConfigOptions {
		out[o.ID] = o.CurrentValue
	}
	return out
}

// configUpdates returns the config_option_update notifications among
// frames, as option values.
func configUpdates(t *testing.T, frames []frame) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, f := range frames {
		if _, kind, _ := f.update(); kind == "config_option_update" {
			var p struct {
				Update json.RawMessage `json:"update"`
			}
			_ = json.Unmarshal(f.Params, &p)
			out = append(out, configOf(t, p.Update))
		}
	}
	return out
}

// TestConfigOptions: the session's config options are its mode (mirrored
// from the session mode), its model and the model's reasoning effort;
// each can be set, the change is followed by config_option_update (also a
// mode changed by session/set_mode), the legacy models field and
// session/set_model work, and the effort reaches the next request's
// header as a "change". Bad option ids and values are invalid params
// naming what is offered.
func TestConfigOptions(t *testing.T) {
	t.Parallel()
	script := &standin.Script{Responses: []standin.Response{{Text: "one"}}}
	dir, ws, state := workspace(t)
	url, _ := standinURL(t, script)
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--mode", "workspace-write",
		"--provider", "openai", "--base-url", url, "--model", "standin", "--models", "standin,gpt-4.1")
	p.initialize()
	res, _ := p.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	if got, want := configOf(t, res), map[string]string{"mode": "workspace-write", "model": "standin", "reasoning_effort": "medium"}; !maps.Equal(got, want) {
		t.Errorf("session/new config options %v, want %v", got, want)
	}
	var nr struct {
		SessionID string `json:"sessionId"`
		Models    struct {
			CurrentModelID  string `json:"currentModelId"`
			AvailableModels []struct {
				ModelID string `json:"modelId"`
			} `json:"availableModels"`
		} `json:"models"`
	}
	_ = json.Unmarshal(res, &nr)
	sid := nr.SessionID
	if nr.Models.CurrentModelID != "standin" || len(nr.Models.AvailableModels) != 2 {
		t.Errorf("legacy models field %s", res)
	}
	set := func(id, value string) (frame, []frame) {
		return p.await(p.request("session/set_config_option", map[string]any{"sessionId": sid, "configId": id, "value": value}))
	}
	for _, tc := range []struct{ id, value, frag string }{
		{"temperature", "1", `unknown config option \"temperature\"`},
		{"reasoning_effort", "extreme", "offered: low, medium, high"},
		{"mode", "yolo", "yolo"},
		{"model", "gpt-9", "offered: standin, gpt-4.1"},
	} {
		f, _ := set(tc.id, tc.value)
		if f.Error == nil || f.Error.Code != -32602 || !strings.Contains(f.raw, tc.frag) {
			t.Errorf("%s=%s: got %s, want -32602 with %q", tc.id, tc.value, f.raw, tc.frag)
		}
	}
	f, before := set("reasoning_effort", "high")
	if f.Error != nil || configOf(t, f.Result)["reasoning_effort"] != "high" {
		t.Fatalf("setting the effort: %s", f.raw)
	}
	f, more := set("mode", "read-only")
	if f.Error != nil || configOf(t, f.Result)["mode"] != "read-only" {
		t.Fatalf("setting the mode: %s", f.raw)
	}
	modeUpdated := false
	for _, fr := range more {
		if _, kind, _ := fr.update(); kind == "current_mode_update" {
			modeUpdated = true
		}
	}
	if !modeUpdated {
		t.Error("the mode option changed the mode without current_mode_update")
	}
	_, after := p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "workspace-write"})
	ups := configUpdates(t, slices.Concat(before, more, after))
	if len(ups) != 3 || ups[0]["reasoning_effort"] != "high" || ups[1]["mode"] != "read-only" || ups[2]["mode"] != "workspace-write" {
		t.Errorf("config_option_updates %v, want effort high, then mode read-only, then workspace-write from set_mode", ups)
	}
	if stop, _ := p.prompt(sid, "hi"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	var header string
	for _, e := range logEvents(t, state, sid) {
		if e.Type == sessionlog.TypeRequestHeader {
			header = string(e.Data)
		}
	}
	if !strings.Contains(header, `"reasoningEffort":"high"`) {
		t.Errorf("the request header does not carry the effort: %.300s", header)
	}
	_, legacy := p.call("session/set_model", map[string]any{"sessionId": sid, "modelId": "gpt-4.1"})
	if ups := configUpdates(t, legacy); len(ups) != 1 || ups[0]["model"] != "gpt-4.1" {
		t.Errorf("session/set_model: config_option_updates %v, want the model gpt-4.1", ups)
	}
	f, _ = set("reasoning_effort", "low")
	if f.Error == nil || !strings.Contains(f.raw, "takes no reasoning effort") {
		t.Errorf("effort on a model without efforts: %s", f.raw)
	}
}
