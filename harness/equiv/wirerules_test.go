package equiv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestUpdateRulesCoverACP keeps UpdateRules complete: every session/update
// kind of the ACP SDK's union has exactly one rule, and every rule names a
// kind of the union.
func TestUpdateRulesCoverACP(t *testing.T) {
	var kinds []string
	typ := reflect.TypeOf(acp.SessionUpdate{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Pointer {
			continue
		}
		var u acp.SessionUpdate
		v := reflect.New(f.Type.Elem())
		// A chunk's content block does not marshal empty.
		if c := v.Elem().FieldByName("Content"); c.IsValid() && c.Type() == reflect.TypeOf(acp.ContentBlock{}) {
			c.Set(reflect.ValueOf(acp.TextBlock("x")))
		}
		reflect.ValueOf(&u).Elem().Field(i).Set(v)
		b, err := json.Marshal(u)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		var d struct {
			SessionUpdate string `json:"sessionUpdate"`
		}
		if json.Unmarshal(b, &d) != nil || d.SessionUpdate == "" {
			t.Fatalf("%s marshals without a sessionUpdate: %s", f.Name, b)
		}
		kinds = append(kinds, d.SessionUpdate)
	}
	if len(kinds) < 10 {
		t.Fatalf("read %d kinds from the SDK's union: %v", len(kinds), kinds)
	}
	for _, k := range kinds {
		n := 0
		for _, r := range UpdateRules {
			if r.Kind == k {
				n++
			}
		}
		if n != 1 {
			t.Errorf("session/update kind %q has %d rule(s) in UpdateRules, want 1", k, n)
		}
	}
	for _, r := range UpdateRules {
		if !slices.Contains(kinds, r.Kind) {
			t.Errorf("UpdateRules has a rule for %q, which the ACP SDK does not define (it defines %v)", r.Kind, kinds)
		}
		if r.Expected == "" || r.Compared == "" {
			t.Errorf("rule %q does not say where its expectation comes from and what it compares", r.Kind)
		}
	}
}

// TestDocUpdateRules keeps docs/scenarios.md's copy of UpdateRules equal
// to the table; REEL_WRITE_DOC=1 rewrites it.
func TestDocUpdateRules(t *testing.T) {
	checkDocBlock(t, docPath, "session update rules", UpdateRulesMarkdown())
}

// TestUpdateRulesOnFixtures compares reel's own fixtures (log and golden
// transcript) with themselves: every update rule holds on what reel
// really sends, tool calls, diffs, plans, mode switches and titles
// included.
func TestUpdateRulesOnFixtures(t *testing.T) {
	for _, name := range []string{"tool-call-turn", "todo-plan", "read-edit-diff", "sandbox-mode-switch", "title-after-first-turn", "parallel-tool-calls", "cancel", "multi-turn", "escalation-rejected", "hook-cc-pretool-deny"} {
		t.Run(name, func(t *testing.T) {
			want := fixture(t, name)
			r := Compare(want, clone(want), Options{})
			for _, d := range r.Diffs {
				t.Errorf("%s, %s: %s", d.Check, d.Where, d.What)
			}
			for _, u := range r.Unchecked {
				if strings.Contains(u, "wire") {
					t.Errorf("unchecked: %s", u)
				}
			}
		})
	}
}

// TestUpdateRulesCatch changes one thing of reel's wire at a time and
// expects the rule of that update to name it.
func TestUpdateRulesCatch(t *testing.T) {
	// update rewrites the updates of one kind (drop: return nil).
	update := func(kind string, f func(u map[string]any) map[string]any) func(string) []string {
		return func(line string) []string {
			var fr map[string]any
			if json.Unmarshal([]byte(line), &fr) != nil || fr["method"] != "session/update" {
				return []string{line}
			}
			u := fr["params"].(map[string]any)["update"].(map[string]any)
			if u["sessionUpdate"] != kind {
				return []string{line}
			}
			nu := f(u)
			if nu == nil {
				return nil
			}
			fr["params"].(map[string]any)["update"] = nu
			b, _ := json.Marshal(fr)
			return []string{string(b)}
		}
	}
	drop := func(map[string]any) map[string]any { return nil }
	set := func(key string, v any) func(map[string]any) map[string]any {
		return func(u map[string]any) map[string]any { u[key] = v; return u }
	}
	cases := []struct {
		name, fixture string
		edit          func(string) []string
		check, what   string
	}{
		{"tool_call dropped", "tool-call-turn", update("tool_call", drop), "wire tool calls", "announces 0"},
		{"rawInput changed", "tool-call-turn", update("tool_call", set("rawInput", map[string]any{"command": "echo OTHER"})), "wire tool calls", "rawInput"},
		{"no title", "tool-call-turn", update("tool_call", set("title", "")), "wire tool calls", "has no title"},
		{"a kind outside ACP", "tool-call-turn", update("tool_call", set("kind", "shell")), "wire tool calls", `kind "shell"`},
		{"location dropped", "read-edit-diff", update("tool_call", set("locations", []any{})), "wire tool calls", "no location"},
		{"final status dropped", "tool-call-turn", update("tool_call_update", func(u map[string]any) map[string]any {
			if u["status"] == "completed" {
				delete(u, "status")
			}
			return u
		}), "wire tool status", "it ends in_progress, want completed"},
		{"failed for completed", "tool-call-turn", update("tool_call_update", func(u map[string]any) map[string]any {
			if u["status"] == "completed" {
				u["status"] = "failed"
			}
			return u
		}), "wire tool status", "it ends failed, want completed"},
		{"content changed", "tool-call-turn", update("tool_call_update", func(u map[string]any) map[string]any {
			if u["status"] == "completed" {
				u["content"] = []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "OTHER"}}}
			}
			return u
		}), "wire tool content", "is not the result"},
		{"diff dropped", "read-edit-diff", update("tool_call_update", func(u map[string]any) map[string]any {
			if c, ok := u["content"].([]any); ok {
				u["content"] = c[:1]
			}
			return u
		}), "wire tool diff", "sends no diff"},
		{"plan dropped", "todo-plan", update("plan", drop), "wire plans", "sends 0 plan(s)"},
		{"plan entry status", "todo-plan", update("plan", func(u map[string]any) map[string]any {
			for _, e := range u["entries"].([]any) {
				e.(map[string]any)["status"] = "completed"
			}
			return u
		}), "wire plans", "entries"},
		{"mode update dropped", "sandbox-mode-switch", update("current_mode_update", drop), "wire modes", "mode changes"},
		{"title dropped", "title-after-first-turn", update("session_info_update", drop), "wire titles", "titles"},
		{"commands dropped", "tool-call-turn", update("available_commands_update", drop), "wire commands", "want 1"},
		{"usage changed", "tool-call-turn", update("usage_update", set("used", 1)), "wire usage", "used"},
		{"usage dropped", "tool-call-turn", update("usage_update", drop), "wire usage", "used"},
		{"thoughts dropped", "tool-call-turn", update("agent_thought_chunk", drop), "wire thoughts", "leaves the recorded reasoning out"},
		{"config option sent", "tool-call-turn", update("available_commands_update", func(u map[string]any) map[string]any {
			return map[string]any{"sessionUpdate": "config_option_update", "configOptions": []any{}}
		}), "wire config options", "config_option_update frames"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := fixture(t, c.fixture)
			got := clone(want)
			before := string(got.Wire)
			editWire(got, c.edit)
			if string(got.Wire) == before {
				t.Fatalf("the edit changed nothing in %s's transcript", c.fixture)
			}
			r := Compare(want, got, Options{})
			for _, d := range r.Diffs {
				if d.Check == c.check && strings.Contains(d.What, c.what) {
					return
				}
			}
			t.Errorf("want a %q difference naming %q, got:\n%s", c.check, c.what, r)
		})
	}
}

// TestUpdateRulesUnknownKind: an update no rule knows makes the run
// partial, never a pass.
func TestUpdateRulesUnknownKind(t *testing.T) {
	want := fixture(t, "text-turn")
	got := clone(want)
	got.Wire = append(got.Wire, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"brand_new_kind"}}}`+"\n")...)
	r := Compare(want, got, Options{})
	if r.Verdict() != Partial || !strings.Contains(strings.Join(r.Unchecked, "\n"), `"brand_new_kind"`) {
		t.Errorf("verdict %s, want partial naming the kind:\n%s", r.Verdict(), r)
	}
}

// TestUpdateRulesAutomationOnly: the reference's transcript as the side
// under test leaves the updates unchecked (partial), it does not pass.
func TestUpdateRulesAutomationOnly(t *testing.T) {
	want := fixture(t, "text-turn")
	got := clone(want)
	got.AutomationOnly = true
	r := Compare(want, got, Options{})
	if r.Verdict() != Partial {
		t.Errorf("verdict %s, want partial:\n%s", r.Verdict(), r)
	}
}

// fixtureExists keeps the fixture names above honest.
func TestUpdateRulesFixturesExist(t *testing.T) {
	for _, n := range []string{"todo-plan", "read-edit-diff", "sandbox-mode-switch", "title-after-first-turn"} {
		if _, err := os.Stat(filepath.Join("..", "..", "fixtures", n, "session.jsonl")); err != nil {
			t.Error(err)
		}
	}
}
